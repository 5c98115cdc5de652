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
// for the output options, or returns its error.
func prints[T any](a *App, view func(T, table.Options) app.Printout) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		return a.printOut(view(v, a.output))
	}
}

// printOut prints p's parts in order: tables as Print does, text on
// stdout or stderr.
func (a *App) printOut(p app.Printout) error {
	if p.Err != nil {
		return p.Err
	}
	for _, part := range p.Parts {
		var err error
		switch {
		case part.Table != nil:
			err = a.Print(*part.Table)
		case part.Stderr:
			fmt.Fprint(a.err, part.Text)
		default:
			_, err = fmt.Fprint(a.out, part.Text)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// printViews prints a view's tables, a blank line between two, and its
// note about the choice of tables on stderr.
func (a *App) printViews(ts []table.Table, note string) error {
	return a.printOut(app.Tables(ts, note))
}

// onlyFilters is what a show command without options of its own takes:
// format= and column filters of its tables (as noNames).
func onlyFilters(views ...table.Table) takes {
	return takes{views: views, names: noName, usage: "unexpected %[1]q: filter with where COLUMN=%[1]s"}
}
