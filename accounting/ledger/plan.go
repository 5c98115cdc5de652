package ledger

import (
	"cmp"
	"slices"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/interval"
)

// keyState is what the ledger holds for one usage key.
type keyState struct {
	Sum       int64 // GPU-seconds over all revisions
	MaxRev    int
	FirstFrom int64 // usage start of revision 0 (the rate date of the key)
	Booking   int64 // booking of revision 0 (tier booked), carried by a reversal
}

// booker returns the period a new line for usage period p is booked in: p
// itself while open, else the first open period after it.
type booker map[meter.Period]bool

// periods lists the closed periods in order.
func (closed booker) periods() []meter.Period {
	var out []meter.Period
	for p, c := range closed {
		if c {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func (closed booker) book(p meter.Period) meter.Period {
	for closed[p] {
		p++
	}
	return p
}

// existingKey is one usage key of a run as the ledger holds it.
type existingKey struct {
	Period meter.Period
	Tier   meter.Tier
	Type   string
	keyState
}

// runKeys maps runs to the keys the ledger holds for them.
type runKeys map[meter.RunKey][]existingKey

// addLine folds one stored line into its run's keys: the sum of the
// revisions, the highest revision, and the usage start of revision 0 (the
// rate date of the key).
func (rk runKeys) addLine(run meter.RunKey, p meter.Period, tier meter.Tier, typ string, gpuSeconds int64, rev int, start, booking int64) {
	rk[run] = foldKey(rk[run], p, tier, typ, gpuSeconds, rev, start, booking)
}

// foldKey folds one stored line into the keys of its run or booking: the
// sum of the key's revisions, its highest revision, and the usage start
// and booking of revision 0.
func foldKey(ks []existingKey, p meter.Period, tier meter.Tier, typ string, gpuSeconds int64, rev int, start, booking int64) []existingKey {
	i := slices.IndexFunc(ks, func(k existingKey) bool { return k.Period == p && k.Tier == tier && k.Type == typ })
	if i < 0 {
		ks = append(ks, existingKey{Period: p, Tier: tier, Type: typ})
		i = len(ks) - 1
	}
	k := &ks[i]
	k.Sum += gpuSeconds
	k.MaxRev = max(k.MaxRev, rev)
	if rev == 0 {
		k.FirstFrom, k.Booking = start, booking
	}
	return ks
}

// planLines returns the lines to insert so that, for every final usage of
// runs, the sum of its key's revisions equals the measurement. existing
// holds the keys the ledger has for the runs (nil: none). For a finished
// run, keys the ledger holds that the measurement no longer has (the run
// now ran for zero seconds, lost its GPUs or its start, or changed tier
// or type) are reversed to 0; for a running run only its measured (final)
// keys are considered. Lines come out in run, period, tier, type order.
func planLines(runs []meter.MeasuredRun, existing runKeys, closed booker) []meter.Line {
	out := make([]meter.Line, 0, len(runs)+len(runs)/8)
	for _, mr := range runs {
		out = planRun(out, mr, existing[mr.Run.Key], closed)
	}
	return out
}

// planRun appends the lines of one run; existing holds only its keys.
func planRun(out []meter.Line, mr meter.MeasuredRun, existing []existingKey, closed booker) []meter.Line {
	var seenBuf [16]bool
	var seen []bool
	if len(existing) > len(seenBuf) {
		seen = make([]bool, len(existing))
	} else {
		seen = seenBuf[:len(existing)]
	}
	for _, u := range mr.Usages {
		if !u.Final {
			continue
		}
		i := slices.IndexFunc(existing, func(k existingKey) bool { return k.Period == u.Period && k.Tier == u.Tier && k.Type == u.Type })
		l := meter.Line{Usage: u, Account: mr.Run.Account, User: mr.Run.User, Booked: closed.book(u.Period)}
		if i >= 0 {
			seen[i] = true
			st := existing[i]
			if st.Sum == u.GPUSeconds {
				continue
			}
			l.Revision = st.MaxRev + 1
			l.GPUSeconds = u.GPUSeconds - st.Sum
		}
		out = append(out, l)
	}
	if mr.Run.End == 0 {
		return out
	}
	first := len(out)
	for i, k := range existing {
		if seen[i] || k.Sum == 0 {
			continue
		}
		out = append(out, meter.Line{
			Usage: meter.Usage{Run: mr.Run.Key, Period: k.Period, Tier: k.Tier, Type: k.Type,
				Start: k.FirstFrom, End: k.FirstFrom, GPUSeconds: -k.Sum, Final: true, Booking: k.Booking},
			Account: mr.Run.Account, User: mr.Run.User, Revision: k.MaxRev + 1, Booked: closed.book(k.Period),
		})
	}
	slices.SortFunc(out[first:], func(a, b meter.Line) int { return compareKeys(a.Key(), b.Key()) })
	return out
}

func compareKeys(a, b meter.UsageKey) int {
	return cmp.Or(a.Run.Compare(b.Run), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Type, b.Type))
}

// needsLookup reports whether the ledger may already hold lines for a
// finished run: its end time lies outside the batch's fresh ranges (nil:
// inside a range an earlier ingest touched), or it was running when a
// period ended before asOf (an ingest then wrote that period's part as
// final).
func needsLookup(r meter.Run, touched, fresh interval.Set, asOf int64) bool {
	if r.End == 0 {
		return true
	}
	if fresh != nil {
		if !fresh.Contains(r.End) {
			return true
		}
	} else if touched.Contains(r.End) {
		return true
	}
	return r.CrossedPeriodEnd(asOf)
}

// rangeSet is a State's coverage as a set: the stores write it sorted and
// merged, so it is one already.
func rangeSet(ranges [][2]int64) interval.Set {
	s := make(interval.Set, len(ranges))
	for i, r := range ranges {
		s[i] = interval.Interval{Start: r[0], End: r[1]}
	}
	return s
}

// rangePairs is a set as a State's coverage: [from, to) pairs.
func rangePairs(s interval.Set) [][2]int64 {
	if s == nil {
		return nil
	}
	out := make([][2]int64, len(s))
	for i, iv := range s {
		out[i] = [2]int64{iv.Start, iv.End}
	}
	return out
}
