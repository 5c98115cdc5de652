package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The tenant commands' printing helpers beside runner.go's do, shows and
// says.

// doAs is do for a use case that is given the command's path (what: the
// writer lock's holder, app.WriterHolder).
func (a *App) doAs(t takes, run func(ctx context.Context, what string, p kv.Args) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, words []string) error {
		return a.do(t, func(ctx context.Context, p kv.Args) error { return run(ctx, cmd.CommandPath(), p) })(cmd, words)
	}
}

// tells prints what a use case returned as text, with --json too (what a
// command that changes something says it did is no record), or returns
// its error.
func tells[T any](a *App, text func(T) string) func(T, error) error {
	return func(v T, err error) error {
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(a.out, text(v))
		return err
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
