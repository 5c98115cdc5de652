package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

func planCmd(a *App) *cobra.Command {
	var detailed bool
	var file string
	cmd := &cobra.Command{
		Use:   "plan [-f tenants.yaml]",
		Short: "Show what apply would change in Slurm, field by field",
		Long: `plan reads the live cluster (accounts, associations and QOS) and the store
and prints one line per change:
  + account acme ...                                  created
  ~ qos acme  GrpTRES gres/gpu:h100=2 -> gres/gpu:h100=3   one field, old -> new
  - user carol (acme)                                 deleted
  ! account old  waiting for 1 running ... job(s)     a removal deferred until jobs end
It changes nothing. Exit status 0; with --detailed-exitcode, 2 when there are
changes (like terraform plan).

With -f FILE (- for stdin) it plans the tenants of a YAML file as
` + "`apply -f FILE`" + ` would take them (lines ending "(store)" are the file's
changes to gpubridge's store), writes nothing and asks nothing: a GitOps
preview. A file that cannot be read or has an invalid tenant exits 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var out app.PlanReport
			var err error
			if file != "" {
				out, err = a.PlanFile(cmd.Context(), cmd.CommandPath(), file, a.in)
			} else {
				out, err = a.Plan(cmd.Context(), cmd.CommandPath())
			}
			if err := says(a, app.PlanReport.Text)(out, err); err != nil {
				return err
			}
			if err := out.Err(); err != nil || !detailed || out.Pending() == 0 {
				return err
			}
			return exitStatus{code: exitUsage, msg: fmt.Sprintf("%d change(s) to apply (--detailed-exitcode)", out.Pending())}
		},
	}
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when there are changes, 0 when there are none")
	cmd.Flags().StringVarP(&file, "file", "f", "", "YAML file of tenants to plan as apply -f would take it (nothing is written)")
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
			o := app.ApplyOptions{What: cmd.CommandPath(), File: file, In: a.in, GuardPath: guardPath, AllowMassDelete: allowMassDelete, Confirm: a.confirmer()}
			if !a.output.JSON {
				o.Show = a.out
			}
			return says(a, app.ApplyReport.Text)(a.ApplyTenants(cmd.Context(), o))
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "YAML file of tenants to create, replace or delete first")
	cmd.Flags().StringVar(&guardPath, "guard-file", "", "where to write the job_submit guard's data file (default $GPUBRIDGE_GUARD_FILE)")
	cmd.Flags().BoolVar(&allowMassDelete, "allow-mass-delete", false, "apply a plan that deletes the objects of tenants the store has no record of, of every tenant, or of more than reconcile.maxDeleteShare of them")
	return cmd
}
