package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerTenants adds the tenant commands: add/modify/delete/show tenant,
// add/delete user, show audit, plan, apply, import. The daemon's periodic
// reconcile is wired in internal/app/daemon.go.
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
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: tenant.ArgKeys})
			if err != nil {
				return app.Input(err)
			}
			if len(p.Names) != 1 {
				return usagef("add tenant takes one name, then key=value options (got %q)", p.Names)
			}
			t, early := tenant.FromArgs(p.Names[0], p.Where)
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			if err := svc.Add(ctx, t, early, func(t tenant.Tenant) error { return a.Confirm(tenantview.Tenant(" Adding tenant", t)) }); err != nil {
				return tenantErr(err)
			}
			_, err = fmt.Fprint(a.out, tenantview.Added(t.Name))
			return err
		},
	}
}

func modifyTenantCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "tenant NAME set key=value ...",
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

Example:
  gpubridge modify tenant acme set gpus=h100:24`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{}, SetKeys: tenant.ArgKeys})
			if err != nil {
				return app.Input(err)
			}
			if len(p.Names) != 1 || len(p.Set) == 0 {
				return usagef("usage: gpubridge modify tenant NAME set key=value ...")
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			var changes []tenant.FieldChange
			changed, err := svc.Modify(ctx, p.Names[0], p.Set, func(name string, cs []tenant.FieldChange) error {
				changes = cs
				return a.confirmChanges(name, cs)
			})
			if err != nil {
				return tenantErr(err)
			}
			_, err = fmt.Fprint(a.out, tenantview.Modified(p.Names[0], changed, changes))
			return err
		},
	}
}

// confirmChanges asks before a tenant's fields change.
func (a *App) confirmChanges(name string, cs []tenant.FieldChange) error {
	return a.Confirm(tenantview.Changes(" Modifying tenant", name, cs))
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
			ctx := cmd.Context()
			if _, err := kv.Parse(args, kv.Spec{}); err != nil {
				return app.Input(err)
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			var released []string
			if err := svc.DeleteTenants(ctx, args, purge, func(ds []tenantadmin.Deletion) error {
				var b strings.Builder
				b.WriteString(" Deleting tenant(s)")
				for _, d := range ds {
					if d.Release {
						released = append(released, d.Name)
						fmt.Fprintf(&b, "\n  %s  (release: adopted; the site's account and its original users stay)", d.Name)
					} else {
						fmt.Fprintf(&b, "\n  %s", d.Name)
					}
				}
				return a.Confirm(b.String() + "\n (new jobs are refused at the next apply; the Slurm objects go once running and pending jobs end)")
			}); err != nil {
				return tenantErr(err)
			}
			fmt.Fprintf(a.out, "Tenant(s) %s marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n", namesList(args, ", "))
			if len(released) > 0 {
				fmt.Fprintf(a.out, "Released, not deleted: %s (adopted: only gpubridge's objects go; give --purge to delete the site's account too).\n", namesList(released, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "delete an adopted tenant's account and original users too (default: release them)")
	return cmd
}

func userArgs(args []string, extra ...string) (string, string, map[string]string, error) {
	p, err := kv.Parse(args, kv.Spec{Keys: append([]string{"tenant", "account"}, extra...)})
	if err != nil {
		return "", "", nil, app.Input(err)
	}
	t := p.Where["tenant"]
	if t == "" {
		t = p.Where["account"]
	}
	if len(p.Names) != 1 || t == "" {
		return "", "", nil, usagef("give one user name and tenant=NAME")
	}
	return p.Names[0], t, p.Where, nil
}

func addUserCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "user NAME tenant=TENANT [admin=yes]",
		ValidArgsFunction: completeTenants(a, false),
		Short:             "Add a user to a tenant (admin=yes also makes them a coordinator of its account)",
		Args:              cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, tn, where, err := userArgs(args, "admin")
			if err != nil {
				return err
			}
			admin := false
			if v, ok := where["admin"]; ok {
				var msg string
				if admin, msg = tenant.ParseBool(v); msg != "" {
					return usagef("admin: %s", msg)
				}
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			changed, err := svc.AddUser(ctx, tn, name, admin, a.confirmChanges)
			if err != nil {
				return tenantErr(err)
			}
			_, err = fmt.Fprint(a.out, tenantview.UserAdded(name, tn, changed))
			return err
		},
	}
}

func deleteUserCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:               "user NAME tenant=TENANT",
		ValidArgsFunction: completeTenants(a, false),
		Short:             "Remove a user from a tenant (their association goes once their jobs there end)",
		Args:              cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, tn, _, err := userArgs(args)
			if err != nil {
				return err
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			if err := svc.RemoveUser(ctx, tn, name, a.confirmChanges); err != nil {
				return tenantErr(err)
			}
			_, err = fmt.Fprint(a.out, tenantview.UserRemoved(name, tn))
			return err
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.showArgs(args, kv.Spec{}, tenantview.Tenants(nil, tenant.FieldKeys))
			if err != nil {
				return err
			}
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			ts, err := svc.Show(cmd.Context(), p.Names)
			if err != nil {
				return tenantErr(err)
			}
			if !a.output.JSON && a.output.Format == nil {
				a.output.Format = tenantview.Columns
			}
			return a.Print(tenantview.Tenants(ts, tenant.FieldKeys))
		},
	}
}

func showAuditCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "audit [kind=tenant] [name=NAME] [tenant=NAME] [limit=N] [format=COL,...] [where COLUMN=VALUE ...]",
		Short: "Show the audit log: who changed what, when, from what, to what",
		Long: `Show the audit log, newest first. kind=, name=, tenant= and limit= select the
entries in the database; format= picks the columns (` + strings.Join(auditTable(nil).Keys, ",") + `)
and where COLUMN=VALUE filters the rows shown (where actor=alice).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.showArgs(args, kv.Spec{Keys: []string{"kind", "name", "tenant", "limit"}}, auditTable(nil))
			if err != nil {
				return err
			}
			if len(p.Names) > 0 {
				return usagef("show audit takes only key=value filters")
			}
			es, err := a.Audit(cmd.Context(), p.Where)
			if err != nil {
				return err
			}
			return a.Print(auditTable(es))
		},
	}
}

// auditTable is show audit's table of es, with the entries for --json.
func auditTable(es []sqldb.AuditEntry) table.Table {
	t := table.Table{
		Header: []string{"ID", "At", "Actor", "Action", "Kind", "Name", "Change"},
		Keys:   []string{"id", "at", "actor", "action", "kind", "name", "change"},
		Raw:    es,
	}
	if es == nil {
		t.Raw = []sqldb.AuditEntry{}
	}
	for _, e := range es {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format("2006-01-02T15:04:05Z"), e.Actor, e.Action,
			e.ObjectKind, e.ObjectName, auditSummary(e.ObjectKind, e.Before, e.After)})
	}
	return t
}

// auditSummary says in one line what an audit row changed.
func auditSummary(kind string, before, after *string) string {
	if f, ok := auditSummaries[kind]; ok {
		return f(before, after)
	}
	if kind != tenantstore.AuditKind {
		return tenantview.ValueAudit(before, after)
	}
	return tenantview.TenantAudit(before, after)
}

// namesList joins names, abbreviated after ten.
func namesList(names []string, sep string) string {
	if len(names) <= 10 {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:10], sep) + fmt.Sprintf("%s... (%d in all)", sep, len(names))
}
