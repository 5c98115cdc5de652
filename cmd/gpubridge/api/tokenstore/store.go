package tokenstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// AuditKind is the audit log's object_kind for tokens.
const AuditKind = "api-token"

// Errors of the store, checked with errors.Is.
var (
	// ErrNotFound: no token with that hash, or of that tenant and name.
	ErrNotFound = errors.New("no such token")
	// ErrExists: the tenant has a token of that name already.
	ErrExists = errors.New("token exists")
)

// Store is what both stores offer.
type Store interface {
	// Add stores a new token (its Hash set) and returns it with its id.
	Add(ctx context.Context, actor string, t token.Token) (token.Token, error)
	// List returns the tokens of tenant ("" with all true: every token;
	// "" with all false: the admin tokens), by tenant then name.
	List(ctx context.Context, tenant string, all bool) ([]token.Token, error)
	// Delete removes the token of tenant ("" for admin) and name.
	Delete(ctx context.Context, actor, tenant, name string) (token.Token, error)
	// Lookup finds a token by its hash.
	Lookup(ctx context.Context, h token.Hash) (token.Token, error)
	// Touch records a use at at (it never moves the time back).
	Touch(ctx context.Context, id int64, at time.Time) error
}

var (
	_ Store = (*DB)(nil)
	_ Store = (*Memory)(nil)
)

// DB is the MariaDB store.
type DB struct {
	db  *sqlx.DB
	now func() time.Time
}

// New returns the store on a migrated database.
func New(db *sqlx.DB) *DB { return &DB{db: db, now: time.Now} }

type row struct {
	ID         int64        `db:"id"`
	Hash       []byte       `db:"hash"`
	Tenant     string       `db:"tenant"`
	Name       string       `db:"name"`
	Scope      string       `db:"scope"`
	ExpiresAt  sql.NullTime `db:"expires_at"`
	CreatedAt  time.Time    `db:"created_at"`
	CreatedBy  string       `db:"created_by"`
	LastUsedAt sql.NullTime `db:"last_used_at"`
}

const cols = `id, hash, tenant, name, scope, expires_at, created_at, created_by, last_used_at`

func (r row) token() token.Token {
	t := token.Token{ID: r.ID, Tenant: r.Tenant, Name: r.Name, Scope: token.Scope(r.Scope), CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy}
	copy(t.Hash[:], r.Hash)
	if r.ExpiresAt.Valid {
		t.ExpiresAt = r.ExpiresAt.Time.UTC()
	}
	if r.LastUsedAt.Valid {
		t.LastUsedAt = r.LastUsedAt.Time.UTC()
	}
	return t
}

func nullTime(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: t.UTC().Truncate(time.Microsecond), Valid: true}
}

// Add implements Store.
func (s *DB) Add(ctx context.Context, actor string, t token.Token) (token.Token, error) {
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Microsecond)
	t.ExpiresAt = t.ExpiresAt.UTC().Truncate(time.Microsecond)
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (hash, tenant, name, scope, expires_at, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			t.Hash[:], t.Tenant, t.Name, string(t.Scope), nullTime(t.ExpiresAt), t.CreatedAt, t.CreatedBy)
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1062 {
			return fmt.Errorf("token %s: %w", t.Key(), ErrExists)
		}
		if err != nil {
			return fmt.Errorf("add token %s: %w", t.Key(), err)
		}
		if t.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return sqldb.Audit(ctx, tx, s.now(), actor, "create", AuditKind, t.Key(), nil, t)
	})
	if err != nil {
		return token.Token{}, err
	}
	return t, nil
}

// List implements Store.
func (s *DB) List(ctx context.Context, tenant string, all bool) ([]token.Token, error) {
	q, args := `SELECT `+cols+` FROM api_tokens WHERE tenant = ? ORDER BY tenant, name`, []any{tenant}
	if tenant == "" && all {
		q, args = `SELECT `+cols+` FROM api_tokens ORDER BY tenant, name`, nil
	}
	var rows []row
	if err := s.db.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]token.Token, len(rows))
	for i, r := range rows {
		out[i] = r.token()
	}
	return out, nil
}

