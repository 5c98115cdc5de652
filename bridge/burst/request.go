package burst

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
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
		name  string
		s     string
		mult  int64
		parse func(string) ([]slurmstr.TRES, error)
	}{
		{"tres_req_str", f.TRESRequested, 1, slurmstr.ParseTRES},
		{"tres_per_job", f.TRESPerJob, 1, slurmstr.ParseTRESPer},
		{"tres_per_node", f.TRESPerNode, nodes, slurmstr.ParseTRESPer},
	}
	var untyped int64
	for _, src := range sources {
		r, err := gpuRequest(src.parse, src.s)
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

// gpuRequest sums the gres/gpu entries of one of the job's fields, read
// with parse: tres_req_str is a TRES list (slurmstr.ParseTRES:
// gres/gpu:h100=2), the tres_per_* fields are per-unit requests
// (slurmstr.ParseTRESPer: gres/gpu:h100:2, gres:gpu:2, gpu:2). Other entries
// (cpu, mem, gres/shard, gres/gpumem, licenses) are left out; a GPU count
// Slurm marks as unknown or unlimited is an error.
func gpuRequest(parse func(string) ([]slurmstr.TRES, error), s string) (Request, error) {
	ts, err := parse(s)
	if err != nil {
		return nil, err
	}
	r := Request{}
	for _, t := range ts {
		typ, ok := t.GPU()
		if !ok {
			continue
		}
		if t.Count < 0 {
			return nil, fmt.Errorf("%s: the GPU count is not a number", t.Key())
		}
		r[typ] += t.Count
	}
	return r, nil
}
