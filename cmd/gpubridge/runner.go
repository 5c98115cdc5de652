package main

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// A command reads as parse, one call, print: do (doAs) builds its RunE
// from what it takes (takes) and what it does with the parsed arguments;
// shows, showsBy, says, tells and prints print what the one call returned
// (showsPartly and saysPartly also when it failed part-way).

// takes is what a command accepts after its words: kv's keys, how many
// names, and for a show command its tables (format= and column filters).
type takes struct {
	kv.Spec
	names arity
	// usage is the refusal when the names' count is wrong (exit 2); a %q
	// in it is given the names (noName: the first unexpected one).
	usage string
	// views are a show command's tables (empty): with them format= and
	// where COLUMN=VALUE are accepted (showArgs).
	views []table.Table
	// whereName is the key that names the one entity a modify command
	// changes in sacctmgr's form (`modify tenant where name=acme set
	// ...`: "name"); it is the name, and the name may also be given
	// bare (`modify tenant acme set ...`). A where that names none or
	// more than one is refused (exit 2).
	whereName string
	// formerTenants: tenant= may name a tenant the store no longer holds
	// (show audit: a deleted tenant's history; show usage: an account
	// with ledger lines); other shows refuse one (knownTenants).
	formerTenants bool
}

// arity is how many names (words without =) a command takes.
type arity int

const (
	anyNames arity = iota // no check
	noName                // key=value options only
	oneName
	twoNames
)

func (n arity) fits(got int) bool {
	switch n {
	case noName:
		return got == 0
	case oneName:
		return got == 1
	case twoNames:
		return got == 2
	}
	return true
}

// do is a command's RunE: it parses the arguments by t (a refusal exits
// 2, before anything is opened) and runs run with the command's context.
// It is not inlined: completeKeys knows its RunE by the closure's code.
//
//go:noinline
func (a *App) do(t takes, run func(ctx context.Context, p kv.Args) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, words []string) error {
		if a.probe != nil { // completion asks what the command takes
			*a.probe = t
			return nil
		}
		p, err := a.parse(words, t)
		if err != nil {
			return err
		}
		// A command told to read its tenants from a file (--tenants) knows
		// them from there, not from the store.
		fromFile := cmd.Flags().Lookup("tenants") != nil && cmd.Flags().Changed("tenants")
		if t.views != nil && !t.formerTenants && !fromFile && slices.Contains(t.Keys, "tenant") {
			if err := a.knownTenants(cmd.Context(), p.Where["tenant"], ""); err != nil {
				return err
			}
		}
		return run(cmd.Context(), p)
	}
}

// knownTenants refuses a show command's tenant= naming no tenant of the
// store as show tenants NAME does (exit 2, docs/cli.md "Unknown names"):
// one rule for every show that filters by a tenant. A store that cannot be
// read is left to the command (which says why). more is added to the
// hint (show usage: where else it looked).
func (a *App) knownTenants(ctx context.Context, list, more string) error {
	want := kv.List(list)
	if len(want) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	names, err := a.TenantNames(ctx)
	if err != nil {
		return nil
	}
	for _, n := range want {
		if !slices.Contains(names, n) {
			return app.Input(fmt.Errorf("tenant %q: %w (see `gpubridge show tenants`%s)", n, tenant.ErrNotFound, more))
		}
	}
	return nil
}

// parse is do's parse step.
func (a *App) parse(words []string, t takes) (kv.Args, error) {
	var p kv.Args
	var err error
	if t.whereName != "" {
		t.Keys = append(slices.Clone(t.Keys), t.whereName)
	}
	if t.views != nil {
		p, err = a.showArgs(words, t.Spec, t.views...)
	} else if p, err = kv.Parse(words, t.Spec); err != nil {
		err = app.Input(err)
	}
	if err == nil && t.whereName != "" {
		err = whereNames(&p, t.whereName)
	}
	if err != nil || t.names.fits(len(p.Names)) {
		return p, err
	}
	if !strings.Contains(t.usage, "%") {
		return p, usagef("%s", t.usage)
	}
	var got any = p.Names
	if t.names == noName {
		got = p.Names[0]
	}
	return p, usagef(t.usage, got)
}

