package daemon

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

func TestCheckListen(t *testing.T) {
	cases := map[string]struct {
		listen, metrics string
		tls             bool
		allow           bool
		wantErr         bool
		wantWarn        bool
	}{
		"loopback":                 {listen: "127.0.0.1:9180"},
		"public metrics":           {listen: "127.0.0.1:9180", metrics: "0.0.0.0:9181", wantErr: true},
		"public metrics with TLS":  {listen: "127.0.0.1:9180", metrics: "0.0.0.0:9181", tls: true},
		"public metrics, allowed":  {listen: "127.0.0.1:9180", metrics: "10.0.0.5:9181", allow: true, wantWarn: true},
		"localhost":                {listen: "localhost:9180"},
		"ipv6 loopback":            {listen: "[::1]:9180"},
		"all interfaces":           {listen: ":9180", wantErr: true},
		"public address":           {listen: "10.0.0.5:9180", wantErr: true},
		"public with TLS":          {listen: "0.0.0.0:9180", tls: true},
		"public, plain allowed":    {listen: "0.0.0.0:9180", allow: true, wantWarn: true},
		"host name, plain allowed": {listen: "head.example:9180", allow: true, wantWarn: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := config.Default().Server
			s.Listen, s.AllowPlainHTTP = c.listen, c.allow
			if c.metrics != "" {
				s.MetricsListen = c.metrics
			}
			if c.tls {
				s.TLSCertFile, s.TLSKeyFile = "c", "k"
			}
			warn, err := CheckListen(s)
			if (err != nil) != c.wantErr || (warn != "") != c.wantWarn {
				t.Fatalf("CheckListen = %q, %v; want error %v, warning %v", warn, err, c.wantErr, c.wantWarn)
			}
			if err != nil && !errors.Is(err, ErrPlainHTTP) {
				t.Fatalf("error %v is not ErrPlainHTTP", err)
			}
		})
	}
}

// serveOn starts Listen(s, h) and returns its address.
func serveOn(t *testing.T, s config.Server, h http.Handler) string {
	t.Helper()
	l, err := Listen(s, h, quiet())
	if err != nil {
		t.Fatal(err)
	}
	go l.Serve(quiet())
	t.Cleanup(func() { l.Shutdown(context.Background()) })
	return l.Addr().String()
}

// The server takes its timeouts and limits from the configuration.
func TestListenAppliesTimeoutsAndLimits(t *testing.T) {
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	s.ReadTimeout.Duration = 7 * time.Second
	s.ReadHeaderTimeout.Duration = 3 * time.Second
	s.WriteTimeout.Duration = 11 * time.Second
	s.IdleTimeout.Duration = 13 * time.Second
	s.MaxHeaderBytes = 4096
	l, err := Listen(s, http.NotFoundHandler(), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := []any{l.srv.ReadTimeout, l.srv.ReadHeaderTimeout, l.srv.WriteTimeout, l.srv.IdleTimeout, l.srv.MaxHeaderBytes}
	want := []any{7 * time.Second, 3 * time.Second, 11 * time.Second, 13 * time.Second, 4096}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server field %d = %v; want %v", i, got[i], want[i])
		}
	}
}

// A client that sends its headers too slowly is cut off after
// readHeaderTimeout (a slowloris holds no connection for long).
func TestSlowHeadersAreCutOff(t *testing.T) {
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	s.ReadHeaderTimeout.Duration = 100 * time.Millisecond
	addr := serveOn(t, s, http.NotFoundHandler())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil { // never ends its headers
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second)) // below readTimeout (10 s)
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a connection whose headers never ended")
	}
}

// Oversized headers are refused (431) and an oversized body cannot be
// read past maxBodyBytes (413 from a handler that reads it).
func TestRequestSizeLimits(t *testing.T) {
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	s.MaxHeaderBytes = 1024
	s.MaxBodyBytes = 1024
	addr := serveOn(t, s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 8192))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("8 KiB header: %d; want 431", resp.StatusCode)
	}
	for size, want := range map[int]int{512: http.StatusNoContent, 4096: http.StatusRequestEntityTooLarge} {
		resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("b", size)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%d-byte body: %d; want %d", size, resp.StatusCode, want)
		}
	}
}

// /healthz and /readyz answer one generic word; other methods are refused.
func TestHandlerAnswersGenerically(t *testing.T) {
	live, ready := true, false
	reg := prometheus.NewRegistry()
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	addr := serveOn(t, s, Handler(reg, Probes{Live: func() bool { return live }, Ready: func(context.Context) bool { return ready }}))
	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cases := []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/healthz", 200, "ok\n"},
		{"GET", "/readyz", 503, "not ready\n"},
		{"POST", "/healthz", 405, ""},
		{"DELETE", "/metrics", 405, ""},
		{"GET", "/nope", 404, ""},
	}
	for _, c := range cases {
		code, body := get(c.method, c.path)
		if code != c.code || (c.body != "" && body != c.body) {
			t.Errorf("%s %s = %d %q; want %d %q", c.method, c.path, code, body, c.code, c.body)
		}
	}
	ready = true
	if code, body := get("GET", "/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q; want 200 ready", code, body)
	}
	live = false
	if code, body := get("GET", "/healthz"); code != 503 || body != "stopping\n" {
		t.Errorf("/healthz while stopping = %d %q; want 503 stopping", code, body)
	}
}

// With a certificate and key configured the server speaks TLS only.
func TestListenTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	s.TLSCertFile, s.TLSKeyFile = certFile, keyFile
	addr := serveOn(t, s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }))
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := cl.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("https: %d", resp.StatusCode)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if strings.HasPrefix(line, "HTTP/1.0 200") {
		t.Fatal("plain HTTP was served on the TLS port")
	}
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpubridge-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// /healthz reports the database from the readiness probe's cache: fifty
// requests make one database ping, a hung database is answered within the
// probe's timeout, and the answer stays 200 (alive) with a generic word.
func TestHealthzUsesCachedDatabasePing(t *testing.T) {
	var pings atomic.Int32
	var down atomic.Bool
	hang := make(chan struct{})
	defer close(hang)
	clk := &clock{t: time.Unix(1e9, 0)}
	checker := NewChecker([]Check{{Name: clients.NameDatabase, Run: func(ctx context.Context) error {
		pings.Add(1)
		if down.Load() {
			<-hang // a database that does not answer
		}
		return nil
	}}}, 5*time.Second, 50*time.Millisecond, quiet(), nil)
	checker.now = clk.now
	s := config.Default().Server
	s.Listen = "127.0.0.1:0"
	addr := serveOn(t, s, Handler(prometheus.NewRegistry(), Probes{
		Live:     func() bool { return true },
		Database: func(ctx context.Context) bool { return checker.Up(ctx, clients.NameDatabase) },
		Ready:    checker.Ready,
	}))
	get := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for range 50 {
		if code, body := get(); code != 200 || body != "ok\n" {
			t.Fatalf("/healthz = %d %q; want 200 ok", code, body)
		}
	}
	if n := pings.Load(); n != 1 {
		t.Fatalf("%d database pings for 50 requests; want 1 (cached)", n)
	}
	down.Store(true)
	clk.add(6 * time.Second)
	if code, body := get(); code != 200 || body != "degraded\n" {
		t.Fatalf("/healthz with a hung database = %d %q; want 200 degraded", code, body)
	}
	if n := pings.Load(); n != 2 {
		t.Fatalf("%d pings; want 2", n)
	}
}
