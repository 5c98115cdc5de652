package slurmstr

import (
	"slices"
	"strconv"
	"strings"
)

// MaxHosts bounds what one hostlist may expand to.
const MaxHosts = 100000

// ExpandHostlist expands a Slurm hostlist: "gpu-[01-03,7],cpu-a" gives
// gpu-01, gpu-02, gpu-03, gpu-7 and cpu-a; "rack[1-2]-n[1-2]" gives rack1-n1,
// rack1-n2, rack2-n1, rack2-n2. A range keeps the width of its first number
// (01-03 gives 01, 02, 03). "", "(null)" and "None assigned" (a job that
// got no nodes) give none. Refused: "ALL" (it means every node: expand it
// against the node table), letters in brackets (Slurm's brackets hold
// numbers and ranges of numbers only), a range that runs backwards,
// unbalanced or nested brackets, characters that are not in host names,
// and more than MaxHosts names.
func ExpandHostlist(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "", "(null)", "None assigned":
		return nil, nil
	case "ALL":
		return nil, newError("hostlist", s, "", "ALL names every node; expand it against the node table")
	}
	var out []string
	for _, expr := range SplitTop(s, '[', ']') {
		if expr == "" {
			continue
		}
		names, why := expandExpr(expr, MaxHosts-len(out))
		if why != "" {
			return nil, newError("hostlist", s, expr, "%s", why)
		}
		out = append(out, names...)
	}
	return out, nil
}

// expandExpr expands one host expression (no top-level commas) into at
// most limit names.
func expandExpr(expr string, limit int) ([]string, string) {
	// Split into literal text and bracket groups, each group expanded to
	// its alternatives.
	var parts [][]string
	total := 1
	for rest := expr; rest != "" || len(parts) == 0; {
		open := strings.IndexAny(rest, "[]")
		if open < 0 {
			open = len(rest)
		} else if rest[open] == ']' {
			return nil, "unbalanced brackets"
		}
		lit := rest[:open]
		if !validHostChars(lit) {
			return nil, "a host name has a character Slurm does not allow (letters, digits, - _ .)"
		}
		parts = append(parts, []string{lit})
		if open == len(rest) {
			break
		}
		closing := strings.IndexAny(rest[open+1:], "[]")
		if closing < 0 || rest[open+1+closing] == '[' {
			return nil, "unbalanced brackets"
		}
		body := rest[open+1 : open+1+closing]
		alts, why := expandAlternatives(body, limit)
		if why != "" {
			return nil, why
		}
		parts = append(parts, alts)
		if total *= len(alts); total > limit {
			return nil, "expands to more than " + strconv.Itoa(MaxHosts) + " names"
		}
		rest = rest[open+1+closing+1:]
	}
	names := []string{""}
	for _, p := range parts {
		next := make([]string, 0, len(names)*len(p))
		for _, n := range names {
			for _, a := range p {
				next = append(next, n+a)
			}
		}
		names = next
	}
	if len(names) == 1 && names[0] == "" {
		return nil, ""
	}
	return names, ""
}

// expandAlternatives expands the inside of brackets: "01-03,7,a".
func expandAlternatives(body string, limit int) ([]string, string) {
	if body == "" {
		return nil, "empty brackets"
	}
	var out []string
	for alt := range strings.SplitSeq(body, ",") {
		lo, hi, isRange := strings.Cut(alt, "-")
		if !isRange {
			hi = lo
		}
		a, ok1 := parseDigits(lo)
		b, ok2 := parseDigits(hi)
		if !ok1 || !ok2 {
			return nil, "bad range " + strconv.Quote(alt) + ": brackets hold numbers and ranges of numbers (01-03,7)"
		}
		if b < a {
			return nil, "bad range " + strconv.Quote(alt) + ": it runs backwards"
		}
		if b-a >= uint64(limit) || len(out)+int(b-a) >= limit {
			return nil, "expands to more than " + strconv.Itoa(MaxHosts) + " names"
		}
		for i := a; i <= b; i++ {
			out = append(out, padded(i, len(lo)))
		}
	}
	return out, ""
}

func padded(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func validHostChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// CompressHostlist writes host names as one hostlist, the way Slurm
// prints them: names that differ only in a trailing number become a
// bracketed range ("gpu-[01-03,07]"); others stay as they are. Names are
// grouped by prefix in the order they first appear, numbers sorted, repeats
// dropped: ExpandHostlist gives back the same set of names.
func CompressHostlist(names []string) string {
	type key struct {
		prefix string
		width  int // digits of a zero-padded number; 0 when not padded
	}
	var order []key
	nums := map[key][]uint64{}
	seenLit := map[string]bool{}
	for _, n := range names {
		i := len(n)
		for i > 0 && isDigit(n[i-1]) {
			i--
		}
		digits := n[i:]
		v, ok := parseDigits(digits)
		if !ok || len(digits) > 18 {
			k := key{prefix: n, width: -1}
			if !seenLit[n] {
				seenLit[n] = true
				order = append(order, k)
			}
			continue
		}
		k := key{prefix: n[:i]}
		if len(digits) > 1 && digits[0] == '0' {
			k.width = len(digits)
		}
		if _, seen := nums[k]; !seen {
			order = append(order, k)
		}
		nums[k] = append(nums[k], v)
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		if k.width < 0 {
			parts = append(parts, k.prefix)
			continue
		}
		vs := slices.Compact(slices.Sorted(slices.Values(nums[k])))
		if len(vs) == 1 {
			parts = append(parts, k.prefix+padded(vs[0], k.width))
			continue
		}
		var ranges []string
		for i := 0; i < len(vs); {
			j := i
			for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
				j++
			}
			r := padded(vs[i], k.width)
			if j > i {
				r += "-" + padded(vs[j], k.width)
			}
			ranges = append(ranges, r)
			i = j + 1
		}
		parts = append(parts, k.prefix+"["+strings.Join(ranges, ",")+"]")
	}
	return strings.Join(parts, ",")
}
