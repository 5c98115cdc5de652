package lease

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
)

// Execer is what a transaction (*sql.Tx, *sqlx.Tx) offers a fence.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Token is a Lease at one epoch: what a write made under that epoch
// fences with. A token taken before the lease was lost and taken again is
// stale: its writes are refused although the Lease is held anew.
type Token struct {
	l     *Lease
	epoch int64
}

// Token is the lease at its present epoch (0, refused by Fence, while not
// held).
func (l *Lease) Token() Token { return Token{l: l, epoch: l.Epoch()} }

// Epoch is the token's epoch.
func (t Token) Epoch() int64 { return t.epoch }

// Fence checks, inside the write transaction ex, that the token's lease is
// still held at its epoch: locally (the renew deadline has not passed) and
// in the database, by touching the lease row where holder, epoch and an
// unexpired lease all match. Otherwise the write is refused: ErrFenced,
// logged and counted; the caller rolls its transaction back.
func (t Token) Fence(ctx context.Context, ex Execer) error {
	l := t.l
	if t.epoch == 0 || l.Epoch() != t.epoch || !l.Valid() {
		return t.refuse("this holder's lease is not valid any more (renewal failed or its renew deadline passed)")
	}
	res, err := ex.ExecContext(ctx, `UPDATE leases SET fences = fences + 1
		WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > UTC_TIMESTAMP(6)`, l.name, l.holder, t.epoch)
	if err != nil {
		return fmt.Errorf("fence lease %s (epoch %d): %w", l.name, t.epoch, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return t.refuse("the lease expired in the database or another holder took it over")
	}
	return nil
}

// fenced counts the refused fenced writes of this process.
var fenced atomic.Uint64

// Fenced is the number of fenced writes refused in this process.
func Fenced() uint64 { return fenced.Load() }

// refuse counts, logs and returns a refused fenced write.
func (t Token) refuse(why string) error {
	fenced.Add(1)
	t.l.log.Warn("fenced write refused", "epoch", t.epoch, "holder", t.l.info, "reason", why)
	return fmt.Errorf("%w (lease %s, epoch %d): %s", ErrFenced, t.l.name, t.epoch, why)
}

type ctxKey struct{}

// NewContext returns ctx carrying t besides the tokens it carries already:
// every FenceContext under it fences with t too (the daemon's jobs carry
// the leader's token).
func NewContext(ctx context.Context, t Token) context.Context {
	old, _ := ctx.Value(ctxKey{}).([]Token)
	return context.WithValue(ctx, ctxKey{}, append(append([]Token(nil), old...), t))
}

// Tokens are the tokens ctx carries.
func Tokens(ctx context.Context) []Token {
	ts, _ := ctx.Value(ctxKey{}).([]Token)
	return ts
}

// FenceContext fences ex with every token ctx carries (none: nil).
func FenceContext(ctx context.Context, ex Execer) error {
	for _, t := range Tokens(ctx) {
		if err := t.Fence(ctx, ex); err != nil {
			return err
		}
	}
	return nil
}
