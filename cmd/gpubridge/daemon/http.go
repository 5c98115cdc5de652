package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// ErrPlainHTTP refuses plain HTTP on an address other than loopback.
var ErrPlainHTTP = errors.New("plain HTTP on a non-loopback address")

// CheckListen says whether s may be served: each of its addresses
// (listen, metricsListen) on loopback, or TLS, or plain HTTP explicitly
// allowed (then with a warning).
func CheckListen(s config.Server) (warning string, err error) {
	for _, a := range []struct{ field, addr, what string }{{"server.listen", s.Listen, "the API"}, {"server.metricsListen", s.MetricsListen, "/metrics (every tenant's quota, use and spend)"}} {
		if a.addr == "" && a.field == "server.metricsListen" {
			continue // a Server made in code without metrics
		}
		host, _, err := net.SplitHostPort(a.addr)
		if err != nil {
			return "", fmt.Errorf("%s %q: %w", a.field, a.addr, err)
		}
		if s.TLSCertFile != "" || clients.IsLoopback(host) {
			continue
		}
		if !s.AllowPlainHTTP {
			return "", fmt.Errorf("%s %q: %w: %s would be readable, and tokens sent to it would travel unencrypted; set server.tlsCertFile and server.tlsKeyFile, listen on 127.0.0.1, or set server.allowPlainHTTP: true", a.field, a.addr, ErrPlainHTTP, a.what)
		}
		warning = "serving plain HTTP on a non-loopback address (server.allowPlainHTTP): anyone on the network can read what it serves, and tokens sent to it travel unencrypted"
	}
	return warning, nil
}

// Listener is a bound, configured HTTP server not yet serving.
type Listener struct {
	srv *http.Server
	ln  net.Listener
	fp  string
	tls bool
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// ListenMetrics is Listen on s.MetricsListen: the listener of /metrics.
func ListenMetrics(s config.Server, h http.Handler, log *slog.Logger) (*Listener, error) {
	l, err := Listen(metricsServer(s), h, log)
	if err != nil {
		return nil, fmt.Errorf("server.metricsListen: %w", err)
	}
	return l, nil
}

// Listen checks s (CheckListen), loads its TLS certificate, binds its
// address and returns the server for h with s's timeouts and limits.
// Nothing is served before Serve.
func Listen(s config.Server, h http.Handler, log *slog.Logger) (*Listener, error) {
	warn, err := CheckListen(s)
	if err != nil {
		return nil, err
	}
	if warn != "" {
		log.Warn(warn, "listen", s.Listen)
	}
	fp, err := serverFingerprint(s)
	if err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	if s.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCertFile, s.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("server.tlsCertFile/tlsKeyFile: %w", err)
		}
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	}
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (server.listen): %w", s.Listen, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	srv := &http.Server{
		Handler:           http.MaxBytesHandler(h, s.MaxBodyBytes),
		TLSConfig:         tlsCfg,
		ReadTimeout:       s.ReadTimeout.Duration,
		ReadHeaderTimeout: s.ReadHeaderTimeout.Duration,
		WriteTimeout:      s.WriteTimeout.Duration,
		IdleTimeout:       s.IdleTimeout.Duration,
		MaxHeaderBytes:    s.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return &Listener{srv: srv, ln: ln, fp: fp, tls: tlsCfg != nil}, nil
}

// Serve serves until Shutdown; it logs a failure of the listener.
func (l *Listener) Serve(log *slog.Logger) {
	if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("http server", "err", err)
	}
}

// Shutdown stops accepting and waits for open requests until ctx ends,
// then closes what is left.
func (l *Listener) Shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	if err != nil {
		_ = l.srv.Close()
	}
	return err
}

// Close closes the listener of a server that never served.
func (l *Listener) Close() error { return l.ln.Close() }

// metricsServer is s as the metrics listener's server: its address is
// s.MetricsListen.
func metricsServer(s config.Server) config.Server {
	s.Listen, s.MetricsListen = s.MetricsListen, ""
	return s
}

// serverFingerprint hashes what a running server depends on (of s, all
// but MetricsListen: the metrics server's is that of metricsServer(s)): a
// reload that changes it rebinds the server.
func serverFingerprint(s config.Server) (string, error) {
	s.MetricsListen = ""
	parts := []string{fmt.Sprintf("%+v", s)}
	for _, f := range []string{s.TLSCertFile, s.TLSKeyFile} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("server TLS file: %w", err)
		}
		parts = append(parts, string(b))
	}
	return hashParts(parts...), nil
}

// Probes are what the HTTP endpoints ask the daemon.
type Probes struct {
	// Live reports liveness: false once shutdown began.
	Live func() bool
	// Database reports whether gpubridge's database answered its last
	// (cached, time-bounded) probe.
	Database func(ctx context.Context) bool
	// Ready reports readiness (the Checker of the running configuration).
	Ready func(ctx context.Context) bool
}

// Handler serves /metrics from reg, /healthz (liveness) and /readyz
// (readiness): the metrics listener's handler. ProbeHandler serves the
// probes alone, for the API's listener (/metrics names every tenant: it is
// never there). /healthz is 200 while the process lives, saying "ok", or
// "degraded" while gpubridge's database does not answer (from the
// readiness probe's cache: a request never makes a probe of its own
// within the cache's time), and 503 "stopping" once a stop began: a
// database outage never gets the daemon restarted. /readyz is 200 "ready"
// or 503 "not ready". The answers are one generic word; why is in the
// log, never in a response. Only GET and HEAD are served.
func Handler(reg *prometheus.Registry, p Probes) http.Handler {
	mux := probes(p)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// ProbeHandler serves /healthz and /readyz (see Handler).
func ProbeHandler(p Probes) http.Handler { return probes(p) }

func probes(p Probes) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !p.Live():
			status(w, http.StatusServiceUnavailable, "stopping")
		case p.Database != nil && !p.Database(r.Context()):
			status(w, http.StatusOK, "degraded")
		default:
			status(w, http.StatusOK, "ok")
		}
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !p.Live() || !p.Ready(r.Context()) {
			status(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		status(w, http.StatusOK, "ready")
	})
	return mux
}

func status(w http.ResponseWriter, code int, word string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, word)
}
