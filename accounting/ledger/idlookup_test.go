package ledger

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestNextIDLookupProperty: for random sorted id sets (seeded; the seed is
// printed) and term limits, the lookups are well formed, together select
// every id, select nothing outside a range of two ids at most maxIDGap
// apart, and each holds at most limit terms.
func TestNextIDLookupProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 500 {
		ids := randomIDs(rng, 1+rng.IntN(60), 1+rng.IntN(400))
		limit := 1 + rng.IntN(8)
		want := map[uint32]bool{}
		for _, id := range ids {
			want[id] = true
		}
		got := map[uint32]bool{}
		for rest := ids; len(rest) > 0; {
			var l idLookup
			l, rest = nextIDLookup(rest, limit)
			query := "SELECT job_id FROM usage_ledger WHERE cluster = ? AND " + l.where
			sel, err := evalLookup(query, append([]any{"c"}, l.args...), ids[0]-maxIDGap-1, ids[len(ids)-1]+maxIDGap+1)
			if err != nil {
				t.Fatalf("round %d (seed %d) ids %v: %v: %s %v", round, seed, ids, err, query, l.args)
			}
			if n := strings.Count(l.where, "?") - strings.Count(l.where, "BETWEEN"); n > limit { // ranges + singles
				t.Errorf("round %d (seed %d): %d terms over the limit %d: %s", round, seed, n, limit, l.where)
			}
			for id := range sel {
				got[id] = true
			}
		}
		for id := range want {
			if !got[id] {
				t.Errorf("round %d (seed %d) ids %v: id %d not selected", round, seed, ids, id)
			}
		}
		for id := range got {
			if !want[id] && !inGap(ids, id) {
				t.Errorf("round %d (seed %d) ids %v: id %d selected outside a range", round, seed, ids, id)
			}
		}
	}
}

// randomIDs returns n distinct sorted ids: clusters (ranges) and isolated
// ids mixed, spread over about n*spread.
func randomIDs(rng *rand.Rand, n, spread int) []uint32 {
	set := map[uint32]bool{}
	base := uint32(700000 + rng.IntN(1000))
	for len(set) < n {
		id := base + uint32(rng.IntN(n*spread))
		set[id] = true
		if rng.IntN(3) == 0 { // a neighbour, to make a range
			set[id+1+uint32(rng.IntN(maxIDGap))] = true
		}
	}
	ids := make([]uint32, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// inGap tells whether id lies between two neighbours of ids at most
// maxIDGap apart (a range scan reads it; scanExisting drops it).
func inGap(ids []uint32, id uint32) bool {
	i, _ := slices.BinarySearch(ids, id)
	return i > 0 && i < len(ids) && ids[i]-ids[i-1] <= maxIDGap
}
