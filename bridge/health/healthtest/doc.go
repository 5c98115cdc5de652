// Package healthtest is a fake Slurm for the health service's unit tests:
// nodes that drain, resume and go down, health reservations, and a
// scheduler that starts a job only where slurmctld would (not on a drained
// or down node; on a fenced node only inside its reservation) and runs a
// check job to its end at the next tick, writing the output its checks
// give (Cluster.Check).
//
// Each call of States is one scheduler tick. Only tests import it.
package healthtest
