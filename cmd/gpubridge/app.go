package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// App is what every command shares: streams, global flags and the
// application layer's Env (configuration, logger, clients; cmd/gpubridge/app).
type App struct {
	*app.Env
	in       io.Reader
	out, err io.Writer

	output    table.Options
	immediate bool
	// probe, when set, makes a command built by do store what it takes
	// there instead of running (completion of keys, completeKeys).
	probe *takes
}

// Print writes a table in the form the global flags ask for, with the
// columns and rows that format= and the column filters of showArgs select.
func (a *App) Print(t table.Table) error {
	err := table.Write(a.out, a.output, t)
	var ce *table.ColumnError
	if errors.As(err, &ce) {
		return app.Input(err)
	}
	return err
}

// showArgs parses a show command's arguments: spec's keys, and format= and
// column filters (`where gputype=h100`) of the columns of views (the
// command's tables, empty) for Print.
func (a *App) showArgs(args []string, spec kv.Spec, views ...table.Table) (kv.Args, error) {
	spec.Columns = table.Columns(views...)
	p, err := kv.Parse(args, spec)
	if err != nil {
		return p, app.Input(err)
	}
	a.output.Format, a.output.Where, a.output.Options = p.Format, p.Filters, spec.Keys
	return p, nil
}

// fileFlag adds -f/--file, the file argument of every command that reads
// or writes one (file= is its alias).
func fileFlag(cmd *cobra.Command, p *string, usage string) {
	cmd.Flags().StringVarP(p, "file", "f", "", usage+" (file=PATH works too)")
}

// errAborted is returned when the admin answers no to a confirmation.
var errAborted = errors.New("aborted: nothing was changed")

// Confirm asks like sacctmgr does before a change, unless -i/--immediate was
// given. End of input counts as no, so a script without -i changes nothing.
func (a *App) Confirm(summary string) error {
	if a.immediate {
		return nil
	}
	fmt.Fprintf(a.out, "%s\nWould you like to commit changes? (y/N): ", strings.TrimRight(summary, "\n"))
	line, _ := bufio.NewReader(a.in).ReadString('\n')
	fmt.Fprintln(a.out)
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errAborted
}

// Exit statuses (docs/cli.md): 0 done, 1 an error (or a refusal, or a
// check that found differences), 2 invalid input (nothing was changed);
// plan --detailed-exitcode exits 2 for "there are changes".
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usagef is an error in what the user typed (app.ErrInput: exit code 2).
func usagef(format string, a ...any) error { return app.Inputf(format, a...) }

// exitStatus ends a command that succeeded with a status other than 0
// that is no error (plan --detailed-exitcode: 2 when there are changes).
// Its message, if any, goes to stderr as it is, without "error".
type exitStatus struct {
	code int
	msg  string
}

func (e exitStatus) Error() string { return e.msg }

func run(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, stop := signalContext(context.Background())
	defer stop()
	return runContext(ctx, args, in, out, errw)
}

// runContext is run within ctx (tests stop an in-process serve with it).
func runContext(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	a := &App{Env: &app.Env{Stderr: errw}, in: in, out: out, err: errw}
	defer a.Close()
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var es exitStatus
	if errors.As(err, &es) {
		if es.msg != "" {
			fmt.Fprintf(errw, "gpubridge: %s\n", es.msg)
		}
		return es.code
	}
	var ms *kv.MissingSetError
	if errors.As(err, &ms) && cmd != nil {
		err = fmt.Errorf("%w\n  run: %s %s", err, cmd.CommandPath(), strings.Join(ms.Fixed, " "))
	}
	fmt.Fprintf(errw, "gpubridge: error: %v\n", err)
	if errors.Is(err, app.ErrInput) || errors.As(err, &ms) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}

// isCobraUsage: cobra's own errors are about what was typed (an unknown
// command, a bad or missing argument); flag errors come wrapped by
// flagError.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "accepts ", "requires at least ", "requires exactly ", "accepts at most ", "accepts between ", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// flagError makes a flag error (unknown flag, bad value) a usage error.
func flagError(_ *cobra.Command, err error) error { return app.Input(err) }

// verb builds a sacctmgr-style verb command (show, add, ...) whose nouns are
// its subcommands.
func verb(name, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:     name + " <entity> ...",
		Short:   short,
		Aliases: aliases,
		Args:    unknownSub,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("%s needs an entity: one of %s", name, strings.Join(subNames(cmd), ", "))
		},
	}
}

// unknownSub refuses a word that is none of cmd's subcommands, naming the
// closest one (cobra's suggestions) and the others.
func unknownSub(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", s[0])
	}
	return usagef("%s; one of %s", msg, strings.Join(subNames(cmd), ", "))
}

func subNames(cmd *cobra.Command) []string {
	var n []string
	for _, c := range cmd.Commands() {
		if !c.Hidden && c.Name() != "help" {
			n = append(n, c.Name())
		}
	}
	return n
}
