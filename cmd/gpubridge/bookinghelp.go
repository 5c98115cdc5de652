package main

import (
	"bufio"
	"fmt"

	"github.com/gpubridge/gpubridge/internal/table"
)

// Printing helpers beside shows and says (runner.go) for the commands of
// bookings, burst, config, gres and slurm.

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

// showsNoted is shows for a long table with notes under it (not with -P
// or --json), in one write: a year by the day is hundreds of rows. view
// gets whether the table is the parsable form (-P).
func showsNoted[T any](a *App, view func(T, bool) (table.Table, string)) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		t, notes := view(v, a.output.Parsable)
		out := a.out
		w := bufio.NewWriter(out)
		a.out = w
		defer func() { a.out = out }()
		err = a.Print(t)
		if err == nil && !a.output.Parsable && !a.output.JSON {
			fmt.Fprint(w, notes) // a write error shows at Flush
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	}
}

// recordColumns makes a table of records print cols unless format= picks
// others, and --json the full records (of the rows the filters keep)
// whatever format= says.
func (a *App) recordColumns(cols []string) {
	switch {
	case a.output.JSON:
		a.output.Format = nil
	case a.output.Format == nil:
		a.output.Format = cols
	}
}
