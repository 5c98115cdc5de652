package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTP is a fault-injecting reverse proxy in front of one upstream server.
// Requests that no rule picks are forwarded unchanged. It is safe for
// concurrent use; rules may be added and cleared while it runs.
type HTTP struct {
	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	client   *http.Client

	mu    sync.Mutex
	rules []*Rule

	requests, forwarded, faulted atomic.Int64
}

// Rule picks the requests a fault answers.
type Rule struct {
	// Match selects requests; nil selects every request.
	Match func(*http.Request) bool
	// After is how many matching requests pass unharmed before the fault
	// starts (k of "after k requests").
	After int
	// Times is how many matching requests the fault then answers; 0 is
	// every one.
	Times int
	// Fault answers the picked requests.
	Fault Fault

	seen, hits atomic.Int64
}

// Hits is how many requests the rule's fault has answered.
func (r *Rule) Hits() int64 { return r.hits.Load() }

// pick counts a matching request and reports whether the fault applies.
func (r *Rule) pick() bool {
	n := r.seen.Add(1)
	if n <= int64(r.After) {
		return false
	}
	if r.Times > 0 && n > int64(r.After+r.Times) {
		return false
	}
	r.hits.Add(1)
	return true
}

// Fault answers one request. up forwards the request (its body already
// buffered) and returns the upstream's response with the body read.
type Fault func(w http.ResponseWriter, r *http.Request, up Upstream)

// Upstream forwards the request being served.
type Upstream func() (*Response, error)

// Response is an upstream answer, body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Methods matches requests by method (any of them) and path prefix ("" for
// any path).
func Methods(prefix string, methods ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if prefix != "" && !strings.HasPrefix(r.URL.Path, prefix) {
			return false
		}
		if len(methods) == 0 {
			return true
		}
		for _, m := range methods {
			if r.Method == m {
				return true
			}
		}
		return false
	}
}

// Writes matches every request that is not a GET (or HEAD) under prefix.
func Writes(prefix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method != http.MethodGet && r.Method != http.MethodHead && strings.HasPrefix(r.URL.Path, prefix)
	}
}

// NewHTTP starts a proxy for upstream (e.g. http://127.0.0.1:6820) on a
// free port of 127.0.0.1.
func NewHTTP(upstream string) (*HTTP, error) {
	return NewHTTPOn("127.0.0.1:0", upstream)
}

// NewHTTPOn is NewHTTP on a given listen address.
func NewHTTPOn(listen, upstream string) (*HTTP, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("proxy: upstream %q is not an http(s) URL", upstream)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: listen: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	p := &HTTP{upstream: u, ln: ln, client: &http.Client{Transport: tr}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln) //nolint:errcheck // ends with Close
	return p, nil
}

// URL is the proxy's base URL, to give gpubridge instead of the upstream's.
func (p *HTTP) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy and drops its connections.
func (p *HTTP) Close() error {
	p.client.CloseIdleConnections()
	return p.srv.Close()
}

// Add installs a rule (rules are tried in order; the first that picks a
// request answers it) and returns it, to read its hits.
func (p *HTTP) Add(r *Rule) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, r)
	return r
}

// Clear removes every rule: from now on everything is forwarded.
func (p *HTTP) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// HTTPStats counts what the proxy saw.
type HTTPStats struct {
	Requests  int64 // received
	Forwarded int64 // sent upstream (by a fault or unchanged)
	Faulted   int64 // answered by a fault
}

// Stats returns the counters.
func (p *HTTP) Stats() HTTPStats {
	return HTTPStats{Requests: p.requests.Load(), Forwarded: p.forwarded.Load(), Faulted: p.faulted.Load()}
}

// ServeHTTP implements http.Handler.
func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "proxy: read request: "+err.Error(), http.StatusBadGateway)
		return
	}
	up := func() (*Response, error) { return p.forward(r, body) }
	p.mu.Lock()
	var f Fault
	for _, rule := range p.rules {
		if (rule.Match == nil || rule.Match(r)) && rule.pick() {
			f = rule.Fault
			break
		}
	}
	p.mu.Unlock()
	if f != nil {
		p.faulted.Add(1)
		f(w, r, up)
		return
	}
	resp, err := up()
	if err != nil {
		http.Error(w, "proxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	writeResponse(w, resp)
}

func (p *HTTP) forward(r *http.Request, body []byte) (*Response, error) {
	p.forwarded.Add(1)
	u := *p.upstream
	u.Path, u.RawPath = r.URL.Path, r.URL.RawPath
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if hopHeader(k) {
			continue
		}
		req.Header[k] = vs
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func hopHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Accept-Encoding":
		return true
	}
	return false
}

