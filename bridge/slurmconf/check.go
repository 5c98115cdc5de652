package slurmconf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Live is a cluster's configuration as it reports it. Either map may be nil
// when that part could not be read; its settings are then "unknown".
type Live struct {
	// Config holds the keys of `scontrol show config`.
	Config map[string]string
	// Partitions holds each partition's keys, as `scontrol show partition`
	// prints them (Nodes, Default, PriorityTier, PreemptMode, State, QoS).
	Partitions map[string]map[string]string
	// Partial says the maps hold only some keys (slurmrestd reports no
	// PreemptMode, for one): an absent key is then unknown, not missing.
	Partial bool
}

// Status is the outcome of one comparison.
type Status string

// Statuses.
const (
	OK      Status = "ok"
	Differs Status = "differs"
	Missing Status = "missing" // the key or the partition is absent
	Unknown Status = "unknown" // that part of the live configuration was not read
)

// Finding is one rendered setting compared with the live one.
type Finding struct {
	Partition string // empty for a global key
	Key       string
	Want      string
	Got       string
	Status    Status
}

// String is a line for people.
func (f Finding) String() string {
	where := f.Key
	if f.Partition != "" {
		where = "PartitionName=" + f.Partition + " " + f.Key
	}
	switch f.Status {
	case OK:
		return fmt.Sprintf("ok       %s=%s", where, f.Want)
	case Unknown:
		return fmt.Sprintf("unknown  %s: want %s (not read)", where, f.Want)
	case Missing:
		return fmt.Sprintf("missing  %s: want %s", where, f.Want)
	}
	return fmt.Sprintf("differs  %s: want %s, cluster has %s", where, f.Want, f.Got)
}

// Check compares each rendered setting with the live one.
func Check(f Fragment, live Live) []Finding {
	var out []Finding
	for _, s := range f.Settings {
		fd := Finding{Partition: s.Partition, Key: s.Key, Want: s.Value}
		var got string
		var have bool
		switch {
		case s.Partition == "" && live.Config == nil, s.Partition != "" && live.Partitions == nil:
			fd.Status = Unknown
			out = append(out, fd)
			continue
		case s.Partition == "":
			got, have = lookup(live.Config, s.Key)
		default:
			p, ok := live.Partitions[s.Partition]
			if !ok {
				fd.Status, fd.Got = Missing, "no such partition"
				out = append(out, fd)
				continue
			}
			got, have = lookup(p, s.Key)
			if !have && s.Key == "QOS" {
				got, have = lookup(p, "QoS")
			}
		}
		fd.Got = got
		switch {
		case !have && live.Partial:
			fd.Status = Unknown
		case !have:
			fd.Status = Missing
		case same(s, got):
			fd.Status = OK
		default:
			fd.Status = Differs
		}
		out = append(out, fd)
	}
	return out
}

// Failed reports whether any finding is not OK.
func Failed(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Status != OK })
}

func lookup(m map[string]string, key string) (string, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// same compares a setting with the live value by the key's meaning.
func same(s Setting, got string) bool {
	got = strings.TrimSpace(got)
	switch {
	case s.Partition == "" && (s.Key == "AccountingStorageTRES" || s.Key == "GresTypes"):
		// Slurm adds its default TRES (cpu, mem, node, ...) and may track more.
		have := strings.Split(got, ",")
		for _, w := range strings.Split(s.Value, ",") {
			if !slices.Contains(have, w) {
				return false
			}
		}
		return true
	case s.Partition == "" && s.Key == "PreemptMode":
		// e.g. GANG,REQUEUE
		return slices.ContainsFunc(strings.Split(got, ","), func(m string) bool { return strings.EqualFold(m, s.Value) })
	case s.Key == "Nodes":
		w, err1 := slurmstr.ExpandHostlist(s.Value)
		g, err2 := slurmstr.ExpandHostlist(got)
		if err1 != nil || err2 != nil {
			return s.Value == got
		}
		slices.Sort(w)
		slices.Sort(g)
		return slices.Equal(w, g)
	case s.Key == "QOS":
		return strings.EqualFold(got, s.Value)
	}
	return strings.EqualFold(got, s.Value)
}

// ParseShowConfig reads `scontrol show config`: "Key = Value" lines.
func ParseShowConfig(text string) map[string]string {
	m := map[string]string{}
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k == "" || strings.ContainsAny(k, " \t") {
			continue
		}
		m[k] = strings.TrimSpace(v)
	}
	return m
}

// ParseShowPartitions reads `scontrol show partition` in either form (one
// line per partition with -o, or blocks of indented lines) into each
// partition's keys.
func ParseShowPartitions(text string) map[string]map[string]string {
	out := map[string]map[string]string{}
	var cur map[string]string
	for field := range strings.FieldsSeq(text) {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			continue
		}
		if k == "PartitionName" {
			cur = map[string]string{}
			out[v] = cur
			continue
		}
		if cur != nil {
			cur[k] = v
		}
	}
	return out
}
