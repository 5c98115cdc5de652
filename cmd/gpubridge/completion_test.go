package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

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

// TestKeyCompletion: every command built by do completes its keys from
// what it takes (KEY=, set, where, format=), and values of format=, of the
// keys with a fixed list, and tenant= through the command's tenant
// completion.
func TestKeyCompletion(t *testing.T) {
	cases := map[string]struct {
		args []string
		want []string // lines of __complete's output, the directive last
		not  []string
	}{
		"add tenant keys":      {args: []string{"add", "tenant", "acme", "bu"}, want: []string{"burst=", "burstmaxgpus=", "burstbudget=", ":6"}},
		"modify tenant where":  {args: []string{"modify", "tenant", "w"}, want: []string{"where", ":4"}},
		"modify tenant name=":  {args: []string{"modify", "tenant", "where", "n"}, want: []string{"name=", ":6"}},
		"modify set":           {args: []string{"modify", "tenant", "where", "name=acme", "s"}, want: []string{"set", ":4"}},
		"modify set keys":      {args: []string{"modify", "tenant", "acme", "set", "gp"}, want: []string{"gpus=", ":6"}, not: []string{"name="}},
		"modify booking":       {args: []string{"modify", "booking", "where", "i"}, want: []string{"id=", ":6"}},
		"show format=":         {args: []string{"show", "nodes", "format=name,gpu"}, want: []string{"format=name,gputype", "format=name,gpus", "format=name,gpusused", ":6"}},
		"show keys":            {args: []string{"show", "usage", "pe"}, want: []string{"period=", ":6"}},
		"fixed values":         {args: []string{"add", "token", "scope="}, want: []string{"scope=read", "scope=book", "scope=admin", ":4"}},
		"given keys left out":  {args: []string{"show", "usage", "period=2026-11", "pe"}, want: []string{":4"}, not: []string{"period="}},
		"no database: tenant=": {args: []string{"show", "usage", "tenant="}, want: []string{":5"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errw := cli(t, append([]string{cobra.ShellCompRequestCmd}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errw)
			}
			for _, w := range tc.want {
				if !slices.Contains(lines, w) {
					t.Errorf("__complete %s: %q lacks %q", strings.Join(tc.args, " "), lines, w)
				}
			}
			for _, w := range tc.not {
				if slices.Contains(lines, w) {
					t.Errorf("__complete %s: %q offers %q", strings.Join(tc.args, " "), lines, w)
				}
			}
		})
	}
}
