// Package slurmadapter reads the live cluster for bridge/slurmconf: the
// nodes and partitions from slurmrestd (REST, through the slurmrest
// client, connected on first use so that a render given --nodes and
// --gpu-types needs none), and `scontrol show` output by running scontrol
// or a command that runs it (Scontrol, with os/exec).
//
// It implements slurmconf.NodeLister, slurmconf.PartitionLister and
// slurmconf.Scontrol, and converts slurmrest's views to slurmconf's.
package slurmadapter
