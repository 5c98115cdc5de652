package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
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

type planOutput struct {
	*reconcile.Plan
	StoreChanges []storeChange `json:"storeChanges,omitempty"`
	Reads        int64         `json:"reads"`
	Writes       int64         `json:"writes"`
	Applied      bool          `json:"applied,omitempty"`
	GuardWritten bool          `json:"guardWritten,omitempty"`
}

// storeChange is what a tenants file changes in the store for one tenant.
type storeChange = tenantadmin.StoreChange

func (a *App) printPlan(w io.Writer, p *reconcile.Plan, sc []storeChange) {
	for _, c := range sc {
		fmt.Fprintf(w, "%s tenant %s", map[string]string{tenantadmin.ActionCreate: "+", tenantadmin.ActionModify: "~", tenantadmin.ActionDelete: "-"}[c.Action], c.Tenant)
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
		if slices.Contains(p.Released, n) {
			fmt.Fprintf(w, "- tenant %s  (release finished: dropped from the store; the site's account and its original users stay)\n", n)
			continue
		}
		fmt.Fprintf(w, "- tenant %s  (deletion finished: dropped from the store)\n", n)
	}
	for _, c := range p.Conflicts {
		fmt.Fprintf(w, "! conflict: %s\n", c)
	}
	if p.MassDelete != nil {
		fmt.Fprintf(w, "! mass deletion %s\n", p.MassDelete)
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
	if p.Refused() {
		fmt.Fprintf(w, "%d change(s) held back: the plan deletes more than a store may (%s; see docs/tenants.md, \"Mass deletions\"); the rest is applied.\n", p.MassDelete.HeldBack, p.MassDelete.Reason)
		cr, mo, de = 0, 0, 0
		for _, c := range p.Changes {
			switch {
			case c.HeldBack:
			case c.Action == reconcile.Create:
				cr++
			case c.Action == reconcile.Modify:
				mo++
			case c.Action == reconcile.Delete:
				de++
			}
		}
		if cr+mo+de == 0 {
			return
		}
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
			svc, err := a.tenantService(cmd, "")
			if err != nil {
				return err
			}
			// Connect first (an error is left for the use case to meet), so that
			// the counts do not include the version negotiation.
			_, _ = a.Slurm(ctx)
			r0, w0 := a.Requests()
			p, err := svc.Plan(ctx)
			if err != nil {
				return err
			}
			r1, w1 := a.Requests()
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
				return exitStatus{code: exitUsage, msg: fmt.Sprintf("%d change(s) to apply (--detailed-exitcode)", len(p.Changes)+len(p.Removed))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when there are changes, 0 when there are none")
	return cmd
}

func applyCmd(a *App) *cobra.Command {
	var file, guardPath string
	var allowMassDelete bool
	cmd := &cobra.Command{
		Use:   "apply [-f tenants.yaml]",
		Short: "Make Slurm match the tenants (idempotent: a second apply makes no writes)",
		Long: `apply computes the plan (see ` + "`gpubridge plan`" + `), asks for confirmation (unless
-i), and makes the changes with batched slurmrestd writes. Run again, it finds
nothing to do and writes nothing.

With -f FILE it first takes the tenants of a YAML file (see docs/tenants.md):
each listed tenant is created or replaced whole, names under delete: are
deleted, and the file is refused whole, with every problem listed, if any
tenant in it is invalid. The file's store changes are written in one
transaction, refused if a tenant changed since it was read.

apply holds the cluster's writer lock while it plans and writes (it waits
reconcile.writerLockTimeout for another writer). After a confirmation it
plans again and refuses if the plan changed meanwhile.

A plan that deletes the Slurm objects of tenants the store has no record of
(an empty or wrong database), of every tenant, or of more than
reconcile.maxDeleteShare of them is refused unless --allow-mass-delete is
given (see docs/tenants.md, "Mass deletions").

After Slurm accepted the changes, apply writes the job_submit guard's data
file (--guard-file, default config tenants.guardFile or $GPUBRIDGE_GUARD_FILE;
see contrib/job_submit.lua).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if guardPath == "" {
				guardPath = a.guardPath()
			}
			req := tenantadmin.ApplyRequest{AllowMassDelete: allowMassDelete}
			if file != "" {
				b, err := a.readTenantsFile(file)
				if err != nil {
					return err
				}
				req.File = b
			}
			if !a.output.JSON {
				req.Show = func(pv tenantadmin.Preview) { a.printPlan(a.out, pv.Plan, pv.StoreChanges) }
			}
			if !a.immediate {
				req.Confirm = func(tenantadmin.Preview) error { return a.Confirm("") }
			}
			svc, err := a.tenantService(cmd, guardPath)
			if err != nil {
				return err
			}
			// Connect first (an error is left for the use case to meet), so that
			// the counts do not include the version negotiation.
			_, _ = a.Slurm(ctx)
			r0, w0 := a.Requests()
			res, err := svc.Apply(ctx, req)
			if err != nil {
				return tenantErr(err)
			}
			r1, w1 := a.Requests()
			out := planOutput{Plan: res.Plan, StoreChanges: res.StoreChanges, Reads: r1 - r0, Writes: w1 - w0, Applied: res.Applied, GuardWritten: res.GuardWritten}
			if a.output.JSON {
				return a.printTenantJSON(out)
			}
			switch {
			case guardPath == "":
				fmt.Fprintln(a.out, "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).")
			case res.GuardWritten:
				fmt.Fprintf(a.out, "Guard file %s updated.\n", guardPath)
			}
			fmt.Fprintf(a.out, "Apply complete: %d change(s) in Slurm; slurmrestd requests: %d read(s), %d write(s).\n", len(res.Plan.Changes), out.Reads, out.Writes)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "YAML file of tenants to create, replace or delete first")
	cmd.Flags().StringVar(&guardPath, "guard-file", "", "where to write the job_submit guard's data file (default $GPUBRIDGE_GUARD_FILE)")
	cmd.Flags().BoolVar(&allowMassDelete, "allow-mass-delete", false, "apply a plan that deletes the objects of tenants the store has no record of, of every tenant, or of more than reconcile.maxDeleteShare of them")
	return cmd
}

// readTenantsFile reads a tenants file ("-": standard input), at most
// tenant.MaxFileBytes and one byte more, so that a larger one is refused
// without being read whole.
func (a *App) readTenantsFile(path string) ([]byte, error) {
	r := a.in
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usageError{fmt.Errorf("tenants file: %w", err)}
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, tenant.MaxFileBytes+1))
	if err != nil {
		return nil, usageError{fmt.Errorf("tenants file: %w", err)}
	}
	return b, nil
}

// printTenantJSON writes v as indented JSON (for --json).
func (a *App) printTenantJSON(v any) error {
	return table.Write(a.out, table.Options{JSON: true}, table.Table{Raw: v})
}
