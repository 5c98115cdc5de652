package slurmrest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testKey = "0123456789abcdef0123456789abcdef-test-key"

func keyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jwt_hs256.key")
	if err := os.WriteFile(p, []byte(testKey), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const pingOK = `{"pings":[{"hostname":"ctl","pinged":"UP","responding":true,"latency":900,"mode":"primary","primary":true}],
"meta":{"slurm":{"version":{"major":"26","minor":"05","micro":"5"},"release":"26.05.5","cluster":"fake"}},"errors":[],"warnings":[]}`

// fake is an httptest slurmrestd for error paths: it answers the version
// probe for the versions it offers and hands every other request to h.
type fake struct {
	offers   []string
	h        http.HandlerFunc
	attempts atomic.Int64 // requests that reached h
	mu       sync.Mutex
	tokens   []string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokens = append(f.tokens, r.Header.Get("X-SLURM-USER-TOKEN"))
	f.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/ping/") && strings.HasPrefix(r.URL.Path, "/slurm/") {
		for _, v := range f.offers {
			if r.URL.Path == "/slurm/"+v+"/ping/" {
				io.WriteString(w, pingOK)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Unable to find requested URL endpoint.")
		return
	}
	if r.URL.Path == "/openapi/v3" {
		paths := map[string]any{}
		for _, v := range f.offers {
			paths["/slurm/"+v+"/ping/"] = map[string]any{}
			paths["/slurmdb/"+v+"/qos/"] = map[string]any{}
		}
		json.NewEncoder(w).Encode(map[string]any{"openapi": "3.0.2", "paths": paths})
		return
	}
	f.attempts.Add(1)
	if f.h == nil {
		http.NotFound(w, r)
		return
	}
	f.h(w, r)
}

func startFake(t *testing.T, f *fake) *httptest.Server {
	t.Helper()
	if f.offers == nil {
		f.offers = []string{"v0.0.43", "v0.0.44"}
	}
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s
}

func testClient(t *testing.T, url string, mod func(*Options)) *Client {
	t.Helper()
	o := Options{URL: url, JWTKeyFile: keyFile(t), Timeout: 300 * time.Millisecond, RetryBackoff: time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	c, err := New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestErrorPaths(t *testing.T) {
	type want struct {
		Status   int // HTTPStatus of the *SlurmError; 0 = no SlurmError expected
		Numbers  []int
		Attempts int64
		is       error  // sentinel errors.Is must match, or nil
		contains string // in the message
	}
	cases := map[string]struct {
		h    http.HandlerFunc
		want want
		// fresh disables keep-alive: Go's transport itself replays a GET
		// once when a reused connection is closed, which would add a
		// server-side attempt that Stats (rightly) does not count.
		fresh bool
		// mod adjusts the client's options.
		mod func(*Options)
	}{
		"200 with errors[] is a failure, not retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"nodes":[],"errors":[{"error_number":2017,"error":"Invalid job id specified","source":"x","description":"d"}],"warnings":[]}`)
			},
			want: want{Status: 200, Numbers: []int{2017}, is: ErrNotFound, Attempts: 1, contains: "Invalid job id specified"},
		},
		"500 with errors[] is Slurm's answer, not retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
				io.WriteString(w, `{"errors":[{"error_number":9001,"error":"Unable to query","source":"_dump_nodes","description":"Failure"}]}`)
			},
			want: want{Status: 500, Numbers: []int{9001}, Attempts: 1, contains: "Unable to query: Failure (error 9001) [_dump_nodes]"},
		},
		"500 with a non-JSON body is retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(500)
				io.WriteString(w, "<html>proxy error</html>")
			},
			want: want{Status: 500, Attempts: 3, contains: "proxy error"},
		},
		"truncated JSON is retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"nodes":[{"name":"gpu-a","gres":"gpu:h1`)
			},
			want: want{Status: 200, Attempts: 3, contains: "not slurmrestd JSON"},
		},
		"slow body exceeding the timeout is retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"nodes":[`)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Second):
				}
			},
			want: want{Attempts: 3, is: context.DeadlineExceeded, contains: "no complete answer within 300ms"},
		},
		"closed connection is retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			},
			want:  want{Attempts: 3, contains: "EOF"},
			fresh: true,
		},
		"404 is ErrNotFound": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(404)
				io.WriteString(w, "Unable to find requested URL endpoint.")
			},
			want: want{Status: 404, is: ErrNotFound, Attempts: 1},
		},
		"401 is ErrUnauthorized": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(401)
				io.WriteString(w, "Authentication failure")
			},
			want: want{Status: 401, is: ErrUnauthorized, Attempts: 1},
		},
		"511 with error 1007 (expired token) is ErrUnauthorized": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(511)
				io.WriteString(w, `{"errors":[{"description":"Failure to query nodes","error_number":1007,"error":"Protocol authentication error","source":"_dump_nodes"}]}`)
			},
			want: want{Status: 511, Numbers: []int{1007}, is: ErrUnauthorized, Attempts: 1},
			// (With clock correction, a refused token makes the client
			// read slurmctld's clock first: TestClockInStepIsNotCorrected.)
			mod: func(o *Options) { o.NoClockCorrection = true },
		},
		"503 is retried": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(503)
				io.WriteString(w, `{"errors":[{"error_number":1,"error":"busy"}]}`)
			},
			want: want{Status: 503, Numbers: []int{1}, Attempts: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fake{h: tc.h}
			s := startFake(t, f)
			c := testClient(t, s.URL, func(o *Options) {
				if tc.fresh {
					o.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
				}
				if tc.mod != nil {
					tc.mod(o)
				}
			})
			before := c.Stats()
			start := time.Now()
			_, err := c.ListNodes(context.Background())
			if err == nil {
				t.Fatal("ListNodes succeeded; want an error")
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
			var se *SlurmError
			got := want{Attempts: f.attempts.Load(), is: tc.want.is, contains: tc.want.contains}
			if errors.As(err, &se) {
				got.Status = se.HTTPStatus
				for _, d := range se.Errors {
					got.Numbers = append(got.Numbers, d.Number)
				}
			}
			if tc.want.is != nil && !errors.Is(err, tc.want.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.want.is)
			}
			if !strings.Contains(err.Error(), tc.want.contains) {
				t.Errorf("error %q does not contain %q", err, tc.want.contains)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s\nerror: %v", diff, err)
			}
			if reads := c.Stats().Reads - before.Reads; reads != tc.want.Attempts {
				t.Errorf("Stats().Reads grew by %d, want %d (every attempt counts)", reads, tc.want.Attempts)
			}
		})
	}
}