// whereNames makes the value of `where KEY=` (t.whereName) the names of
// p: one name, given once.
func whereNames(p *kv.Args, key string) error {
	v, ok := p.Where[key]
	if !ok {
		return nil
	}
	delete(p.Where, key)
	names := kv.List(v)
	switch {
	case len(p.Names) > 0:
		return usagef("%q and where %s=%s: name it once (either form)", p.Names[0], key, v)
	case len(names) == 0:
		return usagef("where %s=: give the one to change, e.g. where %s=NAME", key, key)
	case len(names) > 1:
		return usagef("where %s=%s matches %d; modify changes one at a time", key, v, len(names))
	}
	p.Names = names
	return nil
}

// doAs is do for a use case that is given the command's path (what: the
// writer lock's holder, app.WriterHolder).
//
//go:noinline
func (a *App) doAs(t takes, run func(ctx context.Context, what string, p kv.Args) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, words []string) error {
		return a.do(t, func(ctx context.Context, p kv.Args) error { return run(ctx, cmd.CommandPath(), p) })(cmd, words)
	}
}

// showsBy is shows for a table shown by default (no format=, no --json)
// in the columns cols.
func showsBy[T any](a *App, cols []string, view func(T) table.Table) func(T, error) error {
	if !a.output.JSON && a.output.Format == nil {
		a.output.Format = cols
	}
	return shows(a, view)
}

// onlyFilters is what a show command without options of its own takes:
// format= and column filters of its tables (as noNames).
func onlyFilters(views ...table.Table) takes {
	return takes{views: views, names: noName, usage: "unexpected %[1]q: filter with where COLUMN=%[1]s"}
}

// views lists a show command's tables for takes.views.
func views(ts ...table.Table) []table.Table { return ts }

// shows prints what a use case returned as view's table, or returns its
// error: return shows(a, health.ResultsTable)(a.HealthResults(ctx, f)).
func shows[T any](a *App, view func(T) table.Table) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		return a.Print(view(v))
	}
}

// says prints what a use case returned as text (its record with --json),
// or returns its error.
func says[T any](a *App, text func(T) string) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		if a.output.JSON {
			return a.Print(table.Table{Raw: v})
		}
		_, err = fmt.Fprint(a.out, text(v))
		return err
	}
}

// tells prints what a use case returned as text, with --json too (a
// command that prints no record, docs/json.md), or returns its error.
func tells[T any](a *App, text func(T) string) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(a.out, text(v))
		return err
	}
}

// prints prints what a use case returned as the printout view makes of it
// for the output options (app.Printout), or returns its error.
func prints[T any](a *App, view func(T, table.Options) app.Printout) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		return view(v, a.output).Write(a.out, a.err, a.Print)
	}
}

// printViews prints a view's tables, a blank line between two, and its
// note about the choice of tables on stderr.
func (a *App) printViews(ts []table.Table, note string) error {
	return app.Tables(ts, note).Write(a.out, a.err, a.Print)
}

// showsPartly is shows for a use case that can fail after it did
// something (a cycle that failed part-way, a check whose verdict is an
// error): a result (non-nil) is printed, then the use case's error (else
// the printing's) returned.
func showsPartly[T any](a *App, view func(T) table.Table) func(*T, error) error {
	return partly(shows(a, view))
}

// saysPartly is says for such a use case.
func saysPartly[T any](a *App, text func(T) string) func(*T, error) error {
	return partly(says(a, text))
}

// partly makes print (shows, says, tells) print a result that is there
// (nil: the use case did nothing), then return the use case's error, else
// the printing's.
func partly[T any](print func(T, error) error) func(*T, error) error {
	return func(v *T, err error) error {
		if v == nil {
			return err
		}
		if perr := print(*v, nil); err == nil {
			err = perr
		}
		return err
	}
}

// atOnce runs print with the App's output buffered, written at once at
// the end: a year of availability by the day is hundreds of rows.
func atOnce[T any](a *App, print func(T, error) error) func(T, error) error {
	return func(v T, err error) error {
		out := a.out
		w := bufio.NewWriter(out)
		a.out = w
		defer func() { a.out = out }()
		err = print(v, err)
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	}
}

// showsRecordsBy is showsBy for a table of records whose --json prints
// the full records (of the rows the filters keep) whatever format= says.
func showsRecordsBy[T any](a *App, cols []string, view func(T) table.Table) func(T, error) error {
	if a.output.JSON {
		a.output.Format = nil
	}
	return showsBy(a, cols, view)
}
