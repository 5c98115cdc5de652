package ratecard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Store keeps the current rate card.
type Store interface {
	// Current returns the current card; ok is false when none was saved.
	Current(ctx context.Context) (card pricing.Card, ok bool, err error)
	// Save validates card and makes it the current card.
	Save(ctx context.Context, card pricing.Card, actor string, at time.Time) error
}

// ErrNoCard is returned when a card is needed and none was saved.
var ErrNoCard = errors.New("no rate card")

// DB is the MariaDB Store on gpubridge's database (migration 00206).
type DB struct{ db *sqlx.DB }

var _ Store = (*DB)(nil)

// NewDB returns the store on db (opened with sqldb.OpenMigrated).
func NewDB(db *sqlx.DB) *DB { return &DB{db: db} }

// Current implements Store.
func (d *DB) Current(ctx context.Context) (pricing.Card, bool, error) {
	var y []string
	if err := d.db.SelectContext(ctx, &y, "SELECT card_yaml FROM rate_card ORDER BY id DESC LIMIT 1"); err != nil {
		return pricing.Card{}, false, fmt.Errorf("read rate card: %w", err)
	}
	if len(y) == 0 {
		return pricing.Card{}, false, nil
	}
	c, err := pricing.ParseYAML([]byte(y[0]))
	if err != nil {
		return c, true, fmt.Errorf("stored rate card: %w", err)
	}
	return c, true, nil
}

// Save implements Store: a new version, audited with the one before.
func (d *DB) Save(ctx context.Context, card pricing.Card, actor string, at time.Time) error {
	if err := card.Validate(); err != nil {
		return err
	}
	y, err := card.YAML()
	if err != nil {
		return err
	}
	before, hadBefore, err := d.Current(ctx)
	if err != nil {
		return err
	}
	return sqldb.WithTx(ctx, d.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO rate_card (created_at, actor, card_yaml) VALUES (?, ?, ?)", at.UTC(), actor, string(y)); err != nil {
			return fmt.Errorf("save rate card: %w", err)
		}
		var b any
		if hadBefore {
			b = before
		}
		return sqldb.Audit(ctx, tx, at, actor, "update", "ratecard", "current", b, card)
	})
}

// Memory is an in-memory Store for tests.
type Memory struct {
	mu   sync.Mutex
	card *pricing.Card
}

var _ Store = (*Memory)(nil)

// NewMemory returns a store without a card.
func NewMemory() *Memory { return &Memory{} }

// Current implements Store.
func (m *Memory) Current(context.Context) (pricing.Card, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.card == nil {
		return pricing.Card{}, false, nil
	}
	return *m.card, true, nil
}

// Save implements Store.
func (m *Memory) Save(_ context.Context, card pricing.Card, _ string, _ time.Time) error {
	if err := card.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.card = &card
	return nil
}