func TestRetriesOnlyOnGET(t *testing.T) {
	cases := map[string]struct {
		call      func(*Client) error
		failFirst int // requests answered 503 before success
		wantErr   bool
		attempts  int64
		writes    int64
	}{
		"GET retried until success": {
			call:      func(c *Client) error { _, err := c.ListQOS(context.Background()); return err },
			failFirst: 2, attempts: 3,
		},
		"GET gives up after Retries": {
			call:      func(c *Client) error { _, err := c.ListQOS(context.Background()); return err },
			failFirst: 10, wantErr: true, attempts: 3,
		},
		"POST never retried": {
			call: func(c *Client) error {
				return c.SetQOS(context.Background(), []QOSSpec{{Name: "x", PreemptMode: []string{"REQUEUE"}}})
			},
			failFirst: 1, wantErr: true, attempts: 1, writes: 1,
		},
		"DELETE never retried": {
			call:      func(c *Client) error { return c.CancelJob(context.Background(), 7) },
			failFirst: 1, wantErr: true, attempts: 1, writes: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int64
			f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= int64(tc.failFirst) {
					w.WriteHeader(503)
					io.WriteString(w, "busy")
					return
				}
				io.WriteString(w, `{"qos":[],"errors":[],"warnings":[]}`)
			}}
			s := startFake(t, f)
			c := testClient(t, s.URL, nil)
			before := c.Stats()
			err := tc.call(c)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got := f.attempts.Load(); got != tc.attempts {
				t.Errorf("attempts = %d, want %d", got, tc.attempts)
			}
			if got := c.Stats().Writes - before.Writes; got != tc.writes {
				t.Errorf("writes = %d, want %d", got, tc.writes)
			}
		})
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, func(o *Options) { o.Retries = 50; o.RetryBackoff = 50 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.ListNodes(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s after the context ended", d)
	}
	if a := f.attempts.Load(); a > 5 {
		t.Errorf("%d attempts; the cancelled context should stop retrying", a)
	}
}

