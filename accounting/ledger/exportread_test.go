package ledger

import (
	"math"
	"strconv"
	"testing"
)

func TestParseInts(t *testing.T) {
	cases := map[string]struct {
		in   string
		n    int
		want []int64
		ok   bool
	}{
		"three":       {"1,-2,3", 3, []int64{1, -2, 3}, true},
		"extremes":    {strconv.FormatInt(math.MaxInt64, 10) + "," + strconv.FormatInt(math.MinInt64, 10), 2, []int64{math.MaxInt64, math.MinInt64}, true},
		"zero":        {"0", 1, []int64{0}, true},
		"too many":    {"1,2,3", 2, nil, false},
		"empty field": {"1,,3", 3, nil, false},
		"trailing":    {"1,2,", 3, nil, false},
		"sign only":   {"-", 1, nil, false},
		"plus":        {"+1", 1, nil, false},
		"space":       {"1, 2", 2, nil, false},
		"over max":    {"9223372036854775808", 1, nil, false},
		"under min":   {"-9223372036854775809", 1, nil, false},
		"20 digits":   {"10000000000000000000", 1, nil, false},
		"letters":     {"12a", 1, nil, false},
		"fewer":       {"1,2", 3, []int64{1, 2}, true},
	}
	for name, c := range cases {
		out := make([]int64, c.n)
		k, err := parseInts([]byte(c.in), out)
		if (err == nil) != c.ok {
			t.Errorf("%s: parseInts(%q) error %v, want ok %v", name, c.in, err, c.ok)
			continue
		}
		if c.ok && (k != len(c.want) || !equal(out[:k], c.want)) {
			t.Errorf("%s: parseInts(%q) = %v (%d), want %v", name, c.in, out[:k], k, c.want)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
