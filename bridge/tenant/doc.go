// Package tenant is gpubridge's tenant model: what a tenant is (name,
// description, organization, users, admins, GPU quota per type and MIG
// profile, optional CPU and memory limits, burst policy, booking policy
// (BookingPolicy, over the configured default key by key)), how its fields are
// written on the command line and in YAML files, how it is validated, and
// which Slurm objects it becomes (Project) — the account under root, the
// tenant QOS holding GrpTRES per GPU type, the reservation QOS
// (REQUIRED_RESERVATION, no limits) that jobs inside its bookings run
// under, user associations, and the tenant QOS on the account's own
// association (admins are not Slurm coordinators) — plus the data file
// read by contrib/job_submit.lua (Guard, GuardFor, GuardWith).
//
// Validation reports every problem at once, each naming its field and the
// fix; nothing is written anywhere when any problem is found. A tenants
// file is also checked for what YAML would silently change (yamlkind.go:
// `name: yes` read as a boolean, `h100: 16.0` or `010` as other numbers)
// and bounded in size (MaxFileBytes); names that are command keywords
// (Keywords) are refused.
//
// Stored and Edit carry the store's versions between the use cases
// (bridge/tenantadmin) and the store (bridge/tenantstore): a write names
// the version it was computed from and is refused (ErrChanged) when the
// record has moved on.
//
// This package is pure: it does no I/O and must not import net/http,
// database/sql, sqlx, the slurmrest client or any other adapter
// (internal/archtest enforces this). The store lives in bridge/tenantstore,
// the diff against the live cluster in bridge/reconcile, the use cases in
// bridge/tenantadmin.
package tenant
