package conf

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
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
// "gpu:4") and returns its GPU counts. Entries of other GRES (mps, shard)
// are ignored; the socket or index lists in parentheses too.
func ParseNodeGres(s string) (NodeGres, error) {
	g := NodeGres{}
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return g, nil
	}
	for _, item := range slurmstr.SplitTop(s, '(', ')') {
		item = strings.TrimSpace(item)
		if i := strings.IndexByte(item, '('); i >= 0 {
			if !strings.HasSuffix(item, ")") {
				return nil, fmt.Errorf("GRES %q: unbalanced parenthesis in %q", s, item)
			}
			item = item[:i]
		}
		if item == "" {
			return nil, fmt.Errorf("GRES %q: empty entry", s)
		}
		fields := strings.Split(item, ":")
		name := fields[0]
		if strings.Contains(name, "/") { // "gres/gpu" in TRES form
			_, name, _ = strings.Cut(name, "/")
		}
		var typ, count string
		switch len(fields) {
		case 1:
			count = "1"
		case 2:
			count = fields[1]
		default:
			typ, count = fields[1], fields[len(fields)-1]
			// "gpu:type:no_consume:2" carries a flag before the count.
		}
		if name != "gpu" {
			continue
		}
		n, err := parseCount(count)
		if err != nil {
			return nil, fmt.Errorf("GRES %q: entry %q: %w", s, item, err)
		}
		if typ == "(null)" {
			typ = ""
		}
		g[typ] += n
	}
	return g, nil
}

func parseCount(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1024, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1024*1024*1024, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("count %q is not a non-negative number", s)
	}
	return n * mult, nil
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
