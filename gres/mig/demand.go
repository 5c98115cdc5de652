package mig

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseDemand reads `--want` values: PROFILE=COUNT or TYPE=COUNT items,
// comma-separated, each profile once.
func ParseDemand(want []string) (Demand, error) {
	d := Demand{}
	for _, item := range want {
		for _, w := range strings.Split(item, ",") {
			if w = strings.TrimSpace(w); w == "" {
				continue
			}
			k, v, ok := strings.Cut(w, "=")
			n, err := strconv.Atoi(v)
			if !ok || k == "" || err != nil || n < 0 {
				return nil, fmt.Errorf("--want %q: expected PROFILE=COUNT, e.g. 1g.10gb=7", w)
			}
			if _, dup := d[k]; dup {
				return nil, fmt.Errorf("--want: %s given twice", k)
			}
			d[k] = n
		}
	}
	if len(d) == 0 {
		return nil, errors.New("say what to plan with --want PROFILE=COUNT (comma-separated)")
	}
	return d, nil
}
