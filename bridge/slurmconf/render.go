package slurmconf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Spec is what the fragment is rendered from.
type Spec struct {
	PoolPartition     string   // pool
	OnDemandPartition string   // ondemand
	Nodes             []string // the GPU nodes both partitions span
	GPUTypes          []string // typed GPUs on those nodes: h100, 1g.10gb, ...
	PoolTier          int      // PriorityTier of the pool; 0 means 10
	OnDemandTier      int      // PriorityTier of the on-demand partition; 0 means 1
	// OnDemandPartitionQOS, when set, is written as the on-demand
	// partition's QOS= (only the submit-time route of
	// contrib/job_submit_burst.lua needs one; see docs/burst.md).
	OnDemandPartitionQOS string
	// PoolDefault makes the pool the default partition (Default=YES).
	PoolDefault bool
}

// Setting is one rendered key and its value; Partition is empty for a
// global slurm.conf key.
type Setting struct {
	Partition string `json:"partition"` // empty for a global key
	Key       string `json:"key"`
	Value     string `json:"value"`
}

// Fragment is the rendered configuration.
type Fragment struct {
	Settings []Setting `json:"settings"`
	Text     string    `json:"text"`
}

// String is the fragment's slurm.conf text (what config render prints).
func (f Fragment) String() string { return f.Text }

func (s Spec) tiers() (pool, od int) {
	pool, od = s.PoolTier, s.OnDemandTier
	if pool == 0 {
		pool = 10
	}
	if od == 0 {
		od = 1
	}
	return pool, od
}

// Validate reports every problem with s.
func (s Spec) Validate() error {
	var errs []string
	if s.PoolPartition == "" || s.OnDemandPartition == "" || s.PoolPartition == s.OnDemandPartition {
		errs = append(errs, "pool and on-demand partitions need two different names")
	}
	if len(s.Nodes) == 0 {
		errs = append(errs, "no GPU nodes (give --nodes, or let gpubridge read them from slurmrestd)")
	}
	if len(s.GPUTypes) == 0 {
		errs = append(errs, "no typed GPUs (give --gpu-types, or let gpubridge read them from the nodes' Gres)")
	}
	for _, t := range s.GPUTypes {
		if t == "" || strings.ContainsAny(t, ",:= \t") {
			errs = append(errs, fmt.Sprintf("GPU type %q is not a Slurm GRES type name", t))
		}
	}
	if pool, od := s.tiers(); pool <= od {
		errs = append(errs, fmt.Sprintf("the pool's PriorityTier (%d) must be above the on-demand one (%d), or reserved work cannot preempt on-demand work", pool, od))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cannot render the two-tier configuration:\n  - %s", strings.Join(errs, "\n  - "))
	}
	return nil
}

// AccountingStorageTRES is gres/gpu and every typed gres/gpu:TYPE, sorted.
func AccountingStorageTRES(types []string) []string {
	out := []string{"gres/gpu"}
	ts := slices.Clone(types)
	slices.Sort(ts)
	for _, t := range slices.Compact(ts) {
		out = append(out, "gres/gpu:"+t)
	}
	return out
}

// Render returns the fragment for s.
func Render(s Spec) (Fragment, error) {
	if err := s.Validate(); err != nil {
		return Fragment{}, err
	}
	pool, od := s.tiers()
	nodes := strings.Join(s.Nodes, ",")
	def := "NO"
	if s.PoolDefault {
		def = "YES"
	}
	f := Fragment{Settings: []Setting{
		{Key: "GresTypes", Value: "gpu"},
		{Key: "AccountingStorageTRES", Value: strings.Join(AccountingStorageTRES(s.GPUTypes), ",")},
		{Key: "PreemptType", Value: "preempt/partition_prio"},
		{Key: "PreemptMode", Value: "REQUEUE"},
		{Key: "JobRequeue", Value: "1"},
		{Partition: s.PoolPartition, Key: "Nodes", Value: nodes},
		{Partition: s.PoolPartition, Key: "Default", Value: def},
		{Partition: s.PoolPartition, Key: "PriorityTier", Value: strconv.Itoa(pool)},
		{Partition: s.PoolPartition, Key: "PreemptMode", Value: "OFF"},
		{Partition: s.PoolPartition, Key: "State", Value: "UP"},
		{Partition: s.OnDemandPartition, Key: "Nodes", Value: nodes},
		{Partition: s.OnDemandPartition, Key: "Default", Value: "NO"},
		{Partition: s.OnDemandPartition, Key: "PriorityTier", Value: strconv.Itoa(od)},
		{Partition: s.OnDemandPartition, Key: "PreemptMode", Value: "REQUEUE"},
		{Partition: s.OnDemandPartition, Key: "State", Value: "UP"},
	}}
	if s.OnDemandPartitionQOS != "" {
		f.Settings = append(f.Settings, Setting{Partition: s.OnDemandPartition, Key: "QOS", Value: s.OnDemandPartitionQOS})
	}
	var b strings.Builder
	b.WriteString("# gpubridge two-tier configuration, rendered by `gpubridge config render`.\n")
	b.WriteString("# Include it from slurm.conf (Include /etc/slurm/gpubridge-tiers.conf) and keep the\n")
	b.WriteString("# keys below out of slurm.conf itself; check the live cluster with `gpubridge config check`.\n")
	b.WriteString("#\n# Typed GPU TRES: GrpTRES=gres/gpu:TYPE on tenant QOS is only enforced for tracked types.\n")
	var part string
	for _, st := range f.Settings {
		if st.Partition == "" {
			if st.Key == "PreemptType" {
				b.WriteString("# Reserved work (pool) preempts on-demand work, which is requeued (jobs submitted\n")
				b.WriteString("# with --no-requeue are cancelled instead).\n")
			}
			fmt.Fprintf(&b, "%s=%s\n", st.Key, st.Value)
			continue
		}
		if st.Partition != part {
			if part != "" {
				b.WriteString("\n")
			}
			part = st.Partition
			switch part {
			case s.PoolPartition:
				b.WriteString("\n# Tenants' reserved work (tenant QOS with GrpTRES); never preempted.\n")
			case s.OnDemandPartition:
				b.WriteString("# On-demand work moved here by the burst controller; preempted and requeued by pool work.\n")
			}
			fmt.Fprintf(&b, "PartitionName=%s", part)
		}
		fmt.Fprintf(&b, " %s=%s", st.Key, st.Value)
	}
	b.WriteString("\n")
	f.Text = b.String()
	return f, nil
}
