// Package slurmjobs is the burst controller's adapter to slurmctld through
// the slurmrest client: one bulk read of every active job per cycle
// (ListJobs: burst.JobLister) and one update per move (MoveJob:
// burst.Mover; partition, QOS and admin comment in a single request, so a
// job carries the marker exactly when it was moved).
//
// Jobs keeps its last read: the next asks slurmctld for the jobs only if
// one changed since (slurmrest.ListJobsSince with update_time), and decides
// on the same jobs again when none did, reading in full at least every
// MaxAge. A quiet cycle thus costs one small read; a cycle after any change
// reads and decodes every job once.
//
// It converts slurmrest's job view into burst.Job (Convert): the GPU
// request from tres_req_str / tres_per_job / tres_per_node, the GPUs a
// running job holds from tres_alloc_str, the pending tasks of an array
// record, time limits and priorities.
package slurmjobs
