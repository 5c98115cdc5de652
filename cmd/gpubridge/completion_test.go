package main

import (
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/app"

	"github.com/spf13/cobra"
)

// TestTenantCompletionHookedUp: the commands that take tenant= complete
// tenant names (a store that cannot be read completes nothing, and no
// file names).
func TestTenantCompletionHookedUp(t *testing.T) {
	root := newRootCmd(&App{Env: &app.Env{}})
	for _, path := range []string{"add booking", "show bookings", "find slot", "show burst", "add token", "show tokens", "delete token",
		"show usage", "export chargeback", "modify tenant", "delete tenant", "show tenants", "add user", "delete user"} {
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.ValidArgsFunction == nil {
			t.Errorf("%s: no tenant completion (err %v)", path, err)
		}
	}
	// Through cobra, with no database configured: nothing, no files.
	code, out, _ := cli(t, cobra.ShellCompRequestCmd, "add", "booking", "tenant=")
	if code != 0 || strings.TrimSpace(out) != ":5" {
		t.Errorf("__complete add booking tenant= exit %d, %q; want only the directive :5 (error, no file completion)", code, out)
	}
}
