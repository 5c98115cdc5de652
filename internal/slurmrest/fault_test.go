package slurmrest

// Unit tests of the transport faults the fault suite (test/fault) injects
// for real: answers too large, bodies that stall, a data_parser that is not
// the one asked for, Slurm's size and range refusals, and a clock that
// makes Slurm refuse every minted token.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestAnswerLargerThanMaxBodyBytes(t *testing.T) {
	big := `{"nodes":[],"pad":"` + strings.Repeat("x", 4096) + `"}`
	cases := map[string]http.HandlerFunc{
		"with Content-Length": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) },
		"chunked, no length": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, big[:100])
			w.(http.Flusher).Flush()
			io.WriteString(w, big[100:])
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fake{h: h}
			c := testClient(t, startFake(t, f).URL, func(o *Options) { o.MaxBodyBytes = 1024 })
			_, err := c.ListNodes(context.Background())
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1024 bytes") {
				t.Fatalf("err = %v, want ErrTooLarge naming the limit", err)
			}
			if n := f.attempts.Load(); n != 1 {
				t.Errorf("%d attempts: the same answer would come back, do not retry", n)
			}
		})
	}
}

func TestBodyThatStallsFailsAtReadTimeout(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"nodes":[`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}}
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.Timeout = 10 * time.Second; o.ReadTimeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := c.ListNodes(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no bytes of the answer for 100ms") {
		t.Fatalf("err = %v, want a stall after 100ms", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s: the 10s request timeout was waited for, not the 100ms read timeout", d)
	}
	if n := f.attempts.Load(); n != 3 {
		t.Errorf("%d attempts, want 3 (a stalled read is retried)", n)
	}
}

func TestSlowButSteadyBodyIsNotAStall(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		for _, part := range []string{`{"nodes":`, `[]`, `,"errors":[]}`} {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
	}}
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.Timeout = 5 * time.Second; o.ReadTimeout = 100 * time.Millisecond })
	if _, err := c.ListNodes(context.Background()); err != nil {
		t.Fatalf("a body arriving every 60ms with a 100ms read timeout: %v", err)
	}
}

func TestWrongDataParserIsRefused(t *testing.T) {
	answer := func(v string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"nodes":[{"name":"n1"}],"meta":{"plugin":{"type":"openapi\/slurmctld","data_parser":"data_parser\/%s"}},"errors":[],"warnings":[]}`, v)
		}
	}
	t.Run("same version", func(t *testing.T) {
		c := testClient(t, startFake(t, &fake{h: answer("v0.0.44")}).URL, func(o *Options) { o.APIVersion = V44 })
		if nodes, err := c.ListNodes(context.Background()); err != nil || len(nodes) != 1 {
			t.Fatalf("ListNodes = %v, %v", nodes, err)
		}
	})
	t.Run("other version", func(t *testing.T) {
		f := &fake{h: answer("v0.0.42")}
		c := testClient(t, startFake(t, f).URL, func(o *Options) { o.APIVersion = V44 })
		nodes, err := c.ListNodes(context.Background())
		if !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "data_parser v0.0.42, not the v0.0.44") || nodes != nil {
			t.Fatalf("ListNodes = %v, %v; want ErrUnsupportedVersion naming both versions and no nodes", nodes, err)
		}
		if n := f.attempts.Load(); n != 1 {
			t.Errorf("%d attempts", n)
		}
	})
}

func TestSlurmSizeAndRangeRefusals(t *testing.T) {
	cases := map[string]struct {
		number int
		is     error
	}{
		"7006 result too large": {7006, ErrTooLarge},
		"7007 too wide":         {7007, ErrQueryTooWide},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
				fmt.Fprintf(w, `{"jobs":[],"errors":[{"error_number":%d,"error":"refused","source":"slurmdb_jobs_get"}]}`, tc.number)
			}}
			c := testClient(t, startFake(t, f).URL, nil)
			_, err := c.ListDBJobs(context.Background(), DBJobFilter{Start: time.Unix(1, 0), End: time.Unix(2, 0)})
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
		})
	}
}

