// Package slurmconf renders the slurm.conf fragment of gpubridge's two
// tiers and checks a live cluster against it.
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
// Check compares the rendered settings with what the cluster reports
// (`scontrol show config`, `scontrol show partition`, or slurmrestd's
// partitions and TRES) and lists every difference.
//
// gres/conf renders the typed AccountingStorageTRES of one node from its
// NVML inventory; this package needs the cluster-wide list from the GPU
// types the nodes report, which is a few lines, written here.
//
// The package is pure: no I/O, no net/http, os/exec or adapters.
package slurmconf
