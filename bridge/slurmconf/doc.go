// Package slurmconf renders the slurm.conf fragment of gpubridge's two
// tiers and checks a live cluster against it (`gpubridge config render`,
// `gpubridge config check`).
//
// Partitions cannot be created over slurmrestd, so gpubridge writes the
// lines for the admin to include: GresTypes, the typed
// AccountingStorageTRES (every gres/gpu:TYPE a quota names must be tracked,
// or GrpTRES on it is not enforced), PreemptType=preempt/partition_prio and
// PreemptMode=REQUEUE, and two partitions over the same GPU nodes: the pool
// (high PriorityTier, never preempted) where tenants' reserved work runs,
// and the on-demand partition (low PriorityTier, PreemptMode=REQUEUE) where
// burst work runs and is requeued when reserved work needs its GPUs.
//
// Complete fills what the admin leaves out of the Spec (the GPU nodes and
// their types) from the cluster; Render renders it. CheckLive compares the
// rendered settings with what the cluster reports and lists every
// difference (Check, Differ): LiveReader reads `scontrol show config` and
// `scontrol show partition` (ParseShowConfig, ParseShowPartitions), or,
// where scontrol is not usable, slurmrestd's partitions (PartitionsLive;
// the global keys are then unknown).
//
// gres/conf renders the typed AccountingStorageTRES of one node from its
// NVML inventory; this package needs the cluster-wide list from the GPU
// types the nodes report, which is a few lines, written here.
//
// The package is pure: it does no I/O itself and must not import net/http,
// os/exec, the slurmrest client or any other adapter (internal/archtest
// checks it). The cluster is read through the small interfaces defined
// here (NodeLister, Scontrol, PartitionLister), which slurmadapter
// implements with slurmrestd and by running scontrol. config check's
// findings table and verdict (FindingsTable, Verdict) are here too, so the
// command only parses, calls and prints.
package slurmconf
