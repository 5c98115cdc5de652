package conf

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// NodeGres is a node's GPU GRES as counts per type; an untyped GPU count
// is under the empty type.
type NodeGres map[string]int

// String prints counts in the Gres= form, types in name order.
func (g NodeGres) String() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(g)) {
		if t == "" {
			parts = append(parts, fmt.Sprintf("gpu:%d", g[t]))
		} else {
			parts = append(parts, fmt.Sprintf("gpu:%s:%d", t, g[t]))
		}
	}
	if len(parts) == 0 {
		return "(no GPUs)"
	}
	return strings.Join(parts, ",")
}

// NodeGres returns the counts per type of a rendered result.
func (r Result) NodeGres() NodeGres {
	g := NodeGres{}
	for _, t := range r.Types {
		g[t.Type] += t.Count
	}
	return g
}

// ParseNodeGres reads the GRES string slurmctld reports for a node
// ("gpu:1g.10gb:7,gpu:3g.40gb:2(S:0)", "gpu:h100:2(S:0-1),shard:8",
// "gpu:4") with slurmstr.ParseGRES and returns its GPU counts. Entries of
// other GRES (mps, shard) are left out; entries of one type add up.
func ParseNodeGres(s string) (NodeGres, error) {
	gs, err := slurmstr.ParseGRES(s)
	if err != nil {
		return nil, err
	}
	return NodeGresOf(gs), nil
}

// NodeGresOf counts the GPU entries of parsed GRES per type. A count above
// what an int holds cannot come from a real node; it is clipped to the
// largest int so that a comparison still reports the difference.
func NodeGresOf(gs []slurmstr.GRES) NodeGres {
	g := NodeGres{}
	for _, e := range gs {
		if e.Name != "gpu" {
			continue
		}
		g[e.Type] = addClipped(g[e.Type], e.Count)
	}
	return g
}

func addClipped(a int, b int64) int {
	if b > int64(math.MaxInt-a) {
		return math.MaxInt
	}
	return a + int(b)
}

// Mismatch is one type whose count differs.
type Mismatch struct {
	Type      string `json:"type"` // "" for untyped GPUs
	Inventory int    `json:"inventory"`
	Slurm     int    `json:"slurm"`
}

func (m Mismatch) String() string {
	t := m.Type
	if t == "" {
		t = "(untyped)"
	}
	return fmt.Sprintf("gpu:%s: inventory %d, Slurm %d", t, m.Inventory, m.Slurm)
}

// Compare returns the types whose counts differ between the inventory's
// rendering (want) and what slurmctld reports (got), in type order; none
// means they agree.
func Compare(want, got NodeGres) []Mismatch {
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var out []Mismatch
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if want[k] != got[k] {
			out = append(out, Mismatch{Type: k, Inventory: want[k], Slurm: got[k]})
		}
	}
	return out
}
