package main

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
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

// completeKeys gives every command built by do (and doAs) completion of
// its keys from what it takes: KEY= before `set`, the set keys and `set`
// itself on a modify, format= and the columns on a show; and of values:
// tenant= (tenant names, from the store), format= (the columns, after a
// comma too) and the keys with a fixed set of values (valueSets). A
// command's own ValidArgsFunction (tenant names) still completes its
// bare names.
func completeKeys(a *App, root *cobra.Command) {
	doCode := reflect.ValueOf(a.do(takes{}, nil)).Pointer()
	doAsCode := reflect.ValueOf(a.doAs(takes{}, nil)).Pointer()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.RunE == nil {
			return
		}
		if code := reflect.ValueOf(c.RunE).Pointer(); code != doCode && code != doAsCode {
			return
		}
		names := c.ValidArgsFunction
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var t takes
			a.probe = &t
			err := cmd.RunE(cmd, nil)
			a.probe = nil
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeTakes(a, t, names, cmd, args, toComplete)
		}
	}
	walk(root)
}

// valueSets are the keys whose values are a fixed list.
var valueSets = map[string][]string{
	"scope": {"read", "book", "admin"},
	"burst": {"yes", "no"},
	"admin": {"yes", "no"},
	"tier":  {"reserved", "ondemand", "booked"},
	"table": {"jobs", "tenants"},
	"state": kv.List(strings.ReplaceAll(reserve.StatesList(), " ", "")),
}

// completeTakes completes one word of a command that takes t: a value
// after KEY=, else the keys (and names by names, the command's own
// completion of them).
func completeTakes(a *App, t takes, names cobra.CompletionFunc, cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	inSet := slices.ContainsFunc(args, func(w string) bool { return strings.EqualFold(w, "set") })
	keys := t.Keys
	if inSet {
		keys = t.SetKeys
	}
	var columns []string
	if t.views != nil {
		columns = table.Columns(t.views...)
	}
	if k, v, ok := strings.Cut(toComplete, "="); ok {
		k = strings.ToLower(k)
		var values []string
		switch {
		case k == "tenant" && names != nil:
			return names(cmd, args, toComplete)
		case k == t.whereName && names != nil: // modify tenant where name=
			got, dir := names(cmd, nil, v)
			for i := range got {
				got[i] = k + "=" + got[i]
			}
			return got, dir
		case k == "format" && columns != nil:
			done, last := "", v
			if i := strings.LastIndex(v, ","); i >= 0 {
				done, last = v[:i+1], v[i+1:]
			}
			var out []cobra.Completion
			for _, c := range columns {
				if strings.HasPrefix(strings.ToLower(c), strings.ToLower(last)) {
					out = append(out, k+"="+done+c)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		default:
			values = valueSets[k]
		}
		var out []cobra.Completion
		for _, x := range values {
			if strings.HasPrefix(x, v) {
				out = append(out, k+"="+x)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	if names != nil && len(args) == 0 {
		out, _ = names(cmd, args, toComplete)
	}
	words := slices.Clone(keys)
	if !inSet && t.whereName != "" {
		words = append(words, t.whereName)
	}
	if !inSet && columns != nil {
		words = append(words, "format")
	}
	for _, k := range words {
		if strings.HasPrefix(k, strings.ToLower(toComplete)) && !slices.ContainsFunc(args, func(w string) bool { return strings.HasPrefix(strings.ToLower(w), k+"=") }) {
			out = append(out, k+"=")
		}
	}
	if t.SetKeys != nil && !inSet && strings.HasPrefix("set", strings.ToLower(toComplete)) && len(args) > 0 {
		out = append(out, "set")
	}
	if t.whereName != "" && len(args) == 0 && strings.HasPrefix("where", strings.ToLower(toComplete)) {
		out = append(out, "where")
	}
	dir := cobra.ShellCompDirectiveNoFileComp
	if len(out) > 0 && !slices.ContainsFunc(out, func(w string) bool { return !strings.HasSuffix(w, "=") }) {
		dir |= cobra.ShellCompDirectiveNoSpace // KEY= is followed by its value
	}
	return out, dir
}
