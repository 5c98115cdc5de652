package proxy

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const upstreamBody = `{"jobs":[{"job_id":1},{"job_id":2}],"meta":{"plugin":{"type":"openapi\/slurmdbd","data_parser":"data_parser\/v0.0.44"}},"errors":[],"warnings":[]}`

// upstream answers every request with upstreamBody and records what it got.
type upstream struct {
	mu   sync.Mutex
	seen []string
}

func (u *upstream) start(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, upstreamBody)
	}))
	t.Cleanup(s.Close)
	return s
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func newProxy(t *testing.T, up string) *HTTP {
	t.Helper()
	p, err := NewHTTP(up)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

type result struct {
	Status int
	Body   string
	Err    string // "" or a substring class: "EOF", "timeout"
}

func get(c *http.Client, url string) result {
	resp, err := c.Get(url)
	if err != nil {
		return result{Err: classify(err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r := result{Status: resp.StatusCode, Body: string(b)}
	if err != nil {
		r.Err = classify(err)
	}
	return r
}

func classify(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "reset"):
		return "cut"
	}
	return err.Error()
}

func TestHTTPFaults(t *testing.T) {
	half := upstreamBody[:len(upstreamBody)/2]
	cases := map[string]struct {
		fault        Fault
		want         result
		wantUpstream int // requests the upstream saw
	}{
		"cut: no answer, not forwarded":      {fault: Cut(), want: result{Err: "cut"}},
		"cut after forward: upstream did it": {fault: CutAfterForward(nil), want: result{Err: "cut"}, wantUpstream: 1},
		"cut body after 10 bytes":            {fault: CutBody(10), want: result{Status: 200, Body: upstreamBody[:10], Err: "cut"}, wantUpstream: 1},
		"status 500":                         {fault: Status(500, `{"errors":[]}`), want: result{Status: 500, Body: `{"errors":[]}`}},
		"truncated JSON, consistent length":  {fault: TruncateJSON(), want: result{Status: 200, Body: half}, wantUpstream: 1},
		"data_parser rewritten": {fault: DataParser("v0.0.42"), wantUpstream: 1,
			want: result{Status: 200, Body: strings.Replace(upstreamBody, `"data_parser":"data_parser\/v0.0.44"`, `"data_parser":"data_parser\/v0.0.42"`, 1)}},
		"slow body arrives whole": {fault: Slow(50*time.Millisecond, 1000), want: result{Status: 200, Body: upstreamBody}, wantUpstream: 1},
		"padded, then slow":       {fault: WithRewrite(PadJSON(3), Slow(0, 1000)), want: result{Status: 200, Body: upstreamBody + "   "}, wantUpstream: 1},
		"huge":                    {fault: Huge(5), want: result{Status: 200, Body: `{"errors":[],"warnings":[],"pad":"xxxxx"}`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &upstream{}
			p := newProxy(t, u.start(t).URL)
			p.Add(&Rule{Fault: tc.fault})
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
			got := get(c, p.URL()+"/slurmdb/v0.0.44/jobs/?a=1")
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if n := len(u.requests()); n != tc.wantUpstream {
				t.Errorf("upstream saw %d requests, want %d", n, tc.wantUpstream)
			}
		})
	}
}

func TestSlurmErrorsKeepsPayload(t *testing.T) {
	u := &upstream{}
	p := newProxy(t, u.start(t).URL)
	p.Add(&Rule{Fault: SlurmErrors(200, SlurmError{Number: 7007, Error: "Too wide of a date range in query"})})
	got := get(http.DefaultClient, p.URL()+"/x")
	var body struct {
		Jobs   []map[string]int `json:"jobs"`
		Errors []SlurmError     `json:"errors"`
	}
	if err := json.Unmarshal([]byte(got.Body), &body); err != nil || got.Status != 200 {
		t.Fatalf("status %d body %q: %v", got.Status, got.Body, err)
	}
	if len(body.Jobs) != 2 || len(body.Errors) != 1 || body.Errors[0].Number != 7007 {
		t.Errorf("body = %+v", body)
	}
}

func TestRuleAfterAndTimes(t *testing.T) {
	u := &upstream{}
	p := newProxy(t, u.start(t).URL)
	r := p.Add(&Rule{Match: Writes("/slurmdb/"), After: 2, Times: 1, Fault: Status(500, "boom")})
	c := http.DefaultClient
	var got []int
	for i := 0; i < 5; i++ {
		req, _ := http.NewRequest(http.MethodPost, p.URL()+"/slurmdb/v0.0.44/qos/", strings.NewReader(`{"n":`+string(rune('0'+i))+`}`))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got = append(got, resp.StatusCode)
		// GETs never match Writes.
		if g := get(c, p.URL()+"/slurmdb/v0.0.44/qos/"); g.Status != 200 {
			t.Fatalf("GET answered %d", g.Status)
		}
	}
	if d := cmp.Diff([]int{200, 200, 500, 200, 200}, got); d != "" {
		t.Errorf("POST statuses (-want +got)\n%s", d)
	}
	if r.Hits() != 1 || p.Stats().Faulted != 1 || p.Stats().Requests != 10 {
		t.Errorf("hits %d, stats %+v", r.Hits(), p.Stats())
	}
	// The POST bodies reached the upstream unchanged (the faulted one did not).
	var posts []string
	for _, s := range u.requests() {
		if strings.HasPrefix(s, "POST") {
			posts = append(posts, s)
		}
	}
	if d := cmp.Diff([]string{"POST /slurmdb/v0.0.44/qos/ {\"n\":0}", "POST /slurmdb/v0.0.44/qos/ {\"n\":1}", "POST /slurmdb/v0.0.44/qos/ {\"n\":3}", "POST /slurmdb/v0.0.44/qos/ {\"n\":4}"}, posts); d != "" {
		t.Errorf("upstream POSTs (-want +got)\n%s", d)
	}
}

func TestSlowFirstByteGivesUpWithTheClient(t *testing.T) {
	u := &upstream{}
	p := newProxy(t, u.start(t).URL)
	p.Add(&Rule{Fault: Slow(30*time.Second, 10240)})
	c := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	got := get(c, p.URL()+"/x")
	if got.Err != "timeout" {
		t.Errorf("got %+v, want a client timeout", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	// The proxy stops waiting when the client leaves: nothing forwarded.
	time.Sleep(100 * time.Millisecond)
	if n := len(u.requests()); n != 0 {
		t.Errorf("upstream saw %d requests after the client left", n)
	}
}

func TestParseFault(t *testing.T) {
	for _, ok := range []string{"cut", "cut-after-forward", "cut-body=100", "slow=30s,10240", "slow=1s", "status=500", "truncate", "errors=7007:Too wide", "errors=1", "data-parser=v0.0.42"} {
		if _, err := ParseFault(ok); err != nil {
			t.Errorf("ParseFault(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "nope", "cut-body=x", "slow=fast", "status=99", "data-parser=42", "errors=-1"} {
		if _, err := ParseFault(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("ParseFault(%q) = %v, want ErrSpec", bad, err)
		}
	}
}

// echo serves TCP connections by echoing everything back.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func newTCP(t *testing.T, target string, mysql bool) *TCP {
	p, err := NewTCP(target, mysql)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestTCPCutAfterBytes(t *testing.T) {
	p := newTCP(t, echo(t), false)
	p.CutAfterBytes(5)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello world")); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if string(b) != "hello" || err == nil && len(b) != 5 {
		t.Errorf("read %q, %v; want the first 5 bytes, then the cut", b, err)
	}
}

func TestTCPResetAll(t *testing.T) {
	p := newTCP(t, echo(t), false)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("x"))
	one := make([]byte, 1)
	if _, err := io.ReadFull(c, one); err != nil {
		t.Fatal(err)
	}
	if n := p.ResetAll(); n != 1 {
		t.Errorf("ResetAll reset %d connections", n)
	}
	if _, err := c.Read(one); err == nil {
		t.Error("read after the reset succeeded")
	}
}

// fakeMySQL reads packets and answers each command packet with a one-byte
// OK packet; it records the commands' text.
type fakeMySQL struct {
	mu   sync.Mutex
	seen []string
}

func (f *fakeMySQL) start(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					var hdr [4]byte
					if _, err := io.ReadFull(r, hdr[:]); err != nil {
						return
					}
					n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
					p := make([]byte, n)
					if _, err := io.ReadFull(r, p); err != nil {
						return
					}
					f.mu.Lock()
					f.seen = append(f.seen, string(p[1:]))
					f.mu.Unlock()
					c.Write(packet(1, []byte{0}))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func (f *fakeMySQL) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func packet(seq byte, payload []byte) []byte {
	b := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint32(b, uint32(len(payload)))
	b[3] = seq
	return append(b, payload...)
}

// exchange sends statements one by one and returns how many got an answer.
func exchange(t *testing.T, addr string, stmts ...string) int {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	answered := 0
	for _, s := range stmts {
		if _, err := c.Write(packet(0, append([]byte{comQuery}, s...))); err != nil {
			return answered
		}
		var hdr [5]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return answered
		}
		answered++
	}
	return answered
}

func TestMySQLStatementReset(t *testing.T) {
	isCommit := func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "COMMIT") }
	stmts := []string{"START TRANSACTION", "INSERT INTO t VALUES (1)", "COMMIT", "SELECT 1"}
	cases := map[string]struct {
		rule         func() *StatementRule
		wantAnswered int
		wantServer   []string
	}{
		"reset before COMMIT: the server never sees it": {
			rule: func() *StatementRule { return &StatementRule{Match: isCommit} }, wantAnswered: 2,
			wantServer: []string{"START TRANSACTION", "INSERT INTO t VALUES (1)"},
		},
		"reset after COMMIT ran, before its answer": {
			rule: func() *StatementRule { return &StatementRule{Match: isCommit, AfterExec: true} }, wantAnswered: 2,
			wantServer: []string{"START TRANSACTION", "INSERT INTO t VALUES (1)", "COMMIT"},
		},
		"second match only": {
			rule: func() *StatementRule {
				return &StatementRule{Match: func(s string) bool { return strings.HasPrefix(s, "S") }, After: 1, Times: 1}
			}, wantAnswered: 3,
			wantServer: []string{"START TRANSACTION", "INSERT INTO t VALUES (1)", "COMMIT"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeMySQL{}
			p := newTCP(t, f.start(t), true)
			rule := p.AddStatementRule(tc.rule())
			if got := exchange(t, p.Addr(), stmts...); got != tc.wantAnswered {
				t.Errorf("%d statements answered, want %d", got, tc.wantAnswered)
			}
			time.Sleep(50 * time.Millisecond) // let the server side read what reached it
			if d := cmp.Diff(tc.wantServer, f.commands()); d != "" {
				t.Errorf("statements the server saw (-want +got)\n%s", d)
			}
			if rule.Hits() != 1 {
				t.Errorf("rule hits = %d", rule.Hits())
			}
		})
	}
}

func TestMySQLLargePacketsPassIntact(t *testing.T) {
	f := &fakeMySQL{}
	p := newTCP(t, f.start(t), true)
	big := "INSERT INTO t VALUES " + strings.Repeat("(1),", 100000) + "(2)"
	if got := exchange(t, p.Addr(), big, "SELECT 1"); got != 2 {
		t.Fatalf("%d answered", got)
	}
	time.Sleep(50 * time.Millisecond)
	if got := f.commands(); len(got) != 2 || got[0] != big {
		t.Errorf("server saw %d commands, first of %d bytes", len(got), len(got[0]))
	}
}
