// Package view lays out the tenant use cases' results (bridge/tenantadmin)
// for people: the plan printer of plan and apply (one line per change,
// the store changes of a tenants file, the summary line), the tenant
// descriptions and field changes of the confirmations (add, modify and
// delete tenant, add/delete user, import), the one-line audit summaries
// of tenants, the table of show tenants and the messages of the tenant
// commands. The CLI prints them; the tenant API and the status
// page can use the same views.
//
// It is pure: it formats bridge/tenant's, bridge/reconcile's and
// bridge/tenantadmin's values into internal/table tables and strings, and
// does no I/O beyond the io.Writer it is given.
package view
