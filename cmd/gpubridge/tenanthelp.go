package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The tenant commands' helpers beside runner.go's do, shows and says
// (and accountinghelp.go's tells).

// doAs is do for a use case that is given the command's path (what: the
// writer lock's holder, app.WriterHolder).
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
