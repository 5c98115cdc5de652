// Package reconciletest holds an in-memory fake of reconcile.Cluster that
// behaves like Slurm where the reconciler depends on it: QOS GrpTRES merge
// on modify, accounts need a cluster association before user associations,
// deleting an account deletes its associations, a user is created with a
// default account. It counts reads and writes (one per non-empty batch) the
// way the slurmrest adapter's requests are counted. It is for tests only
// (unit tests of reconcile and of the CLI); acceptance runs on the testbed.
package reconciletest
