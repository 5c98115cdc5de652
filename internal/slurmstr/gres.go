package slurmstr

import (
	"strconv"
	"strings"
)

// GRES is one entry of a GRES string: gpu:h100:4(S:0-1).
type GRES struct {
	Name string // gpu, shard, mps, ...
	Type string // h100, 1g.10gb; "" when untyped
	// NoConsume is the no_consume flag of slurm.conf's Gres= (the GRES is
	// not used up by jobs).
	NoConsume bool
	Count     int64
	// Detail is what Slurm appends in parentheses, verbatim: the sockets of
	// a node's GRES "(S:0-1)", the indices in use "(IDX:0-3)", "(IDX:N/A)"
	// when none, "(IDX:)" for a type a job got none of. "" when absent.
	Detail string
}

// TRESName is the GRES's name as a TRES name: gpu, gpu:h100.
func (g GRES) TRESName() string {
	if g.Type == "" {
		return g.Name
	}
	return g.Name + ":" + g.Type
}

// String writes the entry as Slurm does: name[:type][:no_consume]:count
// followed by the detail. The count is always written (a bare "gpu" reads
// back as "gpu:1") and without a unit suffix.
func (g GRES) String() string {
	var b strings.Builder
	b.WriteString(g.Name)
	if g.Type != "" {
		b.WriteString(":" + g.Type)
	}
	if g.NoConsume {
		b.WriteString(":no_consume")
	}
	b.WriteString(":" + strconv.FormatInt(g.Count, 10))
	b.WriteString(g.Detail)
	return b.String()
}

// Indices returns the device indices of an "(IDX:...)" detail, e.g. [0 2 3]
// for (IDX:0,2-3); ok is false when there is no index list or it is N/A or
// empty.
func (g GRES) Indices() (idx []int, ok bool) { return g.detailList("IDX") }

// Sockets returns the socket list of an "(S:...)" detail.
func (g GRES) Sockets() (s []int, ok bool) { return g.detailList("S") }

func (g GRES) detailList(key string) ([]int, bool) {
	d := g.Detail
	for d != "" {
		end := strings.IndexByte(d, ')')
		if end < 0 || d[0] != '(' {
			return nil, false
		}
		k, v, _ := strings.Cut(d[1:end], ":")
		d = d[end+1:]
		if k != key || v == "" || v == "N/A" {
			continue
		}
		out, err := expandRanges(v, maxIndex)
		return out, err == ""
	}
	return nil, false
}

// FormatGRES joins entries with commas.
func FormatGRES(gs []GRES) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return strings.Join(parts, ",")
}

// ParseGRES reads a GRES string as slurmctld, sinfo, slurmrestd and
// slurm_acct_db print it for nodes (Gres=, GresUsed=, %G, gres, gres_used)
// and jobs (JOB_GRES=, GRES=, gres_detail, gres_used), and as slurm.conf's
// Gres= takes it: "gpu:h100:4(S:0-3)", "gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:1)",
// "gpu:h100:0(IDX:N/A)", "shard:8", "vmem:2G". A count may carry a unit
// suffix, a power of 1024 (4K is 4096); an entry without a count counts one.
// "", "(null)" and "N/A" are the empty list. See the package doc for the
// forms refused.
func ParseGRES(s string) ([]GRES, error) {
	if isNull(s) || strings.TrimSpace(s) == "N/A" {
		return nil, nil
	}
	var out []GRES
	for _, entry := range SplitTop(s, '(', ')') {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, newError("GRES", s, "", "empty entry (two commas, or one at an end)")
		}
		g, why := parseGRESEntry(entry)
		if why != "" {
			return nil, newError("GRES", s, entry, "%s", why)
		}
		out = append(out, g)
	}
	return out, nil
}

