package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerTenants adds the tenant commands: add/modify/delete/show tenant,
// add/delete user, show audit, plan, apply, import. The daemon's periodic
// reconcile is wired in cmd/gpubridge/app/daemon.go.
func registerTenants(a *App, root, show, add, modify, del *cobra.Command) {
	show.AddCommand(showTenantsCmd(a), showAuditCmd(a))
	add.AddCommand(addTenantCmd(a), addUserCmd(a))
	modify.AddCommand(modifyTenantCmd(a))
	del.AddCommand(deleteTenantCmd(a), deleteUserCmd(a))
	root.AddCommand(planCmd(a), applyCmd(a), importCmd(a))
}

const tenantArgsHelp = `Options (key=value):
  gpus=h100:16,1g.10gb:14   GPU quota per type or MIG profile (types the cluster tracks)
  users=alice,bob           users who may submit under the tenant's account
  admins=alice              users made coordinators of the tenant's account
  description="..."         organization="..."
  costcenter=CC-4711        the finance cost centre named in chargeback exports
  cpus=256  memory=1T       optional limits on the tenant's running jobs
  burst=yes burstmaxgpus=8 burstbudget=2500.00   on-demand burst policy
  booking.maxgpus=h100:8 booking.maxwindow=14d booking.minlead=1d
  booking.maxhorizon=90d booking.spendlimit=5000.00
                            what the tenant may book (each key overrides
                            bookings.defaultPolicy; see docs/bookings.md)`

func addTenantCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "tenant NAME [key=value ...]",
		Short: "Declare a tenant (a Slurm account with its QOS and quota after apply)",
		Long: `Declare a tenant in gpubridge's store. Nothing changes in Slurm until
` + "`gpubridge apply`" + `; ` + "`gpubridge plan`" + ` shows what it will do.

` + tenantArgsHelp + `

Example:
  gpubridge add tenant acme gpus=h100:16,1g.10gb:14 users=alice,bob admins=alice description="Acme ML"`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.doAs(takes{Spec: kv.Spec{Keys: tenant.ArgKeys}, names: oneName, usage: "add tenant takes one name, then key=value options (got %q)"},
			func(ctx context.Context, what string, p kv.Args) error {
				r := app.ParseAddTenant(p.Names[0], p.Where)
				r.What, r.Confirm = what, a.confirmer()
				return tells(a, tenantview.Added)(a.AddTenant(ctx, r))
			}),
	}
}

func modifyTenantCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "tenant NAME|where name=NAME set key=value ...",
		ValidArgsFunction: completeTenants(a, true),
		Short:             "Change a tenant (gpus= merges by type; type:none drops one)",
		Long: `Change a tenant in gpubridge's store; ` + "`gpubridge apply`" + ` makes the change in Slurm.
gpus= sets the listed types and keeps the others (h100:none drops h100);
users= and admins= replace the lists; cpus=none, memory=none and
burstbudget=none clear those limits; booking.KEY=none unsets one booking
key (the default applies), booking=none all of them. Booking and burst
policy involve nothing in Slurm: gpubridge reads them from its store (the
next booking, the burst controller's next pass). Shrinking a quota never stops running
jobs: Slurm's GrpTRES only holds back new starts.

` + tenantArgsHelp + `

The tenant is named bare or, as in sacctmgr, after where (where name=acme).

Examples:
  gpubridge modify tenant acme set gpus=h100:24
  gpubridge modify tenant where name=acme set gpus=h100:24`,
		Args: cobra.MinimumNArgs(2),
		RunE: a.doAs(takes{Spec: kv.Spec{Keys: []string{}, SetKeys: tenant.ArgKeys}, names: oneName, usage: app.ModifyTenantUsage, whereName: "name"},
			func(ctx context.Context, what string, p kv.Args) error {
				r, err := app.ParseModifyTenant(p.Names[0], p.Set)
				if err != nil {
					return err
				}
				r.What, r.Confirm = what, a.confirmer()
				return tells(a, app.TenantModified.Text)(a.ModifyTenant(ctx, r))
			}),
	}
}

