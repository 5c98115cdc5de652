package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// A command reads as parse, one call, print: do builds its RunE from what
// it takes (takes) and what it does with the parsed arguments; shows and
// says print what the one call returned.

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
func (a *App) do(t takes, run func(ctx context.Context, p kv.Args) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, words []string) error {
		p, err := a.parse(words, t)
		if err != nil {
			return err
		}
		return run(cmd.Context(), p)
	}
}

// parse is do's parse step.
func (a *App) parse(words []string, t takes) (kv.Args, error) {
	var p kv.Args
	var err error
	if t.views != nil {
		p, err = a.showArgs(words, t.Spec, t.views...)
	} else if p, err = kv.Parse(words, t.Spec); err != nil {
		err = app.Input(err)
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

// views lists a show command's tables for takes.views.
func views(ts ...table.Table) []table.Table { return ts }

// shows prints what a use case returned as view's table, or returns its
// error: return shows(a, health.ResultsTable)(a.HealthResults(ctx, p.Where)).
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
		return a.printText(v, text(v))
	}
}

// printText prints raw as JSON with --json, else text.
func (a *App) printText(raw any, text string) error {
	if a.output.JSON {
		return a.Print(table.Table{Raw: raw})
	}
	_, err := fmt.Fprint(a.out, text)
	return err
}
