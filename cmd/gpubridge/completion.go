package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// registerCompletion keeps cobra's completion command (bash, zsh, fish,
// powershell; cobra adds it when the command runs, after the output streams
// are set) visible, so that it is in `--help` and the man pages. The
// scripts complete commands, flags and, where a command asks for them with
// completeTenants, tenant names (they call `gpubridge __complete ...`).
func registerCompletion(_ *App, root *cobra.Command) {
	root.CompletionOptions.DisableDefaultCmd = false
	root.CompletionOptions.HiddenDefaultCmd = false
}

// completionTimeout bounds the store read behind one <TAB>.
const completionTimeout = 3 * time.Second

// tenantNamesFunc lists the tenant names; a test swaps it.
type tenantNamesFunc func(ctx context.Context, a *App) ([]string, error)

// completeTenants returns a ValidArgsFunction that completes tenant names
// from the tenant store: `tenant=NAME` arguments always, and bare NAME
// arguments when positional is true (modify/delete/show tenant NAME). A
// store that cannot be read completes nothing and says nothing (no file
// names either). Hook-up, one line per command: ValidArgsFunction:
// completeTenants(a, false) on the commands that take tenant= (add
// booking, show bookings, find slot, show burst, add/show/delete token);
// completeTenants(a, true) on those that also take a bare tenant name
// (modify tenant, delete tenant, show tenants: the tenant files').
func completeTenants(a *App, positional bool) cobra.CompletionFunc {
	// The store is read without migrating it (a <TAB> must never change
	// the database).
	return completeTenantsFrom(a, positional, func(ctx context.Context, a *App) ([]string, error) { return a.TenantNames(ctx) })
}

func completeTenantsFrom(a *App, positional bool, list tenantNamesFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		prefix, partial := "", toComplete
		switch {
		case strings.HasPrefix(strings.ToLower(toComplete), "tenant="):
			prefix, partial = toComplete[:len("tenant=")], toComplete[len("tenant="):]
		case !positional || strings.Contains(toComplete, "="):
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := context.Background()
		if cmd != nil && cmd.Context() != nil {
			ctx = cmd.Context()
		}
		ctx, cancel := context.WithTimeout(ctx, completionTimeout)
		defer cancel()
		names, err := list(ctx, a)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, partial) && (prefix != "" || !slices.Contains(args, n)) {
				out = append(out, prefix+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
