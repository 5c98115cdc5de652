package slurmrest

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// splitList splits Slurm's comma-separated strings; "" gives nil.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// wireTRESList builds a TRES list for a write: set entries need counts
// >= 0; clear names TRES keys whose limit is removed (sent as Slurm's -1,
// the only place this client writes it).
func wireTRESList(set []TRES, clear []string, field string) ([]wTRES, error) {
	var out []wTRES
	seen := map[string]bool{}
	for _, t := range set {
		if t.Type == "" {
			return nil, fmt.Errorf("%w: %s entry %q has no type", ErrInvalid, field, t.String())
		}
		if t.Count < 0 {
			return nil, fmt.Errorf("%w: %s %s has count %d; counts are >= 0 (list the TRES in the Clear field to remove a limit)", ErrInvalid, field, t.Key(), t.Count)
		}
		if seen[t.Key()] {
			return nil, fmt.Errorf("%w: %s lists %s twice", ErrInvalid, field, t.Key())
		}
		seen[t.Key()] = true
		out = append(out, wTRES{Type: t.Type, Name: t.Name, Count: t.Count})
	}
	for _, k := range clear {
		typ, name := slurmstr.ParseTRESKey(k)
		if typ == "" {
			return nil, fmt.Errorf("%w: %s: empty TRES to clear", ErrInvalid, field)
		}
		key := TRES{Type: typ, Name: name}.Key()
		if seen[key] {
			return nil, fmt.Errorf("%w: %s both sets and clears %s", ErrInvalid, field, key)
		}
		seen[key] = true
		out = append(out, wTRES{Type: typ, Name: name, Count: -1})
	}
	return out, nil
}