func writeResponse(w http.ResponseWriter, resp *Response) {
	for k, vs := range resp.Header {
		if hopHeader(k) {
			continue
		}
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	w.Write(resp.Body) //nolint:errcheck // the client may be gone
}

// hijack takes the connection over; nil when the server cannot.
func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil
	}
	c, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil
	}
	return c, rw
}

// reset closes a connection with a TCP reset where possible.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0) //nolint:errcheck // best effort
	}
	c.Close()
}

// Cut closes the connection without an answer and without forwarding: the
// request never reaches the upstream.
func Cut() Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		if c, _ := hijack(w); c != nil {
			reset(c)
		}
	}
}

// CutAfterForward forwards the request, calls then (if not nil; e.g. to
// kill the upstream), and closes the connection without relaying the
// answer: the upstream did the work, the client cannot know.
func CutAfterForward(then func()) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		_, _ = up()
		if then != nil {
			then()
		}
		if c, _ := hijack(w); c != nil {
			reset(c)
		}
	}
}

// CutBody forwards the request and relays the status, the headers (with
// the full Content-Length) and the first n bytes of the body, then closes
// the connection.
func CutBody(n int) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		resp, err := up()
		c, rw := hijack(w)
		if c == nil {
			return
		}
		defer reset(c)
		if err != nil {
			return
		}
		writeRawHead(rw.Writer, resp, len(resp.Body))
		rw.Write(resp.Body[:min(n, len(resp.Body))]) //nolint:errcheck // the cut is the point
		rw.Flush()                                   //nolint:errcheck
	}
}

func writeRawHead(w *bufio.Writer, resp *Response, length int) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\n", resp.Status, http.StatusText(resp.Status))
	for k, vs := range resp.Header {
		if hopHeader(k) {
			continue
		}
		for _, v := range vs {
			fmt.Fprintf(w, "%s: %s\r\n", k, v)
		}
	}
	fmt.Fprintf(w, "Content-Length: %d\r\nConnection: close\r\n\r\n", length)
}

// Slow waits firstByte before the answer starts (not forwarding until
// then), then sends the upstream's body at bytesPerSec (0: at once). It
// stops when the client goes away.
func Slow(firstByte time.Duration, bytesPerSec int) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		if !sleep(r.Context(), firstByte) {
			return
		}
		resp, err := up()
		if err != nil {
			http.Error(w, "proxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		for k, vs := range resp.Header {
			if !hopHeader(k) {
				w.Header()[k] = vs
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
		w.WriteHeader(resp.Status)
		if bytesPerSec <= 0 {
			w.Write(resp.Body) //nolint:errcheck
			return
		}
		fl, _ := w.(http.Flusher)
		const tick = 100 * time.Millisecond
		chunk := max(1, bytesPerSec/10)
		for b := resp.Body; len(b) > 0; {
			n := min(chunk, len(b))
			if _, err := w.Write(b[:n]); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
			b = b[n:]
			if len(b) > 0 && !sleep(r.Context(), tick) {
				return
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Status answers with code and body without forwarding.
func Status(code int, body string) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		if strings.HasPrefix(strings.TrimSpace(body), "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(code)
		io.WriteString(w, body) //nolint:errcheck
	}
}

// TruncateJSON forwards and relays the first half of the body with a
// matching Content-Length: a complete HTTP answer whose JSON ends early.
func TruncateJSON() Fault {
	return Rewrite(func(resp *Response) { resp.Body = resp.Body[:len(resp.Body)/2] })
}

// Rewrite forwards and relays the answer after fn changed it.
func Rewrite(fn func(*Response)) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		resp, err := up()
		if err != nil {
			http.Error(w, "proxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		fn(resp)
		writeResponse(w, resp)
	}
}

// SlurmError is one entry of slurmrestd's errors[].
type SlurmError struct {
	Number      int    `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
	Description string `json:"description"`
}

// SlurmErrors forwards and relays the upstream's JSON with its errors[]
// replaced by errs and the status set to status (200: a success status
// with errors, as slurmrestd sometimes answers).
func SlurmErrors(status int, errs ...SlurmError) Fault {
	return Rewrite(func(resp *Response) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(resp.Body, &obj) != nil {
			obj = map[string]json.RawMessage{}
		}
		b, _ := json.Marshal(errs)
		obj["errors"] = b
		resp.Body, _ = json.Marshal(obj)
		resp.Status = status
		resp.Header.Set("Content-Type", "application/json")
	})
}

var dataParser = regexp.MustCompile(`"data_parser"\s*:\s*"data_parser(\\?/)v[0-9.]+"`)

// DataParser forwards and relays the answer with its advertised
// meta.plugin.data_parser rewritten to version (e.g. v0.0.42).
func DataParser(version string) Fault {
	return Rewrite(func(resp *Response) {
		resp.Body = dataParser.ReplaceAll(resp.Body, []byte(`"data_parser":"data_parser${1}`+version+`"`))
	})
}

// WithRewrite lets f answer with the upstream's response changed by fn
// first (e.g. WithRewrite(PadJSON(n), Slow(0, bps)): a large answer over a
// slow link).
func WithRewrite(fn func(*Response), f Fault) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		f(w, r, func() (*Response, error) {
			resp, err := up()
			if err == nil {
				fn(resp)
			}
			return resp, err
		})
	}
}

// PadJSON appends n spaces to a body (still the same JSON).
func PadJSON(n int) func(*Response) {
	return func(resp *Response) { resp.Body = append(resp.Body, bytes.Repeat([]byte(" "), n)...) }
}

// Huge answers, without forwarding, with a valid JSON object of about n
// bytes (its "pad" field), streamed so that the proxy itself stays small.
func Huge(n int64) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		const head, tail = `{"errors":[],"warnings":[],"pad":"`, `"}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.FormatInt(int64(len(head))+n+int64(len(tail)), 10))
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for left := n; left > 0; {
			k := min(left, int64(len(chunk)))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			left -= k
		}
		io.WriteString(w, tail) //nolint:errcheck
	}
}

// Respond answers with h, without forwarding (h may call nothing upstream).
func Respond(h http.HandlerFunc) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) { h(w, r) }
}

