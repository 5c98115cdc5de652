package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/table"
)

// guardPath is where apply writes the job_submit guard's data file when
// --guard-file is not given: config tenants.guardFile ($GPUBRIDGE_GUARD_FILE).
// A configuration error is reported by the command's other config reads.
func (a *App) guardPath() string {
	c, err := a.Config()
	if err != nil {
		return ""
	}
	return c.Tenants.GuardFile
}

// reconciler wires the store, the slurmrestd adapter and the guard file.
func (a *App) reconciler(ctx context.Context, guardPath string) (*reconcile.Reconciler, error) {
	st, err := a.tenantStore(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := a.tenantCluster(ctx)
	if err != nil {
		return nil, err
	}
	n, err := a.naming()
	if err != nil {
		return nil, err
	}
	r := &reconcile.Reconciler{Store: st, Cluster: cl, Naming: n, Actor: actor(), Logger: a.Logger()}
	if guardPath != "" {
		r.WriteGuard = slurmadapter.GuardFile{Path: guardPath, Logger: a.Logger()}.Write
	}
	return r, nil
}

// requests returns slurmrestd's request counters so far.
func (a *App) requests() (reads, writes int64) {
	if a.slurm == nil {
		return 0, 0
	}
	s := a.slurm.Stats()
	return s.Reads, s.Writes
}

type planOutput struct {
	*reconcile.Plan
	StoreChanges []storeChange `json:"storeChanges,omitempty"`
	Reads        int64         `json:"reads"`
	Writes       int64         `json:"writes"`
	Applied      bool          `json:"applied,omitempty"`
	GuardWritten bool          `json:"guardWritten,omitempty"`
}

type storeChange struct {
	Action  string               `json:"action"`
	Tenant  string               `json:"tenant"`
	Changes []tenant.FieldChange `json:"changes,omitempty"`
}

func (a *App) printPlan(w io.Writer, p *reconcile.Plan, sc []storeChange) {
	for _, c := range sc {
		fmt.Fprintf(w, "%s tenant %s", map[string]string{tenantstore.ActionCreate: "+", tenantstore.ActionModify: "~", tenantstore.ActionDelete: "-"}[c.Action], c.Tenant)
		var parts []string
		for _, fc := range c.Changes {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", fc.Title, orNone(fc.Old), orNone(fc.New)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %s", strings.Join(parts, "; "))
		}
		fmt.Fprintln(w, "  (store)")
	}
	for _, c := range p.Changes {
		fmt.Fprintln(w, c.String())
	}
	for _, wt := range p.Waiting {
		fmt.Fprintln(w, wt.String())
	}
	for _, n := range p.Removed {
		fmt.Fprintf(w, "- tenant %s  (deletion finished: dropped from the store)\n", n)
	}
	for _, c := range p.Conflicts {
		fmt.Fprintf(w, "! conflict: %s\n", c)
	}
	var cr, mo, de int
	for _, c := range p.Changes {
		switch c.Action {
		case reconcile.Create:
			cr++
		case reconcile.Modify:
			mo++
		case reconcile.Delete:
			de++
		}
	}
	if len(p.Conflicts) > 0 {
		fmt.Fprintf(w, "Nothing can be applied until the %d conflict(s) are resolved.\n", len(p.Conflicts))
		return
	}
	if p.Empty() && len(p.Removed) == 0 && len(sc) == 0 {
		if len(p.Waiting) > 0 {
			fmt.Fprintf(w, "No changes now: %d removal(s) waiting for jobs to end.\n", len(p.Waiting))
			return
		}
		fmt.Fprintln(w, "No changes: Slurm matches the tenants.")
		return
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to modify, %d to delete in Slurm", cr, mo, de)
	if len(p.Waiting) > 0 {
		fmt.Fprintf(w, "; %d removal(s) waiting for jobs", len(p.Waiting))
	}
	fmt.Fprintln(w, ".")
}

func planCmd(a *App) *cobra.Command {
	var detailed bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change in Slurm, field by field",
		Long: `plan reads the live cluster (accounts, associations and QOS: three requests)
and prints one line per change:
  + account acme ...                                  created
  ~ qos acme  GrpTRES gres/gpu:h100=2 -> gres/gpu:h100=3   one field, old -> new
  - user carol (acme)                                 deleted
  ! account old  waiting for 1 running ... job(s)     a removal deferred until jobs end
It changes nothing. Exit status 0; with --detailed-exitcode, 2 when there are
changes (like terraform plan).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			r, err := a.reconciler(ctx, "")
			if err != nil {
				return err
			}
			r0, w0 := a.requests()
			p, _, err := r.Plan(ctx)
			if err != nil {
				return err
			}
			r1, w1 := a.requests()
			if a.output.JSON {
				if err := a.printTenantJSON(planOutput{Plan: p, Reads: r1 - r0, Writes: w1 - w0}); err != nil {
					return err
				}
			} else {
				a.printPlan(a.out, p, nil)
			}
			if err := p.Err(); err != nil {
				return err
			}
			if detailed && (!p.Empty() || len(p.Removed) > 0) {
				return usagef("plan: %d change(s) to apply (--detailed-exitcode)", len(p.Changes)+len(p.Removed))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when there are changes, 0 when there are none")
	return cmd
}

func applyCmd(a *App) *cobra.Command {
	var file, guardPath string
	cmd := &cobra.Command{
		Use:   "apply [-f tenants.yaml]",
		Short: "Make Slurm match the tenants (idempotent: a second apply makes no writes)",
		Long: `apply computes the plan (see ` + "`gpubridge plan`" + `), asks for confirmation (unless
-i), and makes the changes with batched slurmrestd writes. Run again, it finds
nothing to do and writes nothing.

With -f FILE it first takes the tenants of a YAML file (see docs/tenants.md):
each listed tenant is created or replaced whole, names under delete: are
deleted, and the file is refused whole, with every problem listed, if any
tenant in it is invalid.

After Slurm accepted the changes, apply writes the job_submit guard's data
file (--guard-file, default config tenants.guardFile or $GPUBRIDGE_GUARD_FILE;
see contrib/job_submit.lua).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if guardPath == "" {
				guardPath = a.guardPath()
			}
			var fileTenants []tenant.Tenant
			var fileDeletes []string
			var sc []storeChange
			if file != "" {
				var err error
				if fileTenants, fileDeletes, err = a.readTenantsFile(ctx, file); err != nil {
					return err
				}
			}
			r, err := a.reconciler(ctx, guardPath)
			if err != nil {
				return err
			}
			st := r.Store.(*tenantstore.Store)
			r0, w0 := a.requests()
			stored, err := st.List(ctx)
			if err != nil {
				return err
			}
			ts := stored
			if file != "" {
				ts, sc = mergeFile(stored, fileTenants, fileDeletes)
			}
			p, err := reconcile.Compute(ctx, r.Cluster, ts, r.Naming)
			if err != nil {
				return err
			}
			out := planOutput{Plan: p}
			if !a.output.JSON {
				a.printPlan(a.out, p, sc)
			}
			if err := p.Err(); err != nil {
				return err
			}
			if !p.Empty() || len(p.Removed) > 0 || len(sc) > 0 {
				if err := a.Confirm(""); err != nil {
					return err
				}
			}
			if len(sc) > 0 {
				if err := storeFile(ctx, st, ts, sc); err != nil {
					return err
				}
			}
			res, err := r.Apply(ctx, p, ts)
			r1, w1 := a.requests()
			out.Reads, out.Writes, out.Applied, out.GuardWritten = r1-r0, w1-w0, err == nil, res.GuardWritten
			if err != nil {
				return err
			}
			if a.output.JSON {
				return a.printTenantJSON(out)
			}
			switch {
			case guardPath == "":
				fmt.Fprintln(a.out, "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).")
			case res.GuardWritten:
				fmt.Fprintf(a.out, "Guard file %s updated.\n", guardPath)
			}
			fmt.Fprintf(a.out, "Apply complete: %d change(s) in Slurm; slurmrestd requests: %d read(s), %d write(s).\n", len(p.Changes), out.Reads, out.Writes)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "YAML file of tenants to create, replace or delete first")
	cmd.Flags().StringVar(&guardPath, "guard-file", "", "where to write the job_submit guard's data file (default $GPUBRIDGE_GUARD_FILE)")
	return cmd
}

