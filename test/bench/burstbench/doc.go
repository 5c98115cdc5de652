// Command burstbench measures one burst-controller cycle.
//
// Synthetic mode (default): a stand-in slurmrestd (httptest) serves
// slurmrestd's real job JSON (testdata/pending-job.json, recorded from the
// testbed's slurmrestd 26.05, v0.0.44) replicated into -pending pending jobs
// and -running running jobs of -tenants tenants, and answers update_time as
// slurmctld does (no jobs when none changed; a move is a change); the real
// slurmrest client, adapter and controller run against it. It prints the
// phases of a full read (the stand-in's serving, our decoding and
// conversion) and of the decision, a read when nothing changed, one whole
// cycle (wall, REST calls, moves), the process's peak RSS beyond the
// stand-in's body, and the same read through ListJobs (the earlier path,
// which decodes the body twice) as the peer, with the ratio.
//
// Live mode (-live): against the testbed's real slurmrestd, with whatever
// jobs are queued (the bench script submits held jobs first), it separates
// slurmrestd's time (request to the body's last byte) from ours (decoding,
// conversion, decision), and measures the alternatives to a full read:
// GET jobs/ with update_time when nothing changed, GET jobs/state/, and one
// job's details (GET job/{id}), the cost per candidate of a states-first
// read.
package main
