package slurmstr

import (
	"strconv"
	"strings"
)

// TRES is one trackable resource with a count: cpu=8, mem=16000M,
// gres/gpu:h100=4. In a limit (QOS GrpTRES) the count is the limit.
type TRES struct {
	Type string // cpu, mem, energy, node, billing, fs, vmem, pages, gres, license, bb, ic
	Name string // gres: gpu or gpu:h100; fs: disk; license: its name; "" for cpu, mem, node, ...
	// ID is slurmdbd's id of the TRES (tres_table.id); 0 when not known.
	// Ids differ between clusters: look them up, never hard-code them.
	ID int
	// Count is in the TRES's unit: megabytes for mem, gres/gpumem and bb,
	// one for everything else. Infinite and NoValue are the only negative
	// counts a parser returns.
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

// String is "key=count" (gres/gpu:h100=16), the count in the TRES's unit
// without a suffix; Infinite is written NONE, as Slurm does.
func (t TRES) String() string {
	if t.Count == Infinite {
		return t.Key() + "=NONE"
	}
	return t.Key() + "=" + strconv.FormatInt(t.Count, 10)
}

// GPU returns the GPU type of a GPU TRES: "h100" for gres/gpu:h100, "" for
// the untyped gres/gpu. ok is false for every other TRES (cpu, gres/shard,
// gres/gpumem, gres/gpuutil).
func (t TRES) GPU() (typ string, ok bool) {
	if t.Type != "gres" {
		return "", false
	}
	return GPUOf(t.Name)
}

// GPUOf reads a GRES TRES name as tres_table and slurmrestd give it:
// "gpu" is the untyped GPU (typ ""), "gpu:h100" the type h100. ok is false
// for other names ("gpumem", "shard") and for "gpu:" without a type.
func GPUOf(name string) (typ string, ok bool) {
	if name == "gpu" {
		return "", true
	}
	typ, found := strings.CutPrefix(name, "gpu:")
	if !found || !validGRESType(typ) {
		return "", false
	}
	return typ, true
}

// KeyGPU is GPU for a TRES key: "gres/gpu:h100" gives ("h100", true),
// "gres/gpu" ("", true), "cpu" and "gres/gpumem" ok false.
func KeyGPU(key string) (typ string, ok bool) {
	t, n := ParseTRESKey(key)
	return TRES{Type: t, Name: n}.GPU()
}

// ParseTRESKey splits "gres/gpu:h100" into type "gres" and name "gpu:h100"
// (surrounding spaces dropped). It checks nothing: use it on keys this
// program wrote; ParseTRES checks what Slurm sends.
func ParseTRESKey(key string) (typ, name string) {
	typ, name, _ = strings.Cut(strings.TrimSpace(key), "/")
	return typ, name
}

// FormatTRES joins TRES as Slurm writes them: "cpu=4,gres/gpu:h100=2".
func FormatTRES(ts []TRES) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// ParseTRES reads a TRES list in the name form slurmctld, sacct, sacctmgr
// and slurmrestd print: "cpu=8,mem=16000M,billing=8,gres/gpu:h100=4"
// (CfgTRES, AllocTRES, tres_req_str, GrpTRES, ...). Counts are returned in
// the TRES's unit (mem in megabytes: 2G gives 2048); NONE gives Infinite.
// "" and "(null)" are the empty list. Entries come back in order, a key
// given twice twice: the caller decides what a repeat means. See the
// package doc for what is refused.
func ParseTRES(s string) ([]TRES, error) {
	if isNull(s) {
		return nil, nil
	}
	var out []TRES
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		t, why := parseTRESEntry(entry)
		if why != "" {
			return nil, newError("TRES", s, entry, "%s", why)
		}
		out = append(out, t)
	}
	return out, nil
}

// parseTRESEntry reads "type[/name]=count".
func parseTRESEntry(entry string) (TRES, string) {
	key, v, ok := strings.Cut(entry, "=")
	if !ok {
		return TRES{}, "want TYPE[/NAME]=COUNT, e.g. cpu=4 or gres/gpu:h100=2"
	}
	typ, name, hasName := strings.Cut(key, "/")
	if !validTRESType(typ) {
		return TRES{}, "TRES type " + strconv.Quote(typ) + " is not a Slurm TRES type (letters, digits, _)"
	}
	if hasName {
		if why := checkTRESName(typ, name); why != "" {
			return TRES{}, why
		}
	}
	t := TRES{Type: typ, Name: name}
	if v == "NONE" {
		t.Count = Infinite
		return t, ""
	}
	n, why := parseCount(v, baseShift(typ, name))
	if why != "" {
		return TRES{}, why
	}
	t.Count = n
	return t, ""
}

// baseShift is the unit Slurm keeps a TRES's count in: megabytes for
// memory, GPU memory and burst buffers, one otherwise.
func baseShift(typ, name string) uint {
	if typ == "mem" || typ == "bb" || (typ == "gres" && name == "gpumem") {
		return 20
	}
	return 0
}

func validTRESType(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// checkTRESName checks the part after the slash: a GRES name[:type] for
// gres, a name of [A-Za-z0-9_.:@+-] for the others (licenses, fs/disk, bb).
func checkTRESName(typ, name string) string {
	if typ == "gres" {
		n, t, typed := strings.Cut(name, ":")
		if !validGRESName(n) || (typed && !validGRESType(t)) {
			return "GRES TRES name " + strconv.Quote(name) + " is not NAME or NAME:TYPE (e.g. gpu:h100)"
		}
		return ""
	}
	if name == "" {
		return "empty TRES name after " + strconv.Quote(typ+"/")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !isDigit(c) && !strings.ContainsRune("_.:@+-", rune(c)) {
			return "TRES name " + strconv.Quote(name) + " has a character Slurm does not print there"
		}
	}
	return ""
}

// ParseTRESPer reads a job's per-unit request as slurmctld and slurmrestd
// print it in tres_per_job, tres_per_node, tres_per_socket and
// tres_per_task (and squeue's %b): "gres/gpu:h100:2",
// "gres/gpu:1g.10gb:1,gres/gpu:3g.40gb:1", "cpu=2,gres/gpu:1g.10gb=1". An
// entry is either a GRES request ("gres/gpu:h100:2"; the older spellings
// "gres:gpu:2" and "gpu:2" too), returned as TRES{Type: "gres", Name:
// "gpu:h100", Count: 2}, or a TRES "key=count" as ParseTRES reads it. A
// request without a count asks for one. "", "(null)" and "N/A" are the
// empty list.
func ParseTRESPer(s string) ([]TRES, error) {
	if isNull(s) || s == "N/A" {
		return nil, nil
	}
	var out []TRES
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if strings.Contains(entry, "=") {
			t, why := parseTRESEntry(entry)
			if why != "" {
				return nil, newError("TRES request", s, entry, "%s", why)
			}
			out = append(out, t)
			continue
		}
		g, why := parseGRESEntry(entry)
		if why == "" && (g.Detail != "" || g.NoConsume) {
			why = "a request carries no socket or index list and no flags"
		}
		if why != "" {
			return nil, newError("TRES request", s, entry, "%s", why)
		}
		out = append(out, TRES{Type: "gres", Name: g.TRESName(), Count: g.Count})
	}
	return out, nil
}

// isNull is true for the strings Slurm prints for "nothing": "" and "(null)".
func isNull(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || s == "(null)"
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
