// Package reconcile keeps Slurm true to gpubridge's tenants.
//
// Plan (pure) compares the Slurm objects that tenants project to
// (tenant.Project) with the live cluster (State, read in three bulk calls:
// accounts with coordinators, associations with their parent accounts,
// QOS) and returns a field-level
// diff: objects to create, fields to modify (old -> new) and objects to
// delete. Apply executes a plan through the Cluster port in batched writes,
// in dependency order (QOS, accounts and their own associations' QOS,
// users, associations, then removals in reverse; each batch starts as soon as those it needs are
// done), so that a second apply finds nothing to do and makes zero writes.
// A batch Slurm refuses is split by tenant until the refused tenants are
// found: they are held back and reported (Outcome.Failed, ErrPartial),
// everyone else is applied, and a tenant is dropped from the store only
// when its objects are gone.
//
// Ownership: gpubridge modifies or deletes only Slurm accounts and QOS
// whose description carries tenant.Marker (and the associations and
// coordinators of such accounts: gpubridge makes no coordinators), or
// those of tenants adopted by `gpubridge import`; and accounts found under
// the account of a tenant it created (sub-accounts: a tenant has none),
// removed with their associations once their jobs end, not counted by
// the delete policy. Anything else that is in the way is a Conflict, and a
// plan with conflicts is not applied.
//
// Deleting never kills work: a tenant being deleted keeps its objects,
// with its QOS blocked for new submissions (MaxSubmitJobsPerUser=0; the
// job_submit guard refuses the account's jobs whatever their QOS), until the
// account has no running or pending job; only then are its objects
// removed. A user association is removed once that user's jobs under the
// account have ended. A tenant adopted by `gpubridge import` is released
// instead (tenant.Releasing, release.go): only what gpubridge added goes,
// what it changed on the site's account is put back (tenant.Origin), and
// only the jobs of gpubridge's users and QOS are waited for. Shrinking a quota changes GrpTRES only, which gates
// the start of jobs and never stops running ones.
//
// Deleting only what a store means (DeletePolicy, massdelete.go): every
// front end computes its plans with a delete policy, and a plan that
// deletes the objects of tenants the store has no record of, of every
// tenant, or of more than a share of them, has those deletions held back
// (Change.HeldBack; Plan.Err and Apply's error wrap ErrMassDelete) unless a
// person allowed it; the rest of the plan is applied.
//
// Cluster is the port this package needs (Reader, and Writer split by the
// kind of object written: QOSWriter, AccountWriter, UserWriter,
// AssocWriter, CoordinatorWriter); bridge/reconcile/slurmadapter
// implements it over the slurmrest client and reconciletest holds an
// in-memory fake. The use cases that plan and apply for the CLI and the
// daemon are in bridge/tenantadmin; metrics exports the refusal counter.
// This package is pure: no HTTP, database or Slurm client.
package reconcile
