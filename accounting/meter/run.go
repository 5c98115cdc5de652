package meter

import (
	"cmp"
	"fmt"
	"slices"
)

// RunKey identifies one job run on one cluster. Slurm guarantees
// (job id, submit time) unique per cluster; a requeued job gets a new
// submit time, so each of its runs has its own key, and so does a job id
// reused after the id space wrapped.
type RunKey struct {
	Cluster string
	JobID   uint32
	Submit  int64 // Unix seconds
}

func (k RunKey) String() string { return fmt.Sprintf("%s/%d@%d", k.Cluster, k.JobID, k.Submit) }

// Compare orders keys by cluster, job id, submit time.
func (k RunKey) Compare(o RunKey) int {
	if c := cmp.Compare(k.Cluster, o.Cluster); c != 0 {
		return c
	}
	if c := cmp.Compare(k.JobID, o.JobID); c != 0 {
		return c
	}
	return cmp.Compare(k.Submit, o.Submit)
}

// Alloc is a GPU allocation of one type: "h100", "1g.10gb", or "gpu" for an
// untyped allocation.
type Alloc struct {
	Type  string
	Count int64
}

// UntypedGPU is the type name of a GPU allocation Slurm recorded without a
// type (only gres/gpu in tres_alloc). It has no rate unless the rate card
// gives one, so its use blocks a close with a clear error.
const UntypedGPU = "gpu"

// Run is one job run as the sources read it.
type Run struct {
	Key       RunKey
	Account   string
	User      string
	Partition string
	QOS       string
	// Reservation is the Slurm reservation the run ran in ("" for none).
	Reservation string
	Start       int64 // Unix seconds; 0 = never started
	End         int64 // Unix seconds; 0 = still running
	GPUs        []Alloc
}

// Running reports whether the run has started and not ended.
func (r Run) Running() bool { return r.Start > 0 && r.End == 0 }

// CrossedPeriodEnd reports whether the run was running when a period
// ended at or before asOf: an ingest then may have written that period's
// part as final, so the ledger may hold lines for the run whatever its end.
func (r Run) CrossedPeriodEnd(asOf int64) bool {
	if r.Start <= 0 {
		return false
	}
	b := PeriodOfUnix(r.Start).EndUnix()
	return b <= asOf && (r.End == 0 || b < r.End)
}

// Usage is the GPU use of one run in one period, tier and GPU type.
type Usage struct {
	Run        RunKey
	Period     Period
	Tier       Tier
	Type       string
	Count      int64 // GPUs of this type held by the run
	Start, End int64 // the run clipped to the period (Unix seconds)
	GPUSeconds int64 // Count × (End − Start)
	// Final is false for the part of a still-running run in the period
	// that holds "as of": an accrual, replaced by the next ingest.
	Final bool
	// Booking is the booking the usage belongs to (0: none): for a run
	// of tier Booked, the booking whose reservation it ran in; for a
	// booking charge (Line.Charge), the booking charged. Not part of the
	// key: a run's tier already says whether it ran inside a booking.
	Booking int64
}

// UsageKey is the ledger's idempotency key without the revision.
type UsageKey struct {
	Run    RunKey
	Period Period
	Tier   Tier
	Type   string
}

// Key returns u's idempotency key.
func (u Usage) Key() UsageKey { return UsageKey{u.Run, u.Period, u.Tier, u.Type} }

// Split measures r as of asOf (Unix seconds) and returns one Usage per
// period and GPU type, in period then type order. rules gives the tier.
// A run with no GPUs, never started, or of zero length returns nil.
func Split(r Run, asOf int64, rules TierRules) []Usage {
	if r.Start <= 0 || len(r.GPUs) == 0 {
		return nil
	}
	end, running := r.End, r.End == 0
	if running {
		end = asOf
	}
	if end <= r.Start {
		return nil
	}
	tier, booking := rules.RunTier(r)
	gpus := mergeAllocs(r.GPUs)
	if len(gpus) == 0 {
		return nil
	}
	out := make([]Usage, 0, len(gpus)) // one period, the common case
	for p := PeriodOfUnix(r.Start); p.StartUnix() < end; p++ {
		s, e := max(r.Start, p.StartUnix()), min(end, p.EndUnix())
		if e <= s {
			continue
		}
		final := !running || p.EndUnix() <= asOf
		for _, g := range gpus {
			out = append(out, Usage{
				Run: r.Key, Period: p, Tier: tier, Type: g.Type, Count: g.Count,
				Start: s, End: e, GPUSeconds: g.Count * (e - s), Final: final, Booking: booking,
			})
		}
	}
	return out
}

// mergeAllocs sums counts per type, drops non-positive counts and sorts by type.
func mergeAllocs(in []Alloc) []Alloc {
	if len(in) == 1 && in[0].Count > 0 {
		return in // the common case, already merged and sorted (callers only read it)
	}
	out := make([]Alloc, 0, len(in))
	for _, a := range in {
		if a.Count <= 0 {
			continue
		}
		if i := slices.IndexFunc(out, func(b Alloc) bool { return b.Type == a.Type }); i >= 0 {
			out[i].Count += a.Count
			continue
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Alloc) int { return cmp.Compare(a.Type, b.Type) })
	return out
}
