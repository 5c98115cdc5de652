package slurmrest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Open connects to nothing; the first request negotiates (once, however
// many requests start together) and learns the cluster; a request that
// finds no server makes the next one negotiate again, so a client opened
// while slurmrestd is down works once it is back, and picks the version
// it serves then.
func TestOpenNegotiatesOnFirstRequest(t *testing.T) {
	var pings, reads atomic.Int64
	var offer atomic.Value
	offer.Store(V44)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/ping/") {
			pings.Add(1)
			if r.URL.Path != "/slurm/"+offer.Load().(string)+"/ping/" {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, "Unable to find requested URL endpoint.")
				return
			}
			io.WriteString(w, pingOK)
			return
		}
		reads.Add(1)
		if !strings.HasPrefix(r.URL.Path, "/slurm/"+offer.Load().(string)+"/") {
			t.Errorf("request for %s while %s is served", r.URL.Path, offer.Load())
		}
		io.WriteString(w, `{"nodes":[],"errors":[],"warnings":[]}`)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down at Open
	c, err := Open(Options{URL: "http://" + addr, JWTKeyFile: keyFile(t), Timeout: 300 * time.Millisecond, RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatalf("Open with slurmrestd down: %v", err)
	}
	if c.APIVersion() != "" || c.Cluster() != "" {
		t.Fatalf("before any request: version %q cluster %q", c.APIVersion(), c.Cluster())
	}
	ctx := context.Background()
	if _, err := c.ListNodes(ctx); err == nil {
		t.Fatal("ListNodes with slurmrestd down: no error")
	}
	srv := serveAt(t, addr, h)
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if _, err := c.ListNodes(ctx); err != nil {
				t.Errorf("ListNodes once slurmrestd is up: %v", err)
			}
		})
	}
	wg.Wait()
	if pings.Load() != 1 || reads.Load() != 5 || c.APIVersion() != V44 || c.Cluster() != "fake" {
		t.Fatalf("%d pings, %d reads, version %q, cluster %q; want 1 ping, 5 reads, %s, fake", pings.Load(), reads.Load(), c.APIVersion(), c.Cluster(), V44)
	}
	// slurmrestd goes away and comes back serving v0.0.43 only.
	srv.Close()
	if _, err := c.ListNodes(ctx); err == nil {
		t.Fatal("ListNodes with slurmrestd gone: no error")
	}
	offer.Store(V43)
	serveAt(t, addr, h)
	if _, err := c.ListNodes(ctx); err != nil || c.APIVersion() != V43 {
		t.Fatalf("after slurmrestd came back with %s: %v, version %q", V43, err, c.APIVersion())
	}
}

// serveAt serves h at addr until the test ends.
func serveAt(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	s.Start()
	t.Cleanup(s.Close)
	return s
}
