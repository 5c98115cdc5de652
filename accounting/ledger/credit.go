package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Credit is a credit line: money given back to a tenant for a loss that
// node health records (bridge/health/credit computes them). Unlike usage
// lines it holds an amount, not GPU-seconds: it was priced when written, at
// the rate the tenant was charged.
//
// Credits are insert-only and written once per Key: writing a key again
// adds nothing, whatever the rest of the credit says. A credit whose loss
// period (Period) is closed when it is written is booked in the first open
// period after it, like an adjustment; a closed period never changes.
type Credit struct {
	// Key is the idempotency key (health-credit:job:<cluster>:<id>:<submit>,
	// health-credit:booking:<id>:event:<event>).
	Key string
	// Kind says why (bridge/health/credit's kinds: node-fail,
	// killed-by-drain, booking-lost).
	Kind    string
	Tenant  string
	Account string
	// Amount is negative.
	Amount money.Amount
	// Period is the period the loss belongs to (the run's end, the lost
	// window's start); Booked the period whose bill carries the credit
	// (set by the ledger when written).
	Period meter.Period
	Booked meter.Period
	// EventID is the health event the loss links to (0: none, a NODE_FAIL
	// no gpubridge drain explains).
	EventID int64
	Node    string
	// The run credited (JobID 0: a booking's loss).
	JobID  uint32
	Submit int64
	// The booking credited, and the booked GPU-seconds lost.
	BookingID  int64
	GPUSeconds int64
	// Start and End bound the loss (the run, the lost window), Unix seconds.
	Start, End int64
	Reason     string
	// WrittenAt is when the ledger stored it (Unix seconds).
	WrittenAt int64
}

// Correction reports whether the credit is booked in a later period than
// its loss (its loss period was closed when it was written).
func (c Credit) Correction() bool { return c.Booked != c.Period }

// ErrBadCredit is returned for a credit the ledger refuses to write
// (nothing of its batch is written).
var ErrBadCredit = errors.New("invalid credit")

const maxCreditKey = 191

// checkCredits validates a batch before anything is written.
func checkCredits(cs []Credit) error {
	for i, c := range cs {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: credit %d (%q): %s", ErrBadCredit, i, c.Key, fmt.Sprintf(format, a...))
		}
		switch {
		case c.Key == "" || len(c.Key) > maxCreditKey:
			return bad("key must be 1 to %d bytes", maxCreditKey)
		case c.Kind == "" || len(c.Kind) > 32:
			return bad("kind must be 1 to 32 bytes")
		case c.Amount.Sign() >= 0:
			return bad("amount %s is not negative (a credit gives money back)", c.Amount)
		case c.Amount.Currency().Code == "":
			return bad("amount %s has no currency", c.Amount)
		case c.Period <= 0:
			return bad("no loss period")
		case c.Account == "" && c.Tenant == "":
			return bad("neither a tenant nor an account")
		case len(c.Tenant) > 64 || len(c.Account) > 64 || len(c.Node) > 255:
			return bad("tenant, account (64) or node (255) too long")
		case c.End < c.Start:
			return bad("loss ends before it starts")
		}
	}
	return nil
}

// clip cuts a reason to what the ledger stores (1024 bytes, whole runes).
func clip(s string) string {
	const n = 1024
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// CompareCredits is the export order of credits: account, loss period,
// key.
func CompareCredits(a, b Credit) int {
	return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Key, b.Key))
}

// CreditQuery selects credit lines booked in a period.
type CreditQuery struct {
	Booked meter.Period
	// Account, when not empty, keeps only that account's credits.
	Account string
}

// creditWait is how long a credit write waits for a running ingest or
// close to release the ledger lock.
const creditWait = time.Minute

// sortCredits orders credits for reading.
func sortCredits(cs []Credit) []Credit {
	slices.SortFunc(cs, CompareCredits)
	return cs
}

// Ingested reports whether the finished runs that ended at t (Unix
// seconds) are all in the ledger: t lies in the coverage.
func (s State) Ingested(t int64) bool { return rangeSet(s.Coverage).Contains(t) }
