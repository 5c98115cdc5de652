package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// TCP is a byte-for-byte TCP proxy to one target with connection faults.
// With MySQL set it also reads the client's command packets (MariaDB's
// protocol without TLS or compression, as go-sql-driver speaks it by
// default), so that StatementRules can reset a connection around a
// statement.
type TCP struct {
	target string
	mysql  bool
	ln     net.Listener

	mu        sync.Mutex
	conns     map[*tcpConn]struct{}
	cutBytes  int64
	stmtRules []*StatementRule
	closed    bool

	accepted, resets atomic.Int64
	wg               sync.WaitGroup
}

// StatementRule resets a MySQL connection at a statement. Match gets the
// command's SQL text (COM_QUERY and COM_STMT_PREPARE; "" for other
// commands).
type StatementRule struct {
	Match func(sql string) bool
	// AfterExec forwards the matching statement and resets the connection
	// when the server starts to answer it: the statement ran (a COMMIT is
	// durable), the client never learns it. Without it, the connection is
	// reset before the statement is sent: the server never sees it.
	AfterExec bool
	// After is how many matching statements pass first; Times how many are
	// then hit (0: every one).
	After, Times int
	// Then, when set, is called after each reset.
	Then func()

	seen, hits atomic.Int64
}

// Hits is how many connections the rule has reset.
func (r *StatementRule) Hits() int64 { return r.hits.Load() }

func (r *StatementRule) pick() bool {
	n := r.seen.Add(1)
	if n <= int64(r.After) || r.Times > 0 && n > int64(r.After+r.Times) {
		return false
	}
	r.hits.Add(1)
	return true
}

type tcpConn struct {
	client, server net.Conn
	once           sync.Once
	// resetOnReply: the server's next bytes are dropped and the pair reset.
	resetOnReply atomic.Pointer[StatementRule]
}

func (c *tcpConn) reset() {
	c.once.Do(func() {
		reset(c.client)
		reset(c.server)
	})
}

// NewTCP starts a proxy to target (host:port) on a free port of 127.0.0.1.
// mysql enables the statement rules.
func NewTCP(target string, mysql bool) (*TCP, error) {
	return NewTCPOn("127.0.0.1:0", target, mysql)
}

// NewTCPOn is NewTCP on a given listen address.
func NewTCPOn(listen, target string, mysql bool) (*TCP, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("proxy: listen: %w", err)
	}
	p := &TCP{target: target, mysql: mysql, ln: ln, conns: map[*tcpConn]struct{}{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *TCP) Addr() string { return p.ln.Addr().String() }

// Close stops accepting and resets every connection.
func (p *TCP) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.ResetAll()
	p.wg.Wait()
	return err
}

// CutAfterBytes makes every connection opened from now on reset after n
// bytes have come back from the target (0: never).
func (p *TCP) CutAfterBytes(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutBytes = n
}

// AddStatementRule installs a rule (MySQL proxies only).
func (p *TCP) AddStatementRule(r *StatementRule) *StatementRule {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stmtRules = append(p.stmtRules, r)
	return r
}

// Clear removes the statement rules and the byte cut.
func (p *TCP) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stmtRules, p.cutBytes = nil, 0
}

// ResetAll resets every open connection now and returns how many.
func (p *TCP) ResetAll() int {
	p.mu.Lock()
	cs := make([]*tcpConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.reset()
	}
	p.resets.Add(int64(len(cs)))
	return len(cs)
}

// TCPStats counts connections.
type TCPStats struct {
	Accepted, Open, Resets int64
}

// Stats returns the counters.
func (p *TCP) Stats() TCPStats {
	p.mu.Lock()
	open := len(p.conns)
	p.mu.Unlock()
	return TCPStats{Accepted: p.accepted.Load(), Open: int64(open), Resets: p.resets.Load()}
}

func (p *TCP) accept() {
	for {
		cl, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		sv, err := net.Dial("tcp", p.target)
		if err != nil {
			reset(cl)
			continue
		}
		c := &tcpConn{client: cl, server: sv}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.reset()
			return
		}
		p.conns[c] = struct{}{}
		cut := p.cutBytes
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.down(c, cut)
		}()
		go func() {
			defer p.wg.Done()
			var err error
			if p.mysql {
				err = p.upMySQL(c)
			} else {
				_, err = io.Copy(sv, cl)
			}
			_ = err
			c.reset()
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		}()
	}
}

// down copies target -> client, cutting after cut bytes and honouring a
// pending reset-on-reply.
func (p *TCP) down(c *tcpConn, cut int64) {
	defer c.reset()
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			if r := c.resetOnReply.Load(); r != nil {
				p.resets.Add(1)
				c.reset()
				if r.Then != nil {
					r.Then()
				}
				return
			}
			if cut > 0 && sent+int64(n) >= cut {
				c.client.Write(buf[:cut-sent]) //nolint:errcheck // the cut follows
				p.resets.Add(1)
				return
			}
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
		}
		if err != nil {
			return
		}
	}
}

// MySQL command bytes whose payload is SQL text.
const (
	comQuery       = 0x03
	comStmtPrepare = 0x16
)

// upMySQL copies client -> target packet by packet. A packet with sequence
// id 0 starts a command; its SQL text is checked against the rules.
func (p *TCP) upMySQL(c *tcpConn) error {
	r := bufio.NewReaderSize(c.client, 64<<10)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return err
		}
		if hdr[3] == 0 && n > 0 {
			sql := ""
			if payload[0] == comQuery || payload[0] == comStmtPrepare {
				sql = string(payload[1:])
			}
			if rule := p.matchStatement(sql); rule != nil {
				if !rule.AfterExec {
					p.resets.Add(1)
					c.reset()
					if rule.Then != nil {
						rule.Then()
					}
					return errors.New("reset before statement")
				}
				c.resetOnReply.Store(rule)
			}
		}
		if _, err := c.server.Write(append(hdr[:], payload...)); err != nil {
			return err
		}
	}
}

func (p *TCP) matchStatement(sql string) *StatementRule {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.stmtRules {
		if r.Match(sql) && r.pick() {
			return r
		}
	}
	return nil
}
