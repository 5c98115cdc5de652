// Package slurmjobs is the burst controller's adapter to slurmctld through
// the slurmrest client: one bulk read of every active job per cycle
// (ListJobs: burst.JobLister) and one update per move (MoveJob:
// burst.Mover; partition, QOS and admin comment in a single request, so a
// job carries the marker exactly when it was moved).
//
// It converts slurmrest's job view into burst.Job (Convert): the GPU
// request from tres_req_str / tres_per_job / tres_per_node, the GPUs a
// running job holds from tres_alloc_str, the pending tasks of an array
// record, time limits and priorities. It may import slurmrest and burst;
// only burst/service, test/bench and tests import it.
package slurmjobs
