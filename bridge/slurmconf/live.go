package slurmconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
)

// Node is a node as the cluster reports it: its name and the type of each
// of its GPU entries ("" for an untyped one); no entries for a node
// without GPUs.
type Node struct {
	Name     string
	GPUTypes []string
}

// NodeLister lists the cluster's nodes (slurmconf/slurmadapter: slurmrestd).
type NodeLister interface {
	Nodes(ctx context.Context) ([]Node, error)
}

// Complete returns s with what it leaves out read from the cluster: Nodes,
// when empty, are the nodes with GPUs; GPUTypes, when empty, the typed GPUs
// they report; both sorted. When s names both, nothing is read (the
// fragment renders without a cluster).
func Complete(ctx context.Context, s Spec, cluster NodeLister) (Spec, error) {
	if len(s.Nodes) > 0 && len(s.GPUTypes) > 0 {
		return s, nil
	}
	nodes, err := cluster.Nodes(ctx)
	if err != nil {
		return s, err
	}
	var names, types []string
	for _, n := range nodes {
		if len(n.GPUTypes) == 0 {
			continue
		}
		names = append(names, n.Name)
		for _, t := range n.GPUTypes {
			if t != "" && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	slices.Sort(names)
	slices.Sort(types)
	if len(s.Nodes) == 0 {
		s.Nodes = names
	}
	if len(s.GPUTypes) == 0 {
		s.GPUTypes = types
	}
	return s, nil
}

// Scontrol runs `scontrol show WHAT` (config, partition) and returns what
// it prints (slurmconf/slurmadapter.Scontrol runs the command).
type Scontrol interface {
	Show(ctx context.Context, what string) (string, error)
}

// Partition is a partition as slurmrestd reports it.
type Partition struct {
	Name         string
	Nodes        string // hostlist expression
	PriorityTier int
	State        []string
	QOS          string // the partition QOS, empty for none
}

// PartitionLister lists the partitions slurmrestd reports.
type PartitionLister interface {
	Partitions(ctx context.Context) ([]Partition, error)
}

// LiveReader reads the live configuration: with scontrol when it has one
// and scontrol works (every key), else from slurmrestd's partitions (Partial:
// PreemptType and the other global keys are then unknown).
type LiveReader struct {
	Scontrol Scontrol // nil: slurmrestd only
	REST     PartitionLister
	Logger   *slog.Logger // the fallback to slurmrestd is logged (warning)
}

// Read reads the live configuration and says where from ("scontrol" as
// fmt prints the Scontrol, or "slurmrestd").
func (r LiveReader) Read(ctx context.Context) (Live, string, error) {
	if r.Scontrol != nil {
		cfg, err1 := r.Scontrol.Show(ctx, "config")
		parts, err2 := r.Scontrol.Show(ctx, "partition")
		if err1 == nil && err2 == nil {
			return Live{Config: ParseShowConfig(cfg), Partitions: ParseShowPartitions(parts)}, fmt.Sprint(r.Scontrol), nil
		}
		r.log().Warn("scontrol not usable; reading partitions from slurmrestd (global keys unknown)", "err", errors.Join(err1, err2))
	}
	ps, err := r.REST.Partitions(ctx)
	if err != nil {
		return Live{}, "", err
	}
	return PartitionsLive(ps), "slurmrestd", nil
}

func (r LiveReader) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// PartitionsLive is the live configuration slurmrestd's partitions give:
// their Nodes, PriorityTier, State and QoS (as scontrol names them), and
// no global keys.
func PartitionsLive(ps []Partition) Live {
	live := Live{Partitions: map[string]map[string]string{}, Partial: true}
	for _, p := range ps {
		m := map[string]string{"Nodes": p.Nodes, "PriorityTier": strconv.Itoa(p.PriorityTier), "State": strings.Join(p.State, ",")}
		if p.QOS != "" {
			m["QoS"] = p.QOS
		}
		live.Partitions[p.Name] = m
	}
	return live
}

// CheckLive renders s and compares it with the live configuration r reads
// (`gpubridge config check`).
func CheckLive(ctx context.Context, s Spec, r LiveReader) ([]Finding, error) {
	frag, err := Render(s)
	if err != nil {
		return nil, err
	}
	live, src, err := r.Read(ctx)
	if err != nil {
		return nil, err
	}
	r.log().Debug("live configuration read", "source", src)
	return Check(frag, live), nil
}

// Unverified counts the settings that could not be compared (status
// unknown): `config check` fails on them too unless told to accept them.
func Unverified(fs []Finding) int {
	n := 0
	for _, x := range fs {
		if x.Status == Unknown {
			n++
		}
	}
	return n
}

// Differ reports whether a rendered setting differs from the cluster's or
// is missing there: `config check` then fails. Unknown settings (the part
// of the configuration that could not be read) do not count.
func Differ(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(x Finding) bool { return x.Status == Differs || x.Status == Missing })
}
