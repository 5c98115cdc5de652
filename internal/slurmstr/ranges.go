package slurmstr

import (
	"strconv"
	"strings"
)

// ExpandRanges reads a Slurm range list such as "0-3,8,10-11" (core ids,
// socket and device index lists) into its numbers, in order. Only digits,
// '-' and ',' are accepted: no signs, spaces or empty items; a range may
// not run backwards and no number may exceed max.
func ExpandRanges(s string, max int) ([]int, error) {
	out, why := expandRanges(s, max)
	if why != "" {
		return nil, newError("range list", s, "", "%s", why)
	}
	return out, nil
}

// expandRanges expands "0-2,5" to [0 1 2 5]; numbers above max are refused.
func expandRanges(s string, max int) ([]int, string) {
	var out []int
	for r := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, ok1 := parseDigits(lo)
		b, ok2 := a, true
		if isRange {
			b, ok2 = parseDigits(hi)
		}
		if !ok1 || !ok2 || b < a || b > uint64(max) {
			return nil, "bad range " + strconv.Quote(r) + ": want N or N-M, digits only, N <= M <= " + strconv.Itoa(max)
		}
		for i := a; i <= b; i++ {
			out = append(out, int(i))
		}
	}
	return out, ""
}
