package slurmstr

import (
	"fmt"
	"math"
)

// Special counts. Slurm keeps counts as unsigned 64-bit numbers and marks
// "no limit" with INFINITE64 (2^64-1) and "no value" with NO_VAL64
// (2^64-2); slurmrestd sends both as the signed numbers -1 and -2, and so do
// we. No other count is negative.
const (
	Infinite int64 = -1 // INFINITE64; "NONE" in a TRES list
	NoValue  int64 = -2 // NO_VAL64, e.g. energy=18446744073709551614
)

const (
	infinite64 = math.MaxUint64     // 18446744073709551615
	noVal64    = math.MaxUint64 - 1 // 18446744073709551614
)

// parseDigits reads a non-empty run of ASCII digits as an unsigned number.
func parseDigits(s string) (uint64, bool) { return digitsOf(s, 0, len(s)) }

// unitShift is the power of 1024 of Slurm's unit suffixes.
func unitShift(c byte) (uint, bool) {
	switch c {
	case 'K':
		return 10, true
	case 'M':
		return 20, true
	case 'G':
		return 30, true
	case 'T':
		return 40, true
	case 'P':
		return 50, true
	}
	return 0, false
}

// isCount reports whether s has the shape of a count: digits with at most
// one unit suffix (K, M, G, T, P).
func isCount(s string) bool {
	if s == "" {
		return false
	}
	if _, ok := unitShift(s[len(s)-1]); ok {
		s = s[:len(s)-1]
	}
	_, ok := parseDigits(s)
	return ok
}

// parseCount reads a count with an optional unit suffix, a power of 1024
// (K, M, G, T, P), as Slurm prints and reads them. baseShift is the unit
// the count is kept in: 20 (megabytes) for mem, gres/gpumem and bb, 0 for
// everything else. A count that is not a whole number of the base unit, a
// fraction, a sign, a lower-case suffix or a value above 2^63-1 is refused;
// the reason is returned.
func parseCount(s string, baseShift uint) (int64, string) {
	digits, shift := s, baseShift // no suffix: the count is in the base unit
	if s != "" {
		last := s[len(s)-1]
		if sh, ok := unitShift(last); ok {
			digits, shift = s[:len(s)-1], sh
		} else if isLowerUnit(last) {
			return 0, fmt.Sprintf("count %q has a lower-case unit: Slurm's units are K, M, G, T, P (powers of 1024)", s)
		}
	}
	n, ok := parseDigits(digits)
	if !ok {
		for i := 0; i < len(digits); i++ {
			if digits[i] == '.' {
				return 0, fmt.Sprintf("count %q has a fraction: Slurm prints whole units", s)
			}
		}
		return 0, fmt.Sprintf("count %q is not a non-negative number", s)
	}
	if shift >= baseShift {
		sh := shift - baseShift
		if sh > 0 && n > math.MaxInt64>>sh {
			return 0, fmt.Sprintf("count %q is too large", s)
		}
		n <<= sh
	} else {
		sh := baseShift - shift
		if n&(1<<sh-1) != 0 {
			return 0, fmt.Sprintf("count %q is not a whole number of the unit Slurm keeps it in (%s)", s, unitName(baseShift))
		}
		n >>= sh
	}
	if n > math.MaxInt64 {
		return 0, fmt.Sprintf("count %q is too large", s)
	}
	return int64(n), ""
}

func isLowerUnit(c byte) bool {
	switch c {
	case 'k', 'm', 'g', 't', 'p':
		return true
	}
	return false
}

func unitName(shift uint) string {
	if shift == 20 {
		return "megabytes"
	}
	return "units"
}
