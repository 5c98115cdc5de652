package main

import (
	"bufio"

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
