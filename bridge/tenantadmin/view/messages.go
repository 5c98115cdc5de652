package view

import (
	"fmt"

	"github.com/gpubridge/gpubridge/bridge/tenant"
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
