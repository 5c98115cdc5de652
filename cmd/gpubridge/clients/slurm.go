package clients

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// slurmConn is the slurmrestd client of a Set, made with it (the client
// negotiates on its first request), and its transport, whose keep-alive
// connections are all there is to close.
type slurmConn struct {
	fp       string // fingerprint of the settings it was made with
	cl       *slurmrest.Client
	tr       *http.Transport
	err      error     // the configuration made no client: every use's error
	warnings []warning // logged at the first use that reaches slurmrestd

	mu     sync.Mutex
	warned bool
	closed bool
}

// warning is one log line about the client's settings.
type warning struct{ msg, key, val string }

// get returns the client (it negotiates at its first request), the
// configuration's error when it made none, ErrClosed after shutdown. The
// first get logs the warnings about the settings.
func (c *slurmConn) get(log *slog.Logger) (*slurmrest.Client, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	if c.err != nil {
		return nil, c.err
	}
	c.warn(log)
	return c.cl, nil
}

// warn logs the warnings about the settings, once.
func (c *slurmConn) warn(log *slog.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned {
		return
	}
	c.warned = true
	for _, w := range c.warnings {
		log.Warn(w.msg, w.key, w.val)
	}
}

func (c *slurmConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// isBuilt reports whether a use negotiated with slurmrestd (and the
// client is not closed).
func (c *slurmConn) isBuilt() bool {
	return c.cl != nil && !c.isClosed() && c.cl.Negotiated()
}

// shutdown closes the transport's idle connections; later gets fail with
// ErrClosed.
func (c *slurmConn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
}