// clockFake is a slurmrestd whose clock is ahead of the client's: like
// slurmctld and slurmdbd, it refuses tokens whose exp has passed by its
// clock (511/1007 on /slurm/, 502/7000 on /slurmdb/), and diag reports
// its time.
func clockFake(t *testing.T, ahead time.Duration, writes *atomic.Int64) *fake {
	return &fake{h: func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().Add(ahead)
		var mc jwt.MapClaims
		_, err := jwt.ParseWithClaims(r.Header.Get("X-SLURM-USER-TOKEN"), &mc, func(*jwt.Token) (any, error) { return []byte(testKey), nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithoutClaimsValidation())
		exp, _ := mc["exp"].(float64)
		if err != nil || int64(exp) <= now.Unix() {
			if strings.HasPrefix(r.URL.Path, "/slurmdb/") {
				w.WriteHeader(502)
				io.WriteString(w, `{"errors":[{"error_number":7000,"error":"Unable to connect to database","source":"slurmdb"}]}`)
				return
			}
			w.WriteHeader(511)
			io.WriteString(w, `{"errors":[{"error_number":1007,"error":"Protocol authentication error","source":"x"}]}`)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/diag/"):
			fmt.Fprintf(w, `{"statistics":{"req_time":{"set":true,"infinite":false,"number":%d}},"errors":[]}`, now.Unix())
		case r.Method != http.MethodGet:
			writes.Add(1)
			io.WriteString(w, `{"errors":[]}`)
		default:
			io.WriteString(w, `{"nodes":[],"qos":[],"errors":[]}`)
		}
	}}
}

func TestClockBehindSlurmIsCorrected(t *testing.T) {
	var applied atomic.Int64
	f := clockFake(t, 10*time.Minute, &applied)
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.TokenLifetime = 5 * time.Minute })
	before := c.Stats()
	if _, err := c.ListNodes(context.Background()); err != nil {
		t.Fatalf("ListNodes with the local clock 10 minutes behind: %v", err)
	}
	if got := c.Stats().Reads - before.Reads; got != 3 {
		t.Errorf("%d reads, want 3 (refused, diag, retried)", got)
	}
	// From now on tokens are minted by the server's clock: no more probes.
	before = c.Stats()
	if _, err := c.ListQOS(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.SetQOS(context.Background(), []QOSSpec{{Name: "q", PreemptMode: []string{"REQUEUE"}}}); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Reads-before.Reads != 1 || st.Writes-before.Writes != 1 {
		t.Errorf("after the correction: %+v -> %+v, want one read and one write", before, st)
	}
}

func TestClockCorrectionRetriesARefusedWriteOnce(t *testing.T) {
	var applied atomic.Int64
	f := clockFake(t, 10*time.Minute, &applied)
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.TokenLifetime = 5 * time.Minute })
	if err := c.CancelJob(context.Background(), 7); err != nil {
		t.Fatalf("CancelJob: %v", err)
	}
	if applied.Load() != 1 {
		t.Errorf("the write was applied %d times, want once", applied.Load())
	}
	if st := c.Stats(); st.Writes != 2 {
		t.Errorf("writes = %d, want 2 (refused, then retried after the correction)", st.Writes)
	}
}

func TestNoClockCorrection(t *testing.T) {
	var applied atomic.Int64
	f := clockFake(t, 10*time.Minute, &applied)
	c := testClient(t, startFake(t, f).URL, func(o *Options) { o.TokenLifetime = 5 * time.Minute; o.NoClockCorrection = true })
	if _, err := c.ListNodes(context.Background()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
}

func TestClockInStepIsNotCorrected(t *testing.T) {
	// A token refused for another reason (the clocks agree): one probe,
	// no retry, and the error is Slurm's.
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/diag/") {
			fmt.Fprintf(w, `{"statistics":{"req_time":{"set":true,"number":%d}},"errors":[]}`, time.Now().Unix())
			return
		}
		w.WriteHeader(511)
		io.WriteString(w, `{"errors":[{"error_number":1007,"error":"Protocol authentication error"}]}`)
	}}
	c := testClient(t, startFake(t, f).URL, nil)
	if _, err := c.ListNodes(context.Background()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v, want ErrUnauthorized", err)
	}
	if n := f.attempts.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (the refused one and diag)", n)
	}
}

// ListJobsSince decodes its own stream; it refuses another data_parser and
// corrects the clock like every other call.
func TestListJobsSinceFaults(t *testing.T) {
	t.Run("other data_parser", func(t *testing.T) {
		f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"jobs":[],"meta":{"plugin":{"data_parser":"data_parser\/v0.0.42"}},"errors":[],"warnings":[]}`)
		}}
		c := testClient(t, startFake(t, f).URL, func(o *Options) { o.APIVersion = V44 })
		if _, err := c.ListJobsSince(context.Background(), JobFilter{}, time.Time{}); !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("err = %v, want ErrUnsupportedVersion", err)
		}
	})
	t.Run("clock behind", func(t *testing.T) {
		var applied atomic.Int64
		f := clockFake(t, 10*time.Minute, &applied)
		c := testClient(t, startFake(t, f).URL, func(o *Options) { o.TokenLifetime = 5 * time.Minute })
		if _, err := c.ListJobsSince(context.Background(), JobFilter{}, time.Time{}); err != nil {
			t.Fatalf("ListJobsSince with the local clock 10 minutes behind: %v", err)
		}
	})
}
