//go:build integration

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// metricsAddrs maps the API address of each serve a test started to its
// metrics listener's (server.metricsListen).
var metricsAddrs sync.Map

// freeLoopback returns a loopback address with a port free now.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// metricsAddr is the metrics address of the serve whose API is at addr.
func metricsAddr(addr string) string {
	if m, ok := metricsAddrs.Load(addr); ok {
		return m.(string)
	}
	return addr
}

// withMetricsListen gives the serve whose API is at addr a free metrics
// address of its own: the environment entry that sets it.
func withMetricsListen(t *testing.T, addr string) string {
	t.Helper()
	m := freeLoopback(t)
	metricsAddrs.Store(addr, m)
	return "GPUBRIDGE_METRICS_LISTEN=" + m
}

// serveInBackground runs `gpubridge --config cfg serve` in process on a
// free loopback port until the test ends (then it must stop cleanly within
// 45 s, exit 0). It returns the address and serve's log.
func serveInBackground(t *testing.T, ctx context.Context, cfg string) (string, *lockedBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("GPUBRIDGE_LISTEN", addr)
	k, v, _ := strings.Cut(withMetricsListen(t, addr), "=")
	t.Setenv(k, v)
	sctx, cancel := context.WithCancel(ctx)
	done, log := make(chan int, 1), &lockedBuffer{}
	go func() {
		done <- runContext(sctx, []string{"--config", cfg, "serve"}, strings.NewReader(""), io.Discard, log)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("serve exited %d:\n%s", code, log)
			}
		case <-time.After(45 * time.Second):
			t.Errorf("serve did not stop:\n%s", log)
		}
	})
	return addr, log
}

// metricValue is the value of one series (name and labels, as /metrics
// prints them) scraped from the serve at addr; -1 when it is not there
// (or serve does not answer yet).
func metricValue(addr, series string) float64 {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + metricsAddr(addr) + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return -1
}
