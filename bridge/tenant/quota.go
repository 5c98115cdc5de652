package tenant

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Quota is the number of GPUs a tenant may hold at once, per GPU type or
// MIG profile: {"h100": 16, "1g.10gb": 14}. In Slurm it becomes
// GrpTRES=gres/gpu:h100=16,gres/gpu:1g.10gb=14 on the tenant's QOS.
type Quota map[string]int64

// Clone returns a copy of q (nil stays nil).
func (q Quota) Clone() Quota {
	if q == nil {
		return nil
	}
	return maps.Clone(q)
}

// Types returns the GPU types of q, sorted.
func (q Quota) Types() []string { return slices.Sorted(maps.Keys(q)) }

// Total is the sum over all types.
func (q Quota) Total() int64 {
	var n int64
	for _, v := range q {
		n += v
	}
	return n
}

// String writes q the way the command line takes it: h100:16,1g.10gb:14
// (types sorted). An empty quota is "".
func (q Quota) String() string {
	parts := make([]string, 0, len(q))
	for _, k := range q.Types() {
		parts = append(parts, k+":"+strconv.FormatInt(q[k], 10))
	}
	return strings.Join(parts, ",")
}

// QuotaChange is a parsed gpus= value: types to set and, for modify,
// types to drop (written type:none).
type QuotaChange struct {
	Set  Quota
	Drop []string
}

// ParseQuota reads the command-line form "h100:16,1g.10gb:14" ('=' is
// accepted in place of ':'). A count of "none" drops the type (for
// `modify ... set gpus=`). Problems are reported per entry under field.
func ParseQuota(field, s string) (QuotaChange, Problems) {
	var ps Problems
	qc := QuotaChange{Set: Quota{}}
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		typ, count, ok := strings.Cut(entry, ":")
		if !ok {
			typ, count, ok = strings.Cut(entry, "=")
		}
		typ = strings.TrimSpace(typ)
		if !ok {
			ps.Add(field, "%q has no count; write TYPE:COUNT such as h100:16", entry)
			continue
		}
		f := field + "." + typ
		if seen[typ] {
			ps.Add(f, "is given twice; give each GPU type once")
			continue
		}
		seen[typ] = true
		if strings.EqualFold(strings.TrimSpace(count), "none") {
			qc.Drop = append(qc.Drop, typ)
			continue
		}
		n, msg := ParseCount(count, MaxGPUs)
		if msg != "" {
			ps.Add(f, "%s", msg)
			continue
		}
		qc.Set[typ] = n
	}
	return qc, ps
}

// Apply returns q with the change applied (q is not modified).
func (c QuotaChange) Apply(q Quota) Quota {
	out := q.Clone()
	if out == nil {
		out = Quota{}
	}
	maps.Copy(out, c.Set)
	for _, t := range c.Drop {
		delete(out, t)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// GPUTRES is the Slurm TRES name of a GPU type: gres/gpu:h100.
func GPUTRES(typ string) string { return "gres/gpu:" + typ }
