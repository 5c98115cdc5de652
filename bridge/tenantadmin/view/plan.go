package view

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
)

// Plan prints a plan as plan and apply show it: the store changes of a
// tenants file (sc), one line per Slurm change, the removals waiting for
// jobs, the tenants dropped, the conflicts and a mass deletion's refusal,
// then a summary line.
func Plan(w io.Writer, p *reconcile.Plan, sc []tenantadmin.StoreChange) {
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

// Requests is what an apply sent Slurm: slurmrestd requests, and the
// sacctmgr commands of reconcile.sacctmgr.
type Requests struct{ Reads, Writes, Sacctmgr int64 }

// Applied is what apply prints when it is done: whether it wrote the
// guard file (guardPath "" when none is configured) and how many changes,
// slurmrestd requests and sacctmgr commands it made.
func Applied(guardPath string, guardWritten bool, changes int, n Requests) string {
	var b strings.Builder
	switch {
	case guardPath == "":
		fmt.Fprintln(&b, "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).")
	case guardWritten:
		fmt.Fprintf(&b, "Guard file %s updated.\n", guardPath)
	}
	fmt.Fprintf(&b, "Apply complete: %d change(s) in Slurm; slurmrestd requests: %d read(s), %d write(s)", changes, n.Reads, n.Writes)
	if n.Sacctmgr > 0 {
		fmt.Fprintf(&b, "; sacctmgr commands: %d", n.Sacctmgr)
	}
	b.WriteString(".\n")
	return b.String()
}
