package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerTenants adds the tenant commands: add/modify/delete/show tenant,
// add/delete user, show audit, plan, apply, import. The daemon's periodic
// reconcile is wired in jobs.go.
func registerTenants(a *App, root, show, add, modify, del *cobra.Command) {
	show.AddCommand(showTenantsCmd(a), showAuditCmd(a))
	add.AddCommand(addTenantCmd(a), addUserCmd(a))
	modify.AddCommand(modifyTenantCmd(a))
	del.AddCommand(deleteTenantCmd(a), deleteUserCmd(a))
	root.AddCommand(planCmd(a), applyCmd(a), importCmd(a))
}

// tenantStore opens the tenant store on gpubridge's database.
func (a *App) tenantStore(ctx context.Context) (*tenantstore.Store, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tenantstore.New(db), nil
}

// tenantCluster is the reconcile adapter over the slurmrestd client.
func (a *App) tenantCluster(ctx context.Context) (*slurmadapter.Adapter, error) {
	cl, err := a.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	return slurmadapter.New(cl), nil
}

func (a *App) naming() (tenant.Naming, error) {
	c, err := a.Config()
	if err != nil {
		return tenant.Naming{}, err
	}
	return tenant.Naming{QOSPrefix: c.Tenants.QOSPrefix, OnDemandQOS: c.Tenants.OnDemandQOS}, nil
}

// actor is who the audit log names: the invoking user (the sudo user when
// run through sudo).
func actor() string {
	if s := os.Getenv("SUDO_USER"); s != "" {
		return s
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}

// problemsError turns validation problems into a usage error (exit 2).
func problemsError(ps tenant.Problems, notes ...string) error {
	err := error(ps)
	if len(notes) > 0 {
		err = fmt.Errorf("%w\n  (%s)", ps, strings.Join(notes, "; "))
	}
	return usageError{err}
}

// checkTenants validates tenants about to be stored: their fields, the GPU
// types the cluster tracks (one read from slurmrestd) and name collisions
// with the store. It reports every problem at once; when Slurm or the
// store cannot be reached, the problems found without them are still
// reported.
func (a *App) checkTenants(ctx context.Context, ts []tenant.Tenant, early tenant.Problems, prefix bool) (*tenantstore.Store, error) {
	n, err := a.naming()
	if err != nil {
		return nil, err
	}
	ps := append(early, tenant.ValidateSet(ts, nil, tenant.Rules{Naming: n}, prefix)...)
	var notes []string
	types, terr := func() ([]string, error) {
		cl, err := a.tenantCluster(ctx)
		if err != nil {
			return nil, err
		}
		return cl.GPUTypes(ctx)
	}()
	if terr != nil {
		notes = append(notes, "GPU types not checked: "+terr.Error())
	}
	st, serr := a.tenantStore(ctx)
	var existing []string
	if serr == nil {
		existing, serr = st.Names(ctx)
	}
	if serr != nil {
		notes = append(notes, "names not checked against the store: "+serr.Error())
	}
	if terr == nil && serr == nil {
		ps = append(early, tenant.ValidateSet(ts, existing, tenant.Rules{GPUTypes: types, Naming: n}, prefix)...)
	}
	if len(ps) > 0 {
		return nil, problemsError(ps, notes...)
	}
	if terr != nil {
		return nil, terr
	}
	if serr != nil {
		return nil, serr
	}
	return st, nil
}

const tenantArgsHelp = `Options (key=value):
  gpus=h100:16,1g.10gb:14   GPU quota per type or MIG profile (types the cluster tracks)
  users=alice,bob           users who may submit under the tenant's account
  admins=alice              users made coordinators of the tenant's account
  description="..."         organization="..."
  cpus=256  memory=1T       optional limits on the tenant's running jobs
  burst=yes burstmaxgpus=8 burstbudget=2500.00   on-demand burst policy`

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
				return usageError{err}
			}
			if len(p.Names) != 1 {
				return usagef("add tenant takes one name, then key=value options (got %q)", p.Names)
			}
			t, early := tenant.FromArgs(p.Names[0], p.Where)
			st, err := a.checkTenants(ctx, []tenant.Tenant{t}, early, false)
			if err != nil {
				return err
			}
			if _, err := st.Get(ctx, t.Name); err == nil {
				return usagef("tenant %q already exists; change it with `gpubridge modify tenant %s set ...`", t.Name, t.Name)
			} else if !errors.Is(err, tenantstore.ErrNotFound) {
				return err
			}
			t.Normalize()
			if err := a.Confirm(describeTenant(" Adding tenant", t)); err != nil {
				return err
			}
			if _, err := st.Put(ctx, actor(), []tenant.Tenant{t}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Tenant %s added. `gpubridge plan` shows the Slurm changes; `gpubridge apply` makes them.\n", t.Name)
			return nil
		},
	}
}

