package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// TRES is one trackable resource with a count: cpu=8, mem=16000,
// gres/gpu:h100=4. In limits (QOS GrpTRES) the count is the limit.
type TRES struct {
	Type  string // cpu, mem, node, billing, energy, gres, license, fs, ...
	Name  string // for gres: gpu or gpu:h100; empty for cpu, mem, node
	ID    int    // slurmdbd's TRES id; 0 when unknown. Never hard-code ids.
	Count int64
}

// GPU is the TRES gres/gpu:<typ> (gres/gpu when typ is empty) with count n.
func GPU(typ string, n int64) TRES {
	name := "gpu"
	if typ != "" {
		name += ":" + typ
	}
	return TRES{Type: "gres", Name: name, Count: n}
}

// Key is the TRES's name as Slurm prints it: "cpu", "gres/gpu:h100".
func (t TRES) Key() string {
	if t.Name == "" {
		return t.Type
	}
	return t.Type + "/" + t.Name
}

// String is "key=count", e.g. gres/gpu:h100=16.
func (t TRES) String() string { return t.Key() + "=" + strconv.FormatInt(t.Count, 10) }

// FormatTRES joins TRES as Slurm writes them: "cpu=4,gres/gpu:h100=2".
func FormatTRES(ts []TRES) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// ParseTRESKey splits "gres/gpu:h100" into type "gres" and name "gpu:h100".
func ParseTRESKey(key string) (typ, name string) {
	typ, name, _ = strings.Cut(strings.TrimSpace(key), "/")
	return typ, name
}

// ParseTRES reads Slurm's TRES strings such as
// "cpu=8,mem=16000M,billing=8,gres/gpu:h100=4". Memory suffixes K, M, G, T
// are converted to megabytes (Slurm's unit for mem).
func ParseTRES(s string) ([]TRES, error) {
	var out []TRES
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("TRES %q: want key=count", part)
		}
		n, err := parseTRESCount(v)
		if err != nil {
			return nil, fmt.Errorf("TRES %q: %w", part, err)
		}
		typ, name := ParseTRESKey(k)
		out = append(out, TRES{Type: typ, Name: name, Count: n})
	}
	return out, nil
}

func parseTRESCount(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "K"):
		v, mult = strings.TrimSuffix(v, "K"), -1024 // kilobytes: divide
	case strings.HasSuffix(v, "M"):
		v = strings.TrimSuffix(v, "M")
	case strings.HasSuffix(v, "G"):
		v, mult = strings.TrimSuffix(v, "G"), 1024
	case strings.HasSuffix(v, "T"):
		v, mult = strings.TrimSuffix(v, "T"), 1024*1024
	}
	if strings.Contains(v, ".") {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("count %q is not a number", v)
		}
		if mult < 0 {
			return int64(f / float64(-mult)), nil
		}
		return int64(f * float64(mult)), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("count %q is not a number", v)
	}
	if mult < 0 {
		return n / -mult, nil
	}
	return n * mult, nil
}

// ListTRES returns every TRES slurmdbd knows, with its id
// (GET /slurmdb/{v}/tres/).
func (c *Client) ListTRES(ctx context.Context) ([]TRES, error) {
	var resp struct {
		envelope
		TRES []wTRES `json:"TRES"`
	}
	if err := c.do(ctx, http.MethodGet, c.dbPath("tres/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list TRES: %w", err)
	}
	return fromWireTRES(resp.TRES), nil
}