// readTenantsFile parses and validates a tenants file against the cluster's
// GPU types and the store; the whole file is refused if anything is wrong.
func (a *App) readTenantsFile(ctx context.Context, path string) ([]tenant.Tenant, []string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(a.in)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("tenants file: %w", err)}
	}
	n, err := a.naming()
	if err != nil {
		return nil, nil, err
	}
	f, ps := tenant.ParseFile(b, nil, tenant.Rules{Naming: n})
	var notes []string
	cl, terr := a.tenantCluster(ctx)
	var types []string
	if terr == nil {
		types, terr = cl.GPUTypes(ctx)
	}
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
		f, ps = tenant.ParseFile(b, existing, tenant.Rules{GPUTypes: types, Naming: n})
		for i, d := range f.Delete {
			if !slices.Contains(existing, d) {
				ps = append(ps, tenant.Problem{Field: fmt.Sprintf("delete[%d]", i), Msg: fmt.Sprintf("%q is not a tenant", d)})
			}
		}
	}
	if len(ps) > 0 {
		return nil, nil, problemsError(ps, notes...)
	}
	if terr != nil {
		return nil, nil, terr
	}
	if serr != nil {
		return nil, nil, serr
	}
	return f.Tenants, f.Delete, nil
}

// mergeFile returns the stored tenants with the file's applied, and what
// changes in the store. A file tenant keeps the adopted mark of the stored
// one and is active (declaring a tenant being deleted takes it back).
func mergeFile(stored, file []tenant.Tenant, deletes []string) ([]tenant.Tenant, []storeChange) {
	out := slices.Clone(stored)
	var sc []storeChange
	for _, ft := range file {
		ft = ft.Clone()
		ft.State = tenant.Active
		i := slices.IndexFunc(out, func(t tenant.Tenant) bool { return t.Name == ft.Name })
		if i < 0 {
			out = append(out, ft)
			sc = append(sc, storeChange{Action: tenantstore.ActionCreate, Tenant: ft.Name})
			continue
		}
		ft.Adopted = out[i].Adopted
		if cs := tenant.Changes(out[i], ft); len(cs) > 0 {
			sc = append(sc, storeChange{Action: tenantstore.ActionModify, Tenant: ft.Name, Changes: cs})
		}
		out[i] = ft
	}
	for _, d := range deletes {
		i := slices.IndexFunc(out, func(t tenant.Tenant) bool { return t.Name == d })
		if i >= 0 && !out[i].IsDeleting() {
			out[i] = out[i].Clone()
			out[i].State = tenant.Deleting
			sc = append(sc, storeChange{Action: tenantstore.ActionDelete, Tenant: d})
		}
	}
	return out, sc
}

// storeFile writes the merged tenants that changed (one transaction for the
// creates and modifies, one for the deletes).
func storeFile(ctx context.Context, st *tenantstore.Store, ts []tenant.Tenant, sc []storeChange) error {
	var put []tenant.Tenant
	var del []string
	for _, c := range sc {
		if c.Action == tenantstore.ActionDelete {
			del = append(del, c.Tenant)
			continue
		}
		for _, t := range ts {
			if t.Name == c.Tenant {
				put = append(put, t)
			}
		}
	}
	if len(put) > 0 {
		if _, err := st.Put(ctx, actor(), put); err != nil {
			return err
		}
	}
	if len(del) > 0 {
		if _, err := st.MarkDeleting(ctx, actor(), del); err != nil {
			return err
		}
	}
	return nil
}

// printTenantJSON writes v as indented JSON (for --json).
func (a *App) printTenantJSON(v any) error {
	return table.Write(a.out, table.Options{JSON: true}, table.Table{Raw: v})
}