func describeTenant(title string, t tenant.Tenant) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  %s\n Settings\n", title, t.Name)
	for _, f := range tenant.Fields(t)[1:] {
		if f.Value == "" || f.Key == "adopted" || (f.Key == "burstmaxgpus" && f.Value == "0") {
			continue
		}
		fmt.Fprintf(&b, "  %-13s= %s\n", f.Title, f.Value)
	}
	return b.String()
}

func describeChanges(title string, name string, cs []tenant.FieldChange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  %s\n", title, name)
	for _, c := range cs {
		fmt.Fprintf(&b, "  %-13s %s -> %s\n", c.Title, orNone(c.Old), orNone(c.New))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func modifyTenantCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "tenant NAME set key=value ...",
		Short: "Change a tenant (gpus= merges by type; type:none drops one)",
		Long: `Change a tenant in gpubridge's store; ` + "`gpubridge apply`" + ` makes the change in Slurm.
gpus= sets the listed types and keeps the others (h100:none drops h100);
users= and admins= replace the lists; cpus=none, memory=none and
burstbudget=none clear those limits. Shrinking a quota never stops running
jobs: Slurm's GrpTRES only holds back new starts.

` + tenantArgsHelp + `

Example:
  gpubridge modify tenant acme set gpus=h100:24`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{}, SetKeys: tenant.ArgKeys})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) != 1 || len(p.Set) == 0 {
				return usagef("usage: gpubridge modify tenant NAME set key=value ...")
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			old, err := st.Get(ctx, p.Names[0])
			if err != nil {
				return notFound(err)
			}
			t, early := tenant.Update(old, p.Set)
			if _, err := a.checkTenants(ctx, []tenant.Tenant{t}, early, false); err != nil {
				return err
			}
			t.Normalize()
			cs := tenant.Changes(old, t)
			if len(cs) == 0 {
				fmt.Fprintf(a.out, "Tenant %s: nothing to change.\n", t.Name)
				return nil
			}
			if err := a.Confirm(describeChanges(" Modifying tenant", t.Name, cs)); err != nil {
				return err
			}
			if _, err := st.Put(ctx, actor(), []tenant.Tenant{t}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Tenant %s modified. `gpubridge apply` makes the change in Slurm.\n", t.Name)
			return nil
		},
	}
}

func notFound(err error) error {
	if errors.Is(err, tenantstore.ErrNotFound) {
		return usageError{fmt.Errorf("%w (see `gpubridge show tenants`)", err)}
	}
	return err
}

func deleteTenantCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "tenant NAME ...",
		Short: "Delete tenants: block new jobs now, remove the Slurm objects once their jobs end",
		Long: `Mark tenants for deletion. Deleting never kills running jobs. The next
` + "`gpubridge apply`" + ` blocks new submissions (the tenant QOS gets MaxSubmitJobsPerUser=0
and the job_submit guard refuses the account's jobs) while running and pending
jobs continue; each later apply removes the account, its associations and its
QOS once the account has no running or pending job, and then drops the tenant.
Cancel the jobs with scancel to finish sooner.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if _, err := kv.Parse(args, kv.Spec{}); err != nil {
				return usageError{err}
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			for _, n := range args {
				if _, err := st.Get(ctx, n); err != nil {
					return notFound(err)
				}
			}
			if err := a.Confirm(" Deleting tenant(s)\n  " + namesList(args, "\n  ") + "\n (new jobs are refused at the next apply; the Slurm objects go once running and pending jobs end)"); err != nil {
				return err
			}
			if _, err := st.MarkDeleting(ctx, actor(), args); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "Tenant(s) %s marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n", namesList(args, ", "))
			return nil
		},
	}
}

func userArgs(args []string, extra ...string) (string, string, map[string]string, error) {
	p, err := kv.Parse(args, kv.Spec{Keys: append([]string{"tenant", "account"}, extra...)})
	if err != nil {
		return "", "", nil, usageError{err}
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
		Use:   "user NAME tenant=TENANT [admin=yes]",
		Short: "Add a user to a tenant (admin=yes also makes them a coordinator of its account)",
		Args:  cobra.MinimumNArgs(2),
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
			if msg := tenant.CheckUser(name); msg != "" {
				return problemsError(tenant.Problems{{Field: "user", Msg: msg}})
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			old, err := st.Get(ctx, tn)
			if err != nil {
				return notFound(err)
			}
			t := tenant.AddUser(old, name, admin)
			cs := tenant.Changes(old, t)
			if len(cs) == 0 {
				fmt.Fprintf(a.out, "User %s is already in tenant %s.\n", name, tn)
				return nil
			}
			if err := a.Confirm(describeChanges(" Modifying tenant", tn, cs)); err != nil {
				return err
			}
			if _, err := st.Put(ctx, actor(), []tenant.Tenant{t}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "User %s added to tenant %s. `gpubridge apply` creates the association.\n", name, tn)
			return nil
		},
	}
}

func deleteUserCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "user NAME tenant=TENANT",
		Short: "Remove a user from a tenant (their association goes once their jobs there end)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			name, tn, _, err := userArgs(args)
			if err != nil {
				return err
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			old, err := st.Get(ctx, tn)
			if err != nil {
				return notFound(err)
			}
			if !slices.Contains(old.Users, name) {
				return usagef("user %s is not in tenant %s (users: %s)", name, tn, orNone(strings.Join(old.Users, ",")))
			}
			t := tenant.RemoveUser(old, name)
			if err := a.Confirm(describeChanges(" Modifying tenant", tn, tenant.Changes(old, t))); err != nil {
				return err
			}
			if _, err := st.Put(ctx, actor(), []tenant.Tenant{t}); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "User %s removed from tenant %s. `gpubridge apply` removes the association once their jobs there have ended.\n", name, tn)
			return nil
		},
	}
}

func showTenantsCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:     "tenants [NAME ...] [format=name,gpus,users]",
		Aliases: []string{"tenant"},
		Short:   "Show tenants as stored (what apply makes Slurm hold)",
		Long: "Show tenants. format= picks the columns: " + strings.Join(tenant.FieldKeys, ",") + `.
