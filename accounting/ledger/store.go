package ledger

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

// The ledger is used through small interfaces, each defined where it is
// used and shaped by that use: an ingest writes through ingest.Ledger
// (ApplyBatch, ReplaceAccruals, Watermark, Lock), [Close] needs a
// [CloseStore], reports read lines, accruals and closed periods
// (accounting/billing), the burst controller reads on-demand lines
// (bridge/burst/spend). [DB] (MariaDB) and [Memory] implement them all and
// pass the same conformance suite (ledgertest). The rate card is not part
// of the ledger: see accounting/ratecard.
//
// The methods, as DB and Memory offer them:
//
//   - ApplyBatch writes the lines of a batch of finished runs and advances
//     the source's watermark and the cluster's coverage, in one transaction.
//   - ReplaceAccruals makes the runs still running as of asOf (read in the
//     same snapshot) the cluster's only accruals, writes their final parts
//     as lines, and records asOf, in one transaction.
//   - Watermark returns a source's watermark; ok is false before its first
//     ingest.
//   - State returns the cluster's watermarks, accrual time, coverage and
//     closed periods.
//   - Lines streams the lines booked in q.Booked; Accruals the accruals of
//     usage period q.Booked; Charges the booking charges booked in
//     q.Booked (booking.go), and ApplyCharges writes them.
//   - Period returns the record of a closed period (ok false while open);
//     MarkClosed stores one (ErrAlreadyClosed when it exists).
//   - Coverage returns the end-time ranges ingested completely; Touched
//     those an ingest has started to write (a superset: it may hold lines
//     there); ClosedPeriods the closed periods.
//   - AccrualRuns lists the runs the accruals hold: the runs that were
//     running at the last ingest (one whose row then no longer says it is
//     running, and whose end the next window does not hold, is looked up
//     by key: a late end record, a runaway job fixed with sacctmgr).
//   - Pass returns the last completed pass of a kind (meter.PassChanges,
//     meter.PassVerify) from a source; RecordPass stores one.
//   - Lock takes the cluster's ledger lock (one ingest or close at a time),
//     waiting up to wait; ErrLocked when it is still held. DB writes of
//     the locked cluster fence with the lock's lease, so an ingest whose
//     lease was lost cannot write (ErrLockLost).

// CloseStore is what [Close] needs of the ledger.
type CloseStore interface {
	Lock(ctx context.Context, cluster string, wait time.Duration) (release func(), err error)
	State(ctx context.Context, cluster string) (State, error)
	Period(ctx context.Context, cluster string, p meter.Period) (rec PeriodRecord, ok bool, err error)
	Lines(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error
	Charges(ctx context.Context, cluster string, q LineQuery, fn func(meter.Line) error) error
	MarkClosed(ctx context.Context, rec PeriodRecord) error
	Credits(ctx context.Context, cluster string, q CreditQuery, fn func(Credit) error) error
}

// ChargeStore is what the booking charge job needs of the ledger
// (booking.go).
type ChargeStore interface {
	Lock(ctx context.Context, cluster string, wait time.Duration) (release func(), err error)
	ApplyCharges(ctx context.Context, cluster string, asOf int64, bcs []meter.BookingCharge) (meter.WriteStats, error)
}

var (
	_ ChargeStore = (*DB)(nil)
	_ ChargeStore = (*Memory)(nil)
)

var (
	_ CloseStore = (*DB)(nil)
	_ CloseStore = (*Memory)(nil)
)

// LineQuery selects lines.
type LineQuery struct {
	// Booked is the period whose bill carries the lines (for accruals: the
	// usage period).
	Booked meter.Period
	// Account, when not empty, keeps only that account's lines.
	Account string
	// Ordered asks for the export order: job id, submit time, usage
	// period, tier, type, revision. Unordered is faster.
	Ordered bool
}

// State is what the ledger knows about a cluster's ingests and periods.
type State struct {
	Watermarks map[string]meter.Watermark // by source
	// AccrualsAsOf is when the running runs were last read (0: never).
	AccrualsAsOf int64
	// Coverage lists the end-time ranges [from, to) ingested so far.
	Coverage [][2]int64
	// Closed holds the closed periods.
	Closed map[meter.Period]bool
	// Passes holds the last completed changes and verification passes,
	// by source and kind.
	Passes []meter.Pass
}

// IngestedThrough returns the latest watermark over all sources (0: none).
func (s State) IngestedThrough() int64 {
	var t int64
	for _, w := range s.Watermarks {
		t = max(t, w.Through)
	}
	return t
}

// PeriodRecord is a closed period.
type PeriodRecord struct {
	Cluster    string
	Period     meter.Period
	ClosedAt   time.Time
	ClosedBy   string
	Lines      int64
	GPUSeconds int64
	// Amount is the period's total, in the card's currency.
	Amount   money.Amount
	Currency string
	Snapshot Snapshot
}

// Snapshot is what a closed period's export is priced and labelled with.
type Snapshot struct {
	Card pricing.Card `json:"rateCard"`
	// Tenants maps each account with lines in the period to its tenant;
	// an account without a tenant is absent.
	Tenants map[string]string `json:"tenants"`
	// Profiles are the tenants' profiles (description, organization,
	// cost centre) at close, by account, when the labels gave them
	// (Profiler); absent for a tenant without any and in snapshots from
	// before they were kept.
	Profiles map[string]TenantProfile `json:"profiles,omitempty"`
}

// TenantProfile is what finance needs of a tenant besides its name (the
// chargeback exports' export.Profile, as stored at close).
type TenantProfile struct {
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
	CostCenter   string `json:"costCenter,omitempty"`
}

// Profiler gives the profile of an account's tenant; a Labeler that is
// one has the profiles stored with a closed period.
type Profiler interface {
	TenantProfile(account string) TenantProfile
}

var (
	// ErrAlreadyClosed is returned when closing a closed period.
	ErrAlreadyClosed = errors.New("period already closed")
	// ErrNotEnded is returned when closing a period that has not ended.
	ErrNotEnded = errors.New("period has not ended")
	// ErrNotIngested is returned when closing a period no ingest has read to its end.
	ErrNotIngested = errors.New("period not fully ingested")
	// ErrLocked is returned when another ingest or close holds the ledger lock.
	ErrLocked = errors.New("ledger is locked by another ingest or close")
	// ErrLockLost is returned by a write of a locked cluster whose lock (a
	// lease) is lost: its renewals failed past the renew deadline, or it
	// expired and another ingest or close took it. The write's fence
	// refused it, so nothing more is written under it.
	ErrLockLost = errors.New("ledger lock lost (its lease expired or another ingest or close took it over); nothing more was written")
)

// sortedPasses orders passes by source, then kind.
func sortedPasses(ps []meter.Pass) []meter.Pass {
	slices.SortFunc(ps, func(a, b meter.Pass) int { return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Kind, b.Kind)) })
	return ps
}
