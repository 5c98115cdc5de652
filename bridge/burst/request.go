package burst

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Request is a job's GPU count per type (h100, 1g.10gb, ...), for the whole
// job (all nodes, one array task). The empty type "" holds GPUs asked for
// without a type (--gres=gpu:2), which typed QOS limits do not see.
type Request map[string]int64

// Total is the number of GPUs of every type, untyped included.
func (r Request) Total() int64 {
	var n int64
	for _, v := range r {
		n += v
	}
	return n
}

// Typed is the number of GPUs of a named type.
func (r Request) Typed() int64 { return r.Total() - r[""] }

// Types returns the typed GPU types of r, sorted.
func (r Request) Types() []string {
	var ts []string
	for _, t := range slices.Sorted(maps.Keys(r)) {
		if t != "" && r[t] > 0 {
			ts = append(ts, t)
		}
	}
	return ts
}

// String writes r as h100:2,1g.10gb:1 (typed, sorted; untyped as gpu:N).
func (r Request) String() string {
	var parts []string
	for _, t := range r.Types() {
		parts = append(parts, t+":"+strconv.FormatInt(r[t], 10))
	}
	if n := r[""]; n > 0 {
		parts = append(parts, "gpu:"+strconv.FormatInt(n, 10))
	}
	return strings.Join(parts, ",")
}

// add merges o into r.
func (r Request) add(o Request) {
	for t, n := range o {
		r[t] += n
	}
}

// RequestFields are the TRES strings slurmctld reports for a job.
type RequestFields struct {
	// TRESRequested is tres_req_str: the job's total, e.g.
	// "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1,gres/gpu:h100=1".
	TRESRequested string
	// TRESPerJob is tres_per_job (--gpus), e.g. "gres/gpu:h100:2".
	TRESPerJob string
	// TRESPerNode is tres_per_node (--gres), e.g. "gres/gpu:h100:1".
	TRESPerNode string
	// Nodes is the job's node count (minimum); 0 is taken as 1.
	Nodes int64
}

// ParseRequest reads a job's GPU request. The rule, in order:
//  1. typed entries of tres_req_str (gres/gpu:TYPE=N) are the job's total;
//  2. else typed entries of tres_per_job;
//  3. else typed entries of tres_per_node times the node count;
//  4. else an untyped count (gres/gpu=N, gres/gpu:N) from the same fields, in
//     the same order, under the type "".
//
// Entries other than gres/gpu (cpu, mem, gres/shard, licenses) are ignored.
// An unparsable entry is an error naming it.
func ParseRequest(f RequestFields) (Request, error) {
	nodes := max(f.Nodes, 1)
	sources := []struct {
		name string
		s    string
		mult int64
	}{
		{"tres_req_str", f.TRESRequested, 1},
		{"tres_per_job", f.TRESPerJob, 1},
		{"tres_per_node", f.TRESPerNode, nodes},
	}
	var untyped int64
	for _, src := range sources {
		r, err := parseTRESList(src.s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", src.name, src.s, err)
		}
		for t := range r {
			r[t] *= src.mult
		}
		if r.Typed() > 0 {
			delete(r, "")
			return r, nil
		}
		if untyped == 0 {
			untyped = r[""]
		}
	}
	if untyped > 0 {
		return Request{"": untyped}, nil
	}
	return Request{}, nil
}

// parseTRESList reads the gres/gpu entries of a comma-separated TRES list in
// any of Slurm's spellings: gres/gpu:h100=2, gres/gpu:h100:2, gres:gpu:h100:2,
// gres/gpu:h100 (count 1), gres/gpu=2, gres/gpu:2, gpu:h100:2.
func parseTRESList(s string) (Request, error) {
	r := Request{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		typ, n, ok, err := parseGPUEntry(e)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", e, err)
		}
		if ok {
			r[typ] += n
		}
	}
	return r, nil
}

// parseGPUEntry reads one entry; ok is false for entries that are not GPUs.
func parseGPUEntry(e string) (typ string, n int64, ok bool, err error) {
	name := e
	switch {
	case strings.HasPrefix(name, "gres/"):
		name = strings.TrimPrefix(name, "gres/")
	case strings.HasPrefix(name, "gres:"):
		name = strings.TrimPrefix(name, "gres:")
	case strings.HasPrefix(name, "gpu"):
	default:
		return "", 0, false, nil // cpu=, mem=, license/..., billing=
	}
	count := ""
	if k, v, found := strings.Cut(name, "="); found {
		name, count = k, v
	}
	parts := strings.Split(name, ":")
	if parts[0] != "gpu" {
		return "", 0, false, nil // gres/shard, gres/gpumem, ...
	}
	parts = parts[1:]
	if count == "" && len(parts) > 0 && isCount(parts[len(parts)-1]) {
		count, parts = parts[len(parts)-1], parts[:len(parts)-1]
	}
	if len(parts) > 1 {
		return "", 0, false, fmt.Errorf("more than one GPU type")
	}
	if len(parts) == 1 {
		typ = parts[0]
		if typ == "" {
			return "", 0, false, fmt.Errorf("empty GPU type")
		}
	}
	if count == "" {
		return typ, 1, true, nil
	}
	// Slurm may print counts with a unit suffix for large numbers; GPUs never
	// need one, so anything but digits is an error.
	v, perr := strconv.ParseInt(count, 10, 64)
	if perr != nil || v < 0 {
		return "", 0, false, fmt.Errorf("count %q is not a whole number", count)
	}
	return typ, v, true, nil
}

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