// Delete implements Store.
func (s *DB) Delete(ctx context.Context, actor, tenant, name string) (token.Token, error) {
	var t token.Token
	err := sqldb.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var r row
		err := tx.GetContext(ctx, &r, `SELECT `+cols+` FROM api_tokens WHERE tenant = ? AND name = ? FOR UPDATE`, tenant, name)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("token %s: %w", (token.Token{Tenant: tenant, Name: name}).Key(), ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("delete token: %w", err)
		}
		t = r.token()
		if _, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = ?`, r.ID); err != nil {
			return fmt.Errorf("delete token %s: %w", t.Key(), err)
		}
		return sqldb.Audit(ctx, tx, s.now(), actor, "delete", AuditKind, t.Key(), t, nil)
	})
	if err != nil {
		// t may hold an attempt that was rolled back (WithTx may run fn
		// more than once).
		return token.Token{}, err
	}
	return t, nil
}

// Lookup implements Store.
func (s *DB) Lookup(ctx context.Context, h token.Hash) (token.Token, error) {
	var r row
	err := s.db.GetContext(ctx, &r, `SELECT `+cols+` FROM api_tokens WHERE hash = ?`, h[:])
	if errors.Is(err, sql.ErrNoRows) {
		return token.Token{}, ErrNotFound
	}
	if err != nil {
		return token.Token{}, fmt.Errorf("look the token up: %w", err)
	}
	return r.token(), nil
}

// Touch implements Store.
func (s *DB) Touch(ctx context.Context, id int64, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
		nullTime(at), id, nullTime(at))
	if err != nil {
		return fmt.Errorf("record the token's use: %w", err)
	}
	return nil
}

// Memory is the in-memory store (tests, benchmarks).
type Memory struct {
	mu     sync.Mutex
	next   int64
	tokens []token.Token
	// Audit has one line per change: "create acme/ci by alice".
	Audit []string
}

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{} }

// Add implements Store.
func (m *Memory) Add(_ context.Context, actor string, t token.Token) (token.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.tokens {
		if o.Tenant == t.Tenant && o.Name == t.Name || o.Hash == t.Hash {
			return token.Token{}, fmt.Errorf("token %s: %w", t.Key(), ErrExists)
		}
	}
	m.next++
	t.ID = m.next
	t.CreatedAt = t.CreatedAt.UTC().Truncate(time.Microsecond)
	t.ExpiresAt = t.ExpiresAt.UTC().Truncate(time.Microsecond)
	m.tokens = append(m.tokens, t)
	m.Audit = append(m.Audit, "create "+t.Key()+" by "+actor)
	return t, nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, tenant string, all bool) ([]token.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []token.Token{}
	for _, t := range m.tokens {
		if t.Tenant == tenant || tenant == "" && all {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b token.Token) int {
		if c := strings.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, actor, tenant, name string) (token.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.tokens {
		if t.Tenant == tenant && t.Name == name {
			m.tokens = slices.Delete(m.tokens, i, i+1)
			m.Audit = append(m.Audit, "delete "+t.Key()+" by "+actor)
			return t, nil
		}
	}
	return token.Token{}, fmt.Errorf("token %s: %w", (token.Token{Tenant: tenant, Name: name}).Key(), ErrNotFound)
}

// Lookup implements Store.
func (m *Memory) Lookup(_ context.Context, h token.Hash) (token.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.tokens {
		if t.Hash == h {
			return t, nil
		}
	}
	return token.Token{}, ErrNotFound
}

// Touch implements Store.
func (m *Memory) Touch(_ context.Context, id int64, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	at = at.UTC().Truncate(time.Microsecond)
	for i, t := range m.tokens {
		if t.ID == id && at.After(t.LastUsedAt) {
			m.tokens[i].LastUsedAt = at
		}
	}
	return nil
}
