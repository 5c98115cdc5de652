package api

import (
	"fmt"
	"net/http"
	"time"
)

// timed answers with a Server-Timing header ("app;dur=MS") giving the
// handler's own time: from the moment the server hands the request to
// the handler to the moment the handler sends its status (pages and
// answers are rendered into a buffer before that). It leaves out the
// time in the kernel's and the client's queues and the body's transfer:
// what test/bench/portal.sh measures against the portal's goal.
func timed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&timingWriter{ResponseWriter: w, start: time.Now()}, r)
	})
}

type timingWriter struct {
	http.ResponseWriter
	start time.Time
	sent  bool
}

func (t *timingWriter) WriteHeader(code int) {
	if !t.sent {
		t.sent = true
		d := time.Since(t.start)
		t.Header().Set("Server-Timing", fmt.Sprintf("app;dur=%.3f", float64(d.Microseconds())/1000))
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *timingWriter) Write(b []byte) (int, error) {
	if !t.sent {
		t.WriteHeader(http.StatusOK)
	}
	return t.ResponseWriter.Write(b)
}

// Flush lets a stream (the event stream) through the wrapper.
func (t *timingWriter) Flush() {
	if !t.sent {
		t.WriteHeader(http.StatusOK)
	}
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (t *timingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