func deleteTenantCmd(a *App) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:               "tenant NAME ... [--purge]",
		ValidArgsFunction: completeTenants(a, true),
		Short:             "Delete tenants: block new jobs now, remove the Slurm objects once their jobs end",
		Long: `Mark tenants for deletion. Deleting never kills running jobs. The next
` + "`gpubridge apply`" + ` blocks new submissions (the tenant QOS gets MaxSubmitJobsPerUser=0
and the job_submit guard refuses the account's jobs) while running and pending
jobs continue; each later apply removes the account, its associations and its
QOS once the account has no running or pending job, and then drops the tenant.
Cancel the jobs with scancel to finish sooner.

A tenant adopted by ` + "`gpubridge import`" + ` is released instead (state releasing): once
no job of the users or QOS gpubridge added is unfinished, apply removes what
gpubridge added (its QOS, the user associations and coordinators it added) and
puts back what it changed (the account's description and organization, the
original associations' QOS list and default QOS, the original QOS's limits);
the site's account and its original users stay. --purge deletes an adopted
tenant whole, like any other (for a tenant gpubridge created it changes nothing).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := a.parse(args, takes{}); err != nil {
				return err
			}
			return tells(a, app.TenantsDeleted.Text)(a.DeleteTenants(cmd.Context(), cmd.CommandPath(), args, purge, a.confirmer()))
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "delete an adopted tenant's account and original users too (default: release them)")
	return cmd
}

func addUserCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "user NAME tenant=TENANT [admin=yes]",
		ValidArgsFunction: completeTenants(a, false),
		Short:             "Add a user to a tenant (admin=yes also makes them a coordinator of its account)",
		Args:              cobra.MinimumNArgs(2),
		RunE: a.doAs(takes{Spec: kv.Spec{Keys: []string{"tenant", "account", "admin"}}, names: oneName, usage: app.UserUsage},
			func(ctx context.Context, what string, p kv.Args) error {
				r, err := app.ParseUser(p.Names[0], p.Where)
				if err != nil {
					return err
				}
				r.What, r.Confirm = what, a.confirmer()
				return tells(a, app.UserChange.AddedText)(a.AddUser(ctx, r))
			}),
	}
}

func deleteUserCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "user NAME tenant=TENANT",
		ValidArgsFunction: completeTenants(a, false),
		Short:             "Remove a user from a tenant (their association goes once their jobs there end)",
		Args:              cobra.MinimumNArgs(2),
		RunE: a.doAs(takes{Spec: kv.Spec{Keys: []string{"tenant", "account"}}, names: oneName, usage: app.UserUsage},
			func(ctx context.Context, what string, p kv.Args) error {
				r, err := app.ParseUser(p.Names[0], p.Where)
				if err != nil {
					return err
				}
				r.What, r.Confirm = what, a.confirmer()
				return tells(a, app.UserChange.RemovedText)(a.RemoveUser(ctx, r))
			}),
	}
}

func showTenantsCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "tenants [NAME ...] [format=name,gpus,users] [where COLUMN=VALUE ...]",
		ValidArgsFunction: completeTenants(a, true),
		Aliases:           []string{"tenant"},
		Short:             "Show tenants as stored (what apply makes Slurm hold)",
		Long: "Show tenants. format= picks the columns: " + strings.Join(tenant.FieldKeys, ",") + ` (default
` + strings.Join(tenantview.Columns, ",") + `), and where COLUMN=VALUE keeps the rows whose column
holds one of the values (where state=deleting, where burst=yes). With --json the full tenant
records are printed (of the rows the filters keep).`,
		RunE: a.doAs(takes{views: views(app.TenantList(nil).Table())},
			func(ctx context.Context, what string, p kv.Args) error {
				return showsBy(a, tenantview.Columns, app.TenantList.Table)(a.ShowTenants(ctx, what, p.Names))
			}),
	}
}

func showAuditCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "audit [kind=tenant] [name=NAME] [tenant=NAME] [limit=N] [format=COL,...] [where COLUMN=VALUE ...]",
		Short: "Show the audit log: who changed what, when, from what, to what",
		Long: `Show the audit log, newest first. kind=, name=, tenant= and limit= select the
entries in the database; format= picks the columns (` + strings.Join(app.AuditLog(nil).Table().Keys, ",") + `)
and where COLUMN=VALUE filters the rows shown (where actor=alice).`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"kind", "name", "tenant", "limit"}}, views: views(app.AuditLog(nil).Table()),
			names: noName, usage: "show audit takes only key=value filters", formerTenants: true},
			func(ctx context.Context, p kv.Args) error {
				f, err := app.ParseAudit(p.Where)
				if err != nil {
					return err
				}
				return shows(a, app.AuditLog.Table)(a.Audit(ctx, f))
			}),
	}
}
