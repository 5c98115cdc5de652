package slurmstr

import (
	"math"
	"strconv"
	"strings"
)

// ParseTRESIDs reads a TRES list in the id form slurmdbd stores
// (tres_alloc and tres_req of the job and step tables, grp_tres and the
// other limits of the QOS and association tables):
// "1=8,2=16000,3=18446744073709551614,4=1,1001=2". It returns TRES with ID
// and Count set; Type and Name are for the caller to look up in tres_table.
// The count 18446744073709551614 (NO_VAL64) reads as NoValue and
// 18446744073709551615 (INFINITE64) as Infinite. Empty entries (Slurm may
// begin a list with a comma) are skipped; "" is the empty list.
func ParseTRESIDs(s string) ([]TRES, error) {
	var out []TRES
	for i := 0; i < len(s); {
		id, n, next, why := readTRESID(s, i)
		if why != "" {
			return nil, newError("TRES id list", s, entryAt(s, i), "%s", why)
		}
		if id != 0 {
			out = append(out, TRES{ID: id, Count: n})
		}
		i = next
	}
	return out, nil
}

// ScanTRESIDs calls fn for every well-formed entry of an id-form list (as
// ParseTRESIDs reads it) without allocating, for readers of many rows. A
// malformed entry is skipped and counted in bad; what a reader does with a
// row that has one is its decision.
//
// The common entry (digits=digits) is read in one pass here; anything else
// goes through readTRESID, the careful reader ParseTRESIDs uses (the fuzz
// test holds the two to the same answers).
func ScanTRESIDs(b []byte, fn func(id int, count int64)) (bad int) {
	for i := 0; i < len(b); {
		j, id := i, 0
		for j < len(b) && j-i < 10 && b[j] >= '0' && b[j] <= '9' {
			id = id*10 + int(b[j]-'0')
			j++
		}
		if j > i && j < len(b) && b[j] == '=' && id > 0 && id <= math.MaxInt32 {
			k, n := j+1, uint64(0)
			for k < len(b) && k-j <= 19 && b[k] >= '0' && b[k] <= '9' {
				n = n*10 + uint64(b[k]-'0') // 19 digits cannot overflow
				k++
			}
			if k-j == 20 && k < len(b) && b[k] >= '0' && b[k] <= '9' && n <= (math.MaxUint64-9)/10 {
				n = n*10 + uint64(b[k]-'0') // a 20th digit: NO_VAL64 in energy's place
				k++
			}
			if k > j+1 && (k == len(b) || b[k] == ',') {
				c, ok := int64(n), n <= math.MaxInt64
				if n == noVal64 || n == infinite64 {
					c, ok = int64(n), true // -2 and -1: NoValue, Infinite
				}
				if ok {
					fn(id, c)
					i = k + 1
					continue
				}
			}
		}
		id, c, next, why := readTRESID(b, i)
		switch {
		case why != "":
			bad++
		case id != 0:
			fn(id, c)
		}
		i = next
	}
	return bad
}

// FormatTRESIDs writes TRES in the id form: "1=8,1001=2" (NoValue and
// Infinite as slurmdbd stores them).
func FormatTRESIDs(ts []TRES) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.Itoa(t.ID) + "=" + strconv.FormatUint(uint64(t.Count), 10)
	}
	return strings.Join(parts, ",")
}

// readTRESID reads the entry that starts at s[i:] up to the next comma. It
// returns id 0 for an empty entry, and always the index after the entry's
// comma.
func readTRESID[S string | []byte](s S, i int) (id int, count int64, next int, why string) {
	end := i
	for end < len(s) && s[end] != ',' {
		end++
	}
	next = end + 1
	if end == i {
		return 0, 0, next, ""
	}
	eq := i
	for eq < end && s[eq] != '=' {
		eq++
	}
	if eq == end {
		return 0, 0, next, "want ID=COUNT, e.g. 1001=2"
	}
	idv, ok := digitsOf(s, i, eq)
	if !ok || idv == 0 || idv > math.MaxInt32 {
		return 0, 0, next, "TRES id is not a positive number"
	}
	n, ok := digitsOf(s, eq+1, end)
	switch {
	case !ok:
		return 0, 0, next, "count is not a non-negative number"
	case n == noVal64:
		return int(idv), NoValue, next, ""
	case n == infinite64:
		return int(idv), Infinite, next, ""
	case n > math.MaxInt64:
		return 0, 0, next, "count is above 2^63-1 and neither NO_VAL64 nor INFINITE64"
	}
	return int(idv), int64(n), next, ""
}

// digitsOf reads s[from:to] as an unsigned decimal.
func digitsOf[S string | []byte](s S, from, to int) (uint64, bool) {
	if from >= to {
		return 0, false
	}
	var n uint64
	for j := from; j < to; j++ {
		c := s[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// entryAt is the entry of s that starts at i, for error messages.
func entryAt(s string, i int) string {
	e, _, _ := strings.Cut(s[i:], ",")
	return e
}
