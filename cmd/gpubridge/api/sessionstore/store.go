package sessionstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// ErrNotFound: no live session of that id.
var ErrNotFound = errors.New("no such session")

// Session is one signed-in browser (cmd/gpubridge/api.Session).
type Session struct {
	ID        string
	CSRF      string
	Person    string
	TokenHash token.Hash
	Expires   time.Time
}

// DB is the MariaDB store.
type DB struct {
	db  *sqlx.DB
	now func() time.Time
}

// New returns the store on a migrated database.
func New(db *sqlx.DB) *DB { return &DB{db: db, now: time.Now} }

// WithClock sets the store's clock (tests).
func (s *DB) WithClock(now func() time.Time) *DB { s.now = now; return s }

func idHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// Create stores a new session, and removes up to 1,000 expired ones.
func (s *DB) Create(ctx context.Context, ss Session) error {
	now := s.now().UTC()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM portal_sessions WHERE expires_at < ? LIMIT 1000`, now); err != nil {
		return fmt.Errorf("remove expired sessions: %w", err)
	}
	var th []byte
	if ss.TokenHash != (token.Hash{}) {
		th = ss.TokenHash[:]
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO portal_sessions (id_hash, csrf, person, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		idHash(ss.ID), ss.CSRF, ss.Person, th, now, ss.Expires.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("add session: %w", err)
	}
	return nil
}

type row struct {
	CSRF      string    `db:"csrf"`
	Person    string    `db:"person"`
	TokenHash []byte    `db:"token_hash"`
	ExpiresAt time.Time `db:"expires_at"`
}

// Get finds the live session of id (an expired one is ErrNotFound).
func (s *DB) Get(ctx context.Context, id string) (Session, error) {
	var r row
	err := s.db.GetContext(ctx, &r, `SELECT csrf, person, token_hash, expires_at FROM portal_sessions WHERE id_hash = ? AND expires_at > ?`, idHash(id), s.now().UTC())
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("read session: %w", err)
	}
	ss := Session{ID: id, CSRF: r.CSRF, Person: r.Person, Expires: r.ExpiresAt.UTC()}
	copy(ss.TokenHash[:], r.TokenHash)
	return ss, nil
}

// Delete removes the session of id (sign-out); a missing one is no error.
func (s *DB) Delete(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM portal_sessions WHERE id_hash = ?`, idHash(id)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
