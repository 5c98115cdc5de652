// Package slurmjobs is the burst controller's adapter to slurmctld through
// the slurmrest client: one bulk read of every job per cycle (ListJobs) and
// one update per move (MoveJob: partition, QOS and admin comment in a
// single request, so a job carries the marker exactly when it was moved).
//
// It converts slurmrest's job view into burst.Job: the GPU request from
// tres_req_str / tres_per_job / tres_per_node, the GPUs a running job holds
// from tres_alloc_str, the pending tasks of an array record, time limits and
// priorities. It may import slurmrest and burst; nothing imports it but cmd/
// and tests.
package slurmjobs
