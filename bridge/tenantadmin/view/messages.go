package view

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
)

// The messages of the tenant commands, once the store took the change.

// Added is what add tenant prints.
func Added(name string) string {
	return fmt.Sprintf("Tenant %s added. `gpubridge plan` shows the Slurm changes; `gpubridge apply` makes them.\n", name)
}

// Modified is what modify tenant prints: nothing changed, only policy
// that involves nothing in Slurm changed, or apply is needed.
func Modified(name string, changed bool, cs []tenant.FieldChange) string {
	switch {
	case !changed:
		return fmt.Sprintf("Tenant %s: nothing to change.\n", name)
	case tenant.PolicyOnly(cs):
		return fmt.Sprintf("Tenant %s modified. Nothing changes in Slurm: the booking and burst policy are read from the store (by the next booking and the burst controller's next pass); `gpubridge apply` is not needed.\n", name)
	}
	return fmt.Sprintf("Tenant %s modified. `gpubridge apply` makes the change in Slurm.\n", name)
}

// UserAdded is what add user prints (changed false: the user was in the
// tenant already).
func UserAdded(user, tenantName string, changed bool) string {
	if !changed {
		return fmt.Sprintf("User %s is already in tenant %s.\n", user, tenantName)
	}
	return fmt.Sprintf("User %s added to tenant %s. `gpubridge apply` creates the association.\n", user, tenantName)
}

// UserRemoved is what delete user prints.
func UserRemoved(user, tenantName string) string {
	return fmt.Sprintf("User %s removed from tenant %s. `gpubridge apply` removes the association once their jobs there have ended.\n", user, tenantName)
}

// Deleting is delete tenant's confirmation: the tenants and which of them
// are released (adopted) rather than deleted whole.
func Deleting(ds []tenantadmin.Deletion) string {
	var b strings.Builder
	b.WriteString(" Deleting tenant(s)")
	for _, d := range ds {
		if d.Release {
			fmt.Fprintf(&b, "\n  %s  (release: adopted; the site's account and its original users stay)", d.Name)
		} else {
			fmt.Fprintf(&b, "\n  %s", d.Name)
		}
	}
	return b.String() + "\n (new jobs are refused at the next apply; the Slurm objects go once running and pending jobs end)"
}

// Deleted is what delete tenant prints: the tenants named (names) are
// marked for deletion, those of released only released.
func Deleted(names, released []string) string {
	s := fmt.Sprintf("Tenant(s) %s marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n", namesList(names, ", "))
	if len(released) > 0 {
		s += fmt.Sprintf("Released, not deleted: %s (adopted: only gpubridge's objects go; give --purge to delete the site's account too).\n", namesList(released, ", "))
	}
	return s
}

// namesList joins names, abbreviated after ten.
func namesList(names []string, sep string) string {
	if len(names) <= 10 {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:10], sep) + fmt.Sprintf("%s... (%d in all)", sep, len(names))
}

// Importing is import's confirmation: the tenants the accounts become,
// and the notes on what cannot be carried over.
func Importing(ts []tenant.Tenant, notes []string) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(Tenant(" Importing account as tenant", t))
	}
	for _, note := range notes {
		fmt.Fprintf(&b, " Note: %s\n", note)
	}
	return b.String()
}

// Imported is what import prints: the accounts imported (none: nothing
// to import).
func Imported(names []string) string {
	if len(names) == 0 {
		return "Nothing to import.\n"
	}
	return fmt.Sprintf("Imported %s. `gpubridge plan` shows how apply will align and mark their Slurm objects.\n", strings.Join(names, ", "))
}