func TestVersionNegotiation(t *testing.T) {
	cases := map[string]struct {
		offers  []string
		pin     string
		want    string
		wantErr string
	}{
		"both: prefers v0.0.44":      {offers: []string{"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"}, want: "v0.0.44"},
		"only v0.0.43 (Slurm 25.05)": {offers: []string{"v0.0.40", "v0.0.41", "v0.0.42", "v0.0.43"}, want: "v0.0.43"},
		"pinned v0.0.43":             {offers: []string{"v0.0.43", "v0.0.44"}, pin: "v0.0.43", want: "v0.0.43"},
		"neither (Slurm 24.11)": {offers: []string{"v0.0.40", "v0.0.41", "v0.0.42"},
			wantErr: "offers data_parser v0.0.40, v0.0.41, v0.0.42; gpubridge needs v0.0.44 or v0.0.43"},
		"pinned but not offered": {offers: []string{"v0.0.42", "v0.0.44"}, pin: "v0.0.43",
			wantErr: "offers data_parser v0.0.42, v0.0.44; gpubridge needs v0.0.43"},
		"unknown pin": {offers: []string{"v0.0.44"}, pin: "v0.0.41", wantErr: `API version "v0.0.41"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := startFake(t, &fake{offers: tc.offers})
			c, err := New(context.Background(), Options{URL: s.URL, JWTKeyFile: keyFile(t), APIVersion: tc.pin, Timeout: time.Second})
			if tc.wantErr != "" {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("err = %v, want ErrUnsupportedVersion", err)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not contain %q", err, tc.wantErr)
				}
				if tc.pin != "v0.0.41" && !strings.Contains(err.Error(), s.URL) {
					t.Errorf("error %q does not name the URL", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.APIVersion()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.Cluster() != "fake" {
				t.Errorf("Cluster() = %q, want the cluster from ping's meta", c.Cluster())
			}
		})
	}
}

func TestSilentServerFailsWithinTimeout(t *testing.T) {
	block := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(block); s.Close() })
	start := time.Now()
	_, err := New(context.Background(), Options{URL: s.URL, JWTKeyFile: keyFile(t), Timeout: 400 * time.Millisecond, RetryBackoff: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), s.URL) || !strings.Contains(err.Error(), "no answer within 400ms") {
		t.Errorf("err = %v, want no answer within 400ms naming %s", err, s.URL)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("New took %s with a 400ms timeout", d)
	}
}

func TestClusterMismatch(t *testing.T) {
	s := startFake(t, &fake{})
	_, err := New(context.Background(), Options{URL: s.URL, JWTKeyFile: keyFile(t), Cluster: "cluster"})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `serves cluster "fake"`) {
		t.Errorf("err = %v, want ErrInvalid naming the served cluster", err)
	}
}

func TestUnreachableFailsWithinTimeout(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close() // nothing listens there now
	start := time.Now()
	_, err := New(context.Background(), Options{URL: url, JWTKeyFile: keyFile(t), Timeout: 500 * time.Millisecond, RetryBackoff: time.Millisecond})
	if err == nil {
		t.Fatal("New succeeded against a closed port")
	}
	if !strings.Contains(err.Error(), url) {
		t.Errorf("error %q does not name %s", err, url)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

type claims struct {
	Sun string `json:"sun"`
	Iat int64  `json:"iat"`
	Exp int64  `json:"exp"`
}

func parseClaims(t *testing.T, tok string) claims {
	t.Helper()
	var mc jwt.MapClaims
	p, err := jwt.ParseWithClaims(tok, &mc, func(*jwt.Token) (any, error) { return []byte(testKey), nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithoutClaimsValidation())
	if err != nil || !p.Valid {
		t.Fatalf("token does not verify with the key: %v", err)
	}
	b, _ := json.Marshal(mc)
	var c claims
	json.Unmarshal(b, &c)
	return c
}

func TestTokenRefreshBeforeExp(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"nodes":[]}`) }}
	s := startFake(t, f)
	t0 := time.Unix(1_800_000_000, 0)
	var now atomic.Int64
	now.Store(t0.Unix())
	c := testClient(t, s.URL, func(o *Options) {
		o.TokenLifetime = 9 * time.Minute
		o.Now = func() time.Time { return time.Unix(now.Load(), 0) }
	})
	last := func() string { f.mu.Lock(); defer f.mu.Unlock(); return f.tokens[len(f.tokens)-1] }
	call := func(cl *Client, at time.Duration) claims {
		now.Store(t0.Add(at).Unix())
		if _, err := cl.ListNodes(context.Background()); err != nil {
			t.Fatal(err)
		}
		return parseClaims(t, last())
	}
	first := call(c, 0)
	if diff := cmp.Diff(claims{Sun: "root", Iat: t0.Unix(), Exp: t0.Add(9 * time.Minute).Unix()}, first); diff != "" {
		t.Errorf("first token (-want +got):\n%s", diff)
	}
	if got := call(c, 5*time.Minute); got != first {
		t.Errorf("token renewed with 4m of 9m left: %+v", got)
	}
	renewed := call(c, 7*time.Minute) // 2m left < 9m/3
	if want := (claims{Sun: "root", Iat: t0.Add(7 * time.Minute).Unix(), Exp: t0.Add(16 * time.Minute).Unix()}); renewed != want {
		t.Errorf("renewed token = %+v, want %+v", renewed, want)
	}
	if got := call(c.As("alice"), 7*time.Minute); got.Sun != "alice" {
		t.Errorf("As(alice) token sun = %q", got.Sun)
	}
	if got := call(c, 7*time.Minute); got.Sun != "root" {
		t.Errorf("As must not change the parent client: sun = %q", got.Sun)
	}
}