// parseGRESEntry reads [gres/|gres:]name[:type][:no_consume][:count][(detail)...].
func parseGRESEntry(entry string) (GRES, string) {
	body := entry
	if b, ok := strings.CutPrefix(body, "gres/"); ok {
		body = b
	} else if b, ok := strings.CutPrefix(body, "gres:"); ok {
		body = b
	}
	head, detail := splitDetail(body)
	if why := checkDetail(detail); why != "" {
		return GRES{}, why
	}
	fields := strings.Split(head, ":")
	g := GRES{Name: fields[0], Count: 1, Detail: detail}
	if !validGRESName(g.Name) {
		return GRES{}, "GRES name " + strconv.Quote(g.Name) + " is not a name (a letter, then letters, digits, _; not gres)"
	}
	var rest []string
	for _, f := range fields[1:] {
		if f == "no_consume" {
			if g.NoConsume {
				return GRES{}, "no_consume given twice"
			}
			g.NoConsume = true
			continue
		}
		rest = append(rest, f)
	}
	var typ, count string
	hasType, hasCount := false, false
	switch len(rest) {
	case 0:
	case 1:
		switch x := rest[0]; {
		case isCount(x):
			count, hasCount = x, true
		case looksLikeLowerCount(x):
			return GRES{}, "count or type " + strconv.Quote(x) + "? Slurm's units are upper-case (K, M, G, T, P); write NAME:TYPE:COUNT for a type"
		default:
			typ, hasType = x, true
		}
	case 2:
		typ, count, hasType, hasCount = rest[0], rest[1], true, true
	default:
		return GRES{}, "more than one type: want NAME[:TYPE][:COUNT]"
	}
	if hasType {
		switch {
		case typ == "(null)":
			typ = ""
		case typ == "":
			return GRES{}, "empty type: want NAME[:TYPE][:COUNT]"
		case !validGRESType(typ):
			return GRES{}, "type " + strconv.Quote(typ) + " has a character Slurm does not allow in a GRES type"
		}
	}
	g.Type = typ
	if hasCount {
		n, why := parseCount(count, 0)
		if why != "" {
			return GRES{}, why
		}
		g.Count = n
	}
	return g, ""
}

// splitDetail cuts body at its first "(" that does not open the type
// "(null)".
func splitDetail(body string) (head, detail string) {
	for i := 0; i < len(body); i++ {
		if body[i] != '(' {
			continue
		}
		if i > 0 && body[i-1] == ':' && strings.HasPrefix(body[i:], "(null)") {
			i += len("(null)") - 1
			continue
		}
		return body[:i], body[i:]
	}
	return body, ""
}

// maxIndex bounds socket and device numbers in a detail.
const maxIndex = 1 << 16

// checkDetail accepts a run of "(S:list)" and "(IDX:list)" groups, where
// list is a range list (0-1,3), N/A, or empty.
func checkDetail(d string) string {
	for d != "" {
		if d[0] != '(' {
			return "text after the parenthesis: " + strconv.Quote(d)
		}
		end := strings.IndexByte(d, ')')
		if end < 0 {
			return "unbalanced parenthesis in " + strconv.Quote(d)
		}
		group := d[1:end]
		if strings.IndexByte(group, '(') >= 0 {
			return "unbalanced parenthesis in " + strconv.Quote(d)
		}
		k, v, ok := strings.Cut(group, ":")
		if !ok || (k != "S" && k != "IDX") {
			return "detail " + strconv.Quote("("+group+")") + " is neither (S:...) nor (IDX:...); it may change what the count means, so it is refused"
		}
		if v != "" && v != "N/A" {
			if _, why := expandRanges(v, maxIndex); why != "" {
				return "detail " + strconv.Quote("("+group+")") + ": " + why
			}
		}
		d = d[end+1:]
	}
	return ""
}

// validGRESName: a letter, then letters, digits and _; not "gres", which
// would read back as the prefix of the older spelling gres:gpu:2.
func validGRESName(s string) bool {
	if s == "" || !isLetter(s[0]) || s == "gres" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// validGRESType: the characters of GPU types and MIG profiles
// (h100, 1g.10gb, nvidia_a100-sxm4-80gb, hbm3_3g.40gb).
func validGRESType(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && !strings.ContainsRune("_.+-", rune(c)) {
			return false
		}
	}
	return true
}

// looksLikeLowerCount: digits and one lower-case unit letter ("2g"), which
// Slurm would read as a count and a person may mean as a type.
func looksLikeLowerCount(s string) bool {
	if len(s) < 2 || !isLowerUnit(s[len(s)-1]) {
		return false
	}
	_, ok := parseDigits(s[:len(s)-1])
	return ok
}
