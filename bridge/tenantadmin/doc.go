// Package tenantadmin holds the use cases on tenants that every front end
// shares: the CLI's add/modify/delete/show tenant, add/delete user, plan,
// apply (-f), import, the daemon's periodic reconcile and, later, the
// tenant API. Each is one call (Service.Add, Modify, Delete, AddUser,
// RemoveUser, Show, Plan, Apply, Import, Reconcile) that validates what it
// is given, reads the store and the cluster, asks the caller to confirm
// where a person is asked, and writes under the cluster's one-writer lock:
//
//   - validation with the GPU types the cluster has and the names in use
//     (Check, behind the GPUTypes and Names interfaces), every problem at
//     once, still listed when Slurm or the store cannot be reached;
//   - a tenants file merged into the store (MergeFile) and stored with the
//     plan's Slurm changes in one transaction (tenant.Edit), each tenant at
//     the version it was read at, so that a concurrent edit is refused
//     ("changed since you read it"), never lost;
//   - apply plans under the lock, and when a person confirms, re-plans
//     after the prompt and refuses when the plan changed meanwhile;
//   - every plan is checked against the delete policy
//     (reconcile.DeletePolicy: an empty or wrong store never deletes the
//     cluster); a refusal is logged and counted (RefusalRecorder).
//
// The ports (Store, Cluster, GPUTypes, Names, Backends) are defined here,
// where they are used; bridge/tenantstore and bridge/reconcile/slurmadapter
// implement them, and cmd/gpubridge/app wires them (Backends connect on first
// use, so a command reports what it can without slurmrestd or a database);
// bridge/tenantadmin/view lays out their results for people.
//
// This package does no I/O of its own: it imports the tenant model and
// bridge/reconcile, never net/http, database/sql, sqlx, the slurmrest
// client or the store: they come in through its ports.
package tenantadmin
