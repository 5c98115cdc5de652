package reservetest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Synth describes a synthetic year of bookings.
type Synth struct {
	Seed     uint64
	Types    int // GPU types t00, t01, ...
	PerType  int // GPUs of each type in the pool
	Bookings int // bookings in all
	Tenants  int
	From     time.Time
	Span     time.Duration // bookings start within [From, From+Span)
	// Names and Pools, when set, name the first types and size their pools
	// (e.g. the testbed's h100=4); the others are t03, t04, ... of PerType.
	Names []string
	Pools []int
}

// TypeName is the i-th synthetic GPU type.
func TypeName(i int) string { return fmt.Sprintf("t%02d", i) }

// Type is the name of type i in s.
func (s Synth) Type(i int) string {
	if i < len(s.Names) {
		return s.Names[i]
	}
	return TypeName(i)
}

// Pool is the pool size of type i in s.
func (s Synth) Pool(i int) int {
	if i < len(s.Pools) {
		return s.Pools[i]
	}
	return s.PerType
}

// Inventory is a pool with one node per type holding PerType GPUs.
func (s Synth) Inventory() reserve.Inventory {
	var inv reserve.Inventory
	for i := range s.Types {
		inv.Nodes = append(inv.Nodes, reserve.Node{Name: fmt.Sprintf("n%02d", i), GPUs: map[string]int{s.Type(i): s.Pool(i)}})
	}
	return inv
}

// Generate returns bookings spread over the span, 1 to a quarter of the pool each,
// 1 hour to 14 days long, admitted greedily so that none overbooks (the
// ones that would are dropped and others drawn, so the result holds exactly
// Bookings bookings unless the calendar is full).
func (s Synth) Generate() []reserve.Booking {
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	out := make([]reserve.Booking, 0, s.Bookings)
	// A per-type list of commitments, checked by a coarse hourly counter so
	// that generation stays fast.
	hours := int(s.Span/time.Hour) + 24*15
	used := make([][]int, s.Types)
	for i := range used {
		used[i] = make([]int, hours)
	}
	for tries := 0; len(out) < s.Bookings && tries < s.Bookings*20; tries++ {
		ti := rng.IntN(s.Types)
		startH := rng.IntN(int(s.Span / time.Hour))
		lenH := 1 + rng.IntN(14*24)
		if rng.IntN(3) > 0 {
			lenH = 1 + rng.IntN(48) // most bookings are short
		}
		cnt := 1 + rng.IntN(max(1, s.Pool(ti)/4))
		ok := true
		for h := startH; h < startH+lenH; h++ {
			if used[ti][h]+cnt > s.Pool(ti) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for h := startH; h < startH+lenH; h++ {
			used[ti][h] += cnt
		}
		st := s.From.Add(time.Duration(startH) * time.Hour)
		out = append(out, reserve.Booking{
			ID: int64(len(out) + 1), Tenant: fmt.Sprintf("tenant%02d", rng.IntN(max(s.Tenants, 1))), Kind: reserve.KindGPU,
			GPUType: s.Type(ti), Count: cnt, Start: st, End: st.Add(time.Duration(lenH) * time.Hour), State: reserve.StateRequested,
		})
	}
	return out
}