func TestStaticTokenAndUserHeader(t *testing.T) {
	var gotName, gotTok string
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		gotName, gotTok = r.Header.Get("X-SLURM-USER-NAME"), r.Header.Get("X-SLURM-USER-TOKEN")
		io.WriteString(w, `{"nodes":[]}`)
	}}
	s := startFake(t, f)
	c, err := New(context.Background(), Options{URL: s.URL, Token: "static.jwt.value"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.As("alice").ListNodes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alice", "static.jwt.value"}, []string{gotName, gotTok}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTokenNeverLogged(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"errors":[{"error_number":1,"error":"bad"}]}`)
			return
		}
		io.WriteString(w, `{"nodes":[]}`)
	}}
	s := startFake(t, f)
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for name, o := range map[string]Options{
		"minted": {JWTKeyFile: keyFile(t)},
		"static": {Token: "eyJstatic.secret.token"},
	} {
		t.Run(name, func(t *testing.T) {
			buf.Reset()
			o.URL, o.Logger, o.RetryBackoff = s.URL, logger, time.Millisecond
			c, err := New(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			c.ListNodes(context.Background())
			c.As("alice").ListNodes(context.Background())
			c.SetQOS(context.Background(), []QOSSpec{{Name: "q"}})
			log := buf.String()
			if !strings.Contains(log, "component=slurmrest") || !strings.Contains(log, "path=/slurm/v0.0.44/nodes/") || !strings.Contains(log, "status=500") {
				t.Errorf("debug log lacks the request lines:\n%s", log)
			}
			f.mu.Lock()
			tokens := append([]string{o.Token, testKey}, f.tokens...)
			f.mu.Unlock()
			for _, tok := range tokens {
				if tok == "" {
					continue
				}
				// Check the token and its signature part alone.
				parts := append([]string{tok}, strings.Split(tok, ".")...)
				for _, p := range parts[len(parts)-1:] {
					if len(p) > 8 && strings.Contains(log, p) {
						t.Fatalf("log contains a secret %q:\n%s", p, log)
					}
				}
				if strings.Contains(log, tok) {
					t.Fatalf("log contains a token:\n%s", log)
				}
			}
		})
	}
}

func TestNotModifiedIsSuccess(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) }}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	if err := c.CreateAccounts(context.Background(), []AccountSpec{{Name: "acme"}}); err != nil {
		t.Fatalf("304 (nothing changed) must be success: %v", err)
	}
}

func TestNoClusterAssociationWritesNothing(t *testing.T) {
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("unexpected write %s %s", r.Method, r.URL.Path)
		}
		// acme has its cluster association; orphan has none.
		io.WriteString(w, `{"associations":[{"cluster":"fake","account":"acme","user":""},{"cluster":"fake","account":"acme","user":"bob"}]}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	before := c.Stats()
	err := c.SetAssociations(context.Background(), []AssociationSpec{
		{Account: "acme", User: "alice", QOS: []string{"acme"}, DefaultQOS: "acme"},
		{Account: "orphan", User: "alice"},
	})
	if !errors.Is(err, ErrNoClusterAssociation) || !strings.Contains(err.Error(), "orphan") {
		t.Fatalf("err = %v, want ErrNoClusterAssociation naming orphan", err)
	}
	if w := c.Stats().Writes - before.Writes; w != 0 {
		t.Errorf("%d writes, want 0", w)
	}
}

func TestPathSegmentsEscaped(t *testing.T) {
	var got string
	f := &fake{h: func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		io.WriteString(w, `{"removed_qos":["a b"]}`)
	}}
	s := startFake(t, f)
	c := testClient(t, s.URL, nil)
	if err := c.DeleteQOS(context.Background(), "a b/c"); err != nil {
		t.Fatal(err)
	}
	if want := "/slurmdb/v0.0.44/qos/a%20b%2Fc"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
}
