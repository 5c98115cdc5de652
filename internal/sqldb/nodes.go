package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// SplitDSN returns the DSNs of a database.dsn that lists several nodes of
// one cluster, comma separated ("u:p@tcp(db1:3306)/gpubridge,u:p@tcp(db2:3306)/gpubridge"),
// or dsn alone when it names one server (a comma inside one DSN, e.g. in
// its password, keeps it whole: every part must parse as a DSN with an
// address for the value to be a list).
func SplitDSN(dsn string) []string {
	parts := strings.Split(dsn, ",")
	if len(parts) < 2 {
		return []string{dsn}
	}
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		cfg, err := mysql.ParseDSN(parts[i])
		if err != nil || cfg.Addr == "" || !strings.Contains(parts[i], "@") {
			return []string{dsn}
		}
	}
	return parts
}

// nodeTimeout bounds the dial and the health query of one node, so that a
// lost node costs a new connection seconds, not a TCP timeout.
const nodeTimeout = 2 * time.Second

// nodes is the connector of a database.dsn that lists several nodes: each
// new connection goes to the first node, in the listed order, that
// answers and, when it runs Galera (wsrep_on), is Synced
// (wsrep_local_state 4); a node that is down, joining, donor or out of
// its cluster's primary component is skipped. The pool's connections thus
// gather on the first healthy node and move to the next within seconds of
// its loss (the connections to a lost node fail and are replaced).
type nodes struct {
	addrs []string
	conns []driver.Connector
	used  atomic.Int32 // index of the node of the last connection made; -1 none
}

var _ driver.Connector = (*nodes)(nil)

func (n *nodes) Driver() driver.Driver { return mysql.MySQLDriver{} }

// Connect connects to the first healthy node.
func (n *nodes) Connect(ctx context.Context) (driver.Conn, error) {
	var errs []error
	for i, c := range n.conns {
		conn, err := c.Connect(ctx)
		if err == nil {
			if err = synced(ctx, conn); err != nil {
				conn.Close()
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.addrs[i], err))
			continue
		}
		n.used.Store(int32(i))
		return conn, nil
	}
	n.used.Store(-1)
	return nil, fmt.Errorf("no database node reachable and synced: %w", errors.Join(errs...))
}

// Node is the address of the node the last connection went to ("" when
// the last attempt found none).
func (n *nodes) Node() string {
	if i := n.used.Load(); i >= 0 && int(i) < len(n.addrs) {
		return n.addrs[i]
	}
	return ""
}

// errNotSynced: a Galera node that is not Synced.
var errNotSynced = errors.New("node not synced (Galera)")

// synced checks, on a new connection, that a node running Galera is
// Synced (wsrep_local_state 4); a server without Galera (or with wsrep
// off) passes.
func synced(ctx context.Context, conn driver.Conn) error {
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	on, err := queryOne(ctx, q, "SELECT @@wsrep_on")
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1193 { // unknown variable: not MariaDB with wsrep
		return nil
	}
	if err != nil {
		return fmt.Errorf("read wsrep_on: %w", err)
	}
	if on != "1" && !strings.EqualFold(on, "ON") {
		return nil
	}
	state, err := queryOne(ctx, q, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'")
	if err != nil {
		return fmt.Errorf("read wsrep_local_state: %w", err)
	}
	if state != "4" {
		return fmt.Errorf("%w (wsrep_local_state %s, want 4)", errNotSynced, state)
	}
	return nil
}

// queryOne is the first column of the first row of query, as text.
func queryOne(ctx context.Context, q driver.QueryerContext, query string) (string, error) {
	rows, err := q.QueryContext(ctx, query, nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return "", nil
		}
		return "", err
	}
	switch v := dest[0].(type) {
	case []byte:
		return string(v), nil
	case nil:
		return "", nil
	default:
		return fmt.Sprint(v), nil
	}
}

// NodeStatus is what a pool's connection says of its server: its address
// (@@hostname:@@port) and, when it runs Galera, its wsrep_local_state
// (4 Synced; 1 Joining, 2 Donor/Desynced, 3 Joined).
type NodeStatus struct {
	Node       string
	Galera     bool
	LocalState int
}

// Synced reports a server without Galera, or a Synced Galera node.
func (s NodeStatus) Synced() bool { return !s.Galera || s.LocalState == 4 }

// LocalStateName names a wsrep_local_state.
func LocalStateName(state int) string {
	switch state {
	case 1:
		return "Joining"
	case 2:
		return "Donor/Desynced"
	case 3:
		return "Joined"
	case 4:
		return "Synced"
	}
	return "unknown"
}

// lastStatus is what the last successful Status call found.
var lastStatus atomic.Pointer[NodeStatus]

// LastStatus returns what the last successful Status call of this process
// found (the daemon's readiness probe asks every few seconds): for the
// metrics gpubridge_database_node_info and _wsrep_local_state.
func LastStatus() (NodeStatus, bool) {
	if p := lastStatus.Load(); p != nil {
		return *p, true
	}
	return NodeStatus{}, false
}

// Status asks one connection of db what server it is on (pass a *sql.Conn
// for the answers to come from one server when the pool spans several
// nodes).
func Status(ctx context.Context, db interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (NodeStatus, error) {
	var st NodeStatus
	if err := db.QueryRowContext(ctx, "SELECT CONCAT(@@hostname, ':', @@port)").Scan(&st.Node); err != nil {
		return st, fmt.Errorf("read the database node: %w", err)
	}
	var on sql.NullString
	err := db.QueryRowContext(ctx, "SELECT @@wsrep_on").Scan(&on)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1193 {
		lastStatus.Store(&st)
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read wsrep_on: %w", err)
	}
	if st.Galera = on.String == "1" || strings.EqualFold(on.String, "ON"); !st.Galera {
		lastStatus.Store(&st)
		return st, nil
	}
	var state sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'").Scan(&state); err != nil {
		return st, fmt.Errorf("read wsrep_local_state: %w", err)
	}
	fmt.Sscan(state.String, &st.LocalState)
	lastStatus.Store(&st)
	return st, nil
}
