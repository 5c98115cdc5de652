package ledger

import (
	"cmp"
	"slices"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// keyState is what the ledger holds for one usage key.
type keyState struct {
	Sum       int64 // GPU-seconds over all revisions
	MaxRev    int
	FirstFrom int64 // usage start of revision 0 (the rate date of the key)
}

// booker returns the period a new line for usage period p is booked in: p
// itself while open, else the first open period after it.
type booker map[meter.Period]bool

func (closed booker) book(p meter.Period) meter.Period {
	for closed[p] {
		p++
	}
	return p
}

// planLines returns the lines to insert so that, for every final usage of
// runs, the sum of its key's revisions equals the measurement. existing maps
// the keys already in the ledger (nil: none). For a finished run, keys the
// ledger holds that the measurement no longer has are reversed to 0; for a
// running run only its measured (final) keys are considered. Lines come out
// in run, period, tier, type order.
func planLines(runs []meter.MeasuredRun, existing map[meter.UsageKey]keyState, closed booker) []meter.Line {
	var out []meter.Line
	for _, mr := range runs {
		seen := map[meter.UsageKey]bool{}
		for _, u := range mr.Usages {
			if !u.Final {
				continue
			}
			k := u.Key()
			seen[k] = true
			st, ok := existing[k]
			if ok && st.Sum == u.GPUSeconds {
				continue
			}
			l := meter.Line{Usage: u, Account: mr.Run.Account, User: mr.Run.User, Booked: closed.book(u.Period)}
			if ok {
				l.Revision = st.MaxRev + 1
				l.GPUSeconds = u.GPUSeconds - st.Sum
			}
			out = append(out, l)
		}
		if mr.Run.End == 0 {
			continue
		}
		var stale []meter.UsageKey
		for k, st := range existing {
			if k.Run == mr.Run.Key && !seen[k] && st.Sum != 0 {
				stale = append(stale, k)
			}
		}
		slices.SortFunc(stale, compareKeys)
		for _, k := range stale {
			st := existing[k]
			out = append(out, meter.Line{
				Usage: meter.Usage{Run: k.Run, Period: k.Period, Tier: k.Tier, Type: k.Type,
					Start: st.FirstFrom, End: st.FirstFrom, GPUSeconds: -st.Sum, Final: true},
				Account: mr.Run.Account, User: mr.Run.User, Revision: st.MaxRev + 1, Booked: closed.book(k.Period),
			})
		}
	}
	return out
}

func compareKeys(a, b meter.UsageKey) int {
	return cmp.Or(a.Run.Compare(b.Run), cmp.Compare(a.Period, b.Period), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Type, b.Type))
}

// needsLookup reports whether the ledger may already hold lines for a
// finished run: its end time lies in a range an earlier ingest covered, or
// it was running when a period ended before asOf (an ingest then wrote that
// period's part as final).
func needsLookup(r meter.Run, cov coverage, asOf int64) bool {
	if r.End == 0 || cov.contains(r.End) {
		return true
	}
	// A period boundary b with Start < b < End and b <= asOf.
	b := meter.PeriodOfUnix(r.Start).EndUnix()
	return b < r.End && b <= asOf
}

// coverage is a sorted set of disjoint half-open ranges [from, to) of end
// times already ingested.
type coverage [][2]int64

func (c coverage) contains(t int64) bool {
	i, found := slices.BinarySearchFunc(c, t, func(r [2]int64, t int64) int { return cmp.Compare(r[0], t) })
	if found {
		return true
	}
	return i > 0 && t < c[i-1][1]
}

// add returns c with [from, to) added and overlapping or touching ranges merged.
func (c coverage) add(from, to int64) coverage {
	if to <= from {
		return c
	}
	out := make(coverage, 0, len(c)+1)
	cur := [2]int64{from, to}
	inserted := false
	for _, r := range c {
		switch {
		case r[1] < cur[0]:
			out = append(out, r)
		case r[0] > cur[1]:
			if !inserted {
				out = append(out, cur)
				inserted = true
			}
			out = append(out, r)
		default:
			cur = [2]int64{min(cur[0], r[0]), max(cur[1], r[1])}
		}
	}
	if !inserted {
		out = append(out, cur)
	}
	return out
}

// covers reports whether c holds all of [from, to).
func (c coverage) covers(from, to int64) bool {
	for _, r := range c {
		if r[0] <= from && to <= r[1] {
			return true
		}
	}
	return to <= from
}
