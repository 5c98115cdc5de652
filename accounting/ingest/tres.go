package ingest

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// gpuTRES maps slurmdbd's TRES ids to GPU types, as read from tres_table.
type gpuTRES struct {
	typed   map[int64]string // id -> type ("h100", "1g.10gb")
	untyped int64            // id of gres/gpu; 0 if unknown
	lo, hi  int64            // range of GPU ids, to skip others fast
}

// newGPUTRES builds the map from tres_table rows of type "gres".
func newGPUTRES(rows map[int64]string) gpuTRES {
	g := gpuTRES{typed: map[int64]string{}, lo: 1<<63 - 1}
	for id, name := range rows {
		typ, ok := slurmstr.GPUOf(name)
		switch {
		case !ok:
			continue
		case typ == "":
			g.untyped = id
		default:
			g.typed[id] = typ
		}
		g.lo, g.hi = min(g.lo, id), max(g.hi, id)
	}
	return g
}

// filter is an SQL condition on t.tres_alloc that keeps the rows holding
// any GPU TRES, so the server sends only rows that can cost something
// (ids are integers from tres_table, formatted into the text). The Go side
// still decides what each row holds.
func (g gpuTRES) filter() string {
	var ids []int64
	if g.untyped != 0 {
		ids = append(ids, g.untyped)
	}
	for id := range g.typed {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return "FALSE"
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "CONCAT(',', t.tres_alloc) LIKE '%," + strconv.FormatInt(id, 10) + "=%'"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// maxCount rejects Slurm's NO_VAL style markers (e.g. 18446744073709551614).
const maxCount = 1 << 40

// allocs reads the GPU allocations out of a tres_alloc string such as
// "1=8,2=16000,4=1,5=8,1001=2,1003=2" (slurmstr.ScanTRESIDs). Typed entries
// win; the untyped count is used only when there are none. Counts Slurm
// marks as unknown (NO_VAL64) and counts above maxCount are skipped. bad
// counts the malformed entries: a row with one is refused by the reader
// (ErrMalformedTRES), since the entry could be a GPU and skipping it would
// bill the run short.
func (g gpuTRES) allocs(s []byte, buf []meter.Alloc) (out []meter.Alloc, bad int) {
	out = buf[:0]
	var untyped int64
	bad = slurmstr.ScanTRESIDs(s, func(id int, n int64) {
		if n <= 0 || n > maxCount || int64(id) < g.lo || int64(id) > g.hi {
			return
		}
		if int64(id) == g.untyped {
			untyped += n
		} else if typ, ok := g.typed[int64(id)]; ok {
			out = addAlloc(out, typ, n)
		}
	})
	if len(out) == 0 && untyped > 0 {
		out = append(out, meter.Alloc{Type: meter.UntypedGPU, Count: untyped})
	}
	return out, bad
}

// ErrMalformedTRES: a job row's tres_alloc holds an entry that is not
// id=count. The ingest refuses the row (and fails, writing nothing more)
// rather than skip an entry that may be a GPU: the run would be billed
// short, silently. The error names the job and the text; the row must be
// repaired in slurm_acct_db (or the job's record corrected by slurmdbd)
// before the window can be ingested.
var ErrMalformedTRES = errors.New("malformed TRES in a job row")

func addAlloc(out []meter.Alloc, typ string, n int64) []meter.Alloc {
	for i := range out {
		if out[i].Type == typ {
			out[i].Count += n
			return out
		}
	}
	return append(out, meter.Alloc{Type: typ, Count: n})
}

// sortAllocs orders allocations by type (the form meter.Split returns).
func sortAllocs(a []meter.Alloc) {
	slices.SortFunc(a, func(x, y meter.Alloc) int { return cmp.Compare(x.Type, y.Type) })
}

// tresAllocs reads GPU allocations from TRES as slurmrestd lists them
// (type "gres", name "gpu" or "gpu:<type>"), with the same typed-first rule.
func tresAllocs(ts []slurmrest.TRES) []meter.Alloc {
	var out []meter.Alloc
	var untyped int64
	for _, t := range ts {
		typ, ok := t.GPU()
		if !ok || t.Count <= 0 || t.Count > maxCount {
			continue
		}
		if typ == "" {
			untyped += t.Count
		} else {
			out = addAlloc(out, typ, t.Count)
		}
	}
	if len(out) == 0 && untyped > 0 {
		out = append(out, meter.Alloc{Type: meter.UntypedGPU, Count: untyped})
	}
	sortAllocs(out)
	return out
}