With --json the full tenant records are printed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"format"}})
			if err != nil {
				return usageError{err}
			}
			cols := []string{"name", "description", "gpus", "users", "admins", "cpus", "memory", "burst", "state"}
			if f, ok := p.Where["format"]; ok {
				cols = nil
				for _, c := range kv.List(strings.ToLower(f)) {
					if !slices.Contains(tenant.FieldKeys, c) {
						return usagef("format: unknown column %q; columns: %s", c, strings.Join(tenant.FieldKeys, ","))
					}
					cols = append(cols, c)
				}
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			var ts []tenant.Tenant
			if len(p.Names) == 0 {
				if ts, err = st.List(ctx); err != nil {
					return err
				}
			} else {
				for _, n := range p.Names {
					t, err := st.Get(ctx, n)
					if err != nil {
						return notFound(err)
					}
					ts = append(ts, t)
				}
			}
			t := table.Table{Raw: ts}
			if ts == nil {
				t.Raw = []tenant.Tenant{}
			}
			for _, c := range cols {
				for _, f := range tenant.Fields(tenant.Tenant{}) {
					if f.Key == c {
						t.Header = append(t.Header, f.Title)
						t.Keys = append(t.Keys, f.Key)
					}
				}
			}
			for _, tn := range ts {
				var row []string
				fs := tenant.Fields(tn)
				for _, c := range cols {
					for _, f := range fs {
						if f.Key == c {
							row = append(row, f.Value)
						}
					}
				}
				t.Rows = append(t.Rows, row)
			}
			return a.Print(t)
		},
	}
}

func showAuditCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "audit [kind=tenant] [name=NAME] [limit=N]",
		Short: "Show the audit log: who changed what, when, from what, to what",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"kind", "name", "tenant", "limit"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("show audit takes only key=value filters")
			}
			f := tenantstore.AuditFilter{Kind: p.Where["kind"], Name: p.Where["name"], Limit: 50}
			if n := p.Where["tenant"]; n != "" {
				f.Kind, f.Name = tenantstore.AuditKind, n
			}
			if l, ok := p.Where["limit"]; ok {
				n, err := strconv.Atoi(l)
				if err != nil || n <= 0 || n > 100000 {
					return usagef("limit: %q is not a number from 1 to 100000", l)
				}
				f.Limit = n
			}
			st, err := a.tenantStore(ctx)
			if err != nil {
				return err
			}
			es, err := st.Audit(ctx, f)
			if err != nil {
				return err
			}
			t := table.Table{
				Header: []string{"ID", "At", "Actor", "Action", "Kind", "Name", "Change"},
				Keys:   []string{"id", "at", "actor", "action", "kind", "name", "change"},
				Raw:    es,
			}
			for _, e := range es {
				t.Rows = append(t.Rows, []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format("2006-01-02T15:04:05Z"), e.Actor, e.Action,
					e.ObjectKind, e.ObjectName, auditSummary(e.ObjectKind, e.Before, e.After)})
			}
			return a.Print(t)
		},
	}
}

// auditSummary says in one line what an audit row changed.
func auditSummary(kind string, before, after *string) string {
	if f, ok := auditSummaries[kind]; ok {
		return f(before, after)
	}
	if kind != tenantstore.AuditKind {
		switch {
		case before == nil && after != nil:
			return *after
		case after != nil:
			return *before + " -> " + *after
		case before != nil:
			return "was " + *before
		}
		return ""
	}
	var b, a tenant.Tenant
	if before != nil {
		_ = json.Unmarshal([]byte(*before), &b)
	}
	if after != nil {
		_ = json.Unmarshal([]byte(*after), &a)
	}
	switch {
	case before == nil && after != nil:
		return describeInline(a)
	case after == nil:
		return "removed"
	}
	var parts []string
	for _, c := range tenant.Changes(b, a) {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", c.Title, orNone(c.Old), orNone(c.New)))
	}
	return strings.Join(parts, "; ")
}

func describeInline(t tenant.Tenant) string {
	var parts []string
	for _, f := range tenant.Fields(t)[1:] {
		if f.Value == "" || f.Key == "burst" && f.Value == "no" || f.Key == "burstmaxgpus" && f.Value == "0" {
			continue
		}
		parts = append(parts, f.Title+"="+f.Value)
	}
	return strings.Join(parts, " ")
}

// namesList joins names, abbreviated after ten.
func namesList(names []string, sep string) string {
	if len(names) <= 10 {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:10], sep) + fmt.Sprintf("%s... (%d in all)", sep, len(names))
}
