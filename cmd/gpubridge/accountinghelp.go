package main

import (
	"fmt"

	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/table"
)

// Printing helpers beside shows and says (runner.go), for the accounting,
// token and database commands.

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

// onlyFilters is what a show command without options of its own takes:
// format= and column filters of its tables (as noNames).
func onlyFilters(views ...table.Table) takes {
	return takes{views: views, names: noName, usage: "unexpected %[1]q: filter with where COLUMN=%[1]s"}
}