// Before calls fn with the request, then lets f answer it.
func Before(fn func(*http.Request), f Fault) Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		fn(r)
		f(w, r, up)
	}
}

// Forward passes the request through unchanged (with Before: a hook only).
func Forward() Fault {
	return func(w http.ResponseWriter, r *http.Request, up Upstream) {
		resp, err := up()
		if err != nil {
			http.Error(w, "proxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		writeResponse(w, resp)
	}
}

// ErrSpec is returned by ParseFault for a spec it cannot read.
var ErrSpec = errors.New("fault spec")

// ParseFault reads a fault from a short spec (for cmd/faultproxy):
//
//	cut                     close without an answer
//	cut-after-forward       forward, then close without the answer
//	cut-body=N              relay N bytes of the body, then close
//	slow=FIRST[,BPS]        first byte after FIRST (a Go duration), body at BPS bytes/s
//	status=CODE             answer CODE with a Slurm-like error body
//	truncate                half of the JSON body
//	errors=NUM[:TEXT]       HTTP 200 with errors[] = [{NUM, TEXT}]
//	data-parser=VERSION     advertise data_parser VERSION
func ParseFault(spec string) (Fault, error) {
	name, arg, _ := strings.Cut(spec, "=")
	atoi := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%w %q: %q is not a count", ErrSpec, spec, s)
		}
		return n, nil
	}
	switch name {
	case "cut":
		return Cut(), nil
	case "cut-after-forward":
		return CutAfterForward(nil), nil
	case "cut-body":
		n, err := atoi(arg)
		if err != nil {
			return nil, err
		}
		return CutBody(n), nil
	case "slow":
		first, bps, _ := strings.Cut(arg, ",")
		d, err := time.ParseDuration(first)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSpec, spec, err)
		}
		n := 0
		if bps != "" {
			if n, err = atoi(bps); err != nil {
				return nil, err
			}
		}
		return Slow(d, n), nil
	case "status":
		code, err := atoi(arg)
		if err != nil || code < 100 || code > 599 {
			return nil, fmt.Errorf("%w %q: want an HTTP status", ErrSpec, spec)
		}
		b, _ := json.Marshal(map[string]any{"errors": []SlurmError{{Number: 1, Error: "injected by faultproxy", Source: "faultproxy"}}})
		return Status(code, string(b)), nil
	case "truncate":
		return TruncateJSON(), nil
	case "errors":
		num, text, _ := strings.Cut(arg, ":")
		n, err := atoi(num)
		if err != nil {
			return nil, err
		}
		if text == "" {
			text = "injected by faultproxy"
		}
		return SlurmErrors(http.StatusOK, SlurmError{Number: n, Error: text, Source: "faultproxy"}), nil
	case "data-parser":
		if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(arg) {
			return nil, fmt.Errorf("%w %q: want a version such as v0.0.42", ErrSpec, spec)
		}
		return DataParser(arg), nil
	}
	return nil, fmt.Errorf("%w %q: unknown fault (cut, cut-after-forward, cut-body=N, slow=D[,BPS], status=CODE, truncate, errors=NUM[:TEXT], data-parser=V)", ErrSpec, spec)
}
