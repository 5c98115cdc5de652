package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/internal/clients"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/table"
)

// App is what every command shares: streams, global flags, the lazily loaded
// configuration, the logger and the clients (built on first use).
type App struct {
	in       io.Reader
	out, err io.Writer

	configPath string
	output     table.Options
	immediate  bool
	verbose    bool

	cfg    *config.Config
	logger *slog.Logger
	conns  *clients.Set      // nil until the first client is asked for
	slurm  *slurmrest.Client // the slurmrestd client once built (request counters)

	registry *prometheus.Registry
}

// Config loads and validates the configuration once. The default path is
// optional (the environment may carry everything); an explicit one is not.
func (a *App) Config() (config.Config, error) {
	if a.cfg != nil {
		return *a.cfg, nil
	}
	c, err := a.loadConfig()
	if err != nil {
		return c, err
	}
	a.cfg = &c
	return c, nil
}

// loadConfig reads and validates the configuration afresh (serve reads it
// again at every SIGHUP).
func (a *App) loadConfig() (config.Config, error) {
	path, optional := a.configPath, false
	if path == "" {
		if p, ok := os.LookupEnv("GPUBRIDGE_CONFIG"); ok && p != "" {
			path = p
		} else {
			path, optional = config.DefaultPath, true
		}
	}
	c, err := config.Load(path, optional, os.LookupEnv)
	if err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// Logger is the one logger; debug level with -v. It writes to stderr.
func (a *App) Logger() *slog.Logger {
	if a.logger == nil {
		lvl := slog.LevelInfo
		if a.verbose {
			lvl = slog.LevelDebug
		}
		a.logger = slog.New(slog.NewTextHandler(a.err, &slog.HandlerOptions{Level: lvl}))
	}
	return a.logger
}

// Print writes a table in the form the global flags ask for.
func (a *App) Print(t table.Table) error { return table.Write(a.out, a.output, t) }

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

// usageError marks an error in what the user typed (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func run(args []string, in io.Reader, out, errw io.Writer) int {
	ctx, stop := signalContext(context.Background())
	defer stop()
	return runContext(ctx, args, in, out, errw)
}

// runContext is run within ctx (tests stop an in-process serve with it).
func runContext(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	a := &App{in: in, out: out, err: errw}
	defer a.closeClients()
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(errw, "gpubridge: error: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// verb builds a sacctmgr-style verb command (show, add, ...) whose nouns are
// its subcommands.
func verb(name, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:     name + " <entity> ...",
		Short:   short,
		Aliases: aliases,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("%s needs an entity: one of %s", name, strings.Join(subNames(cmd), ", "))
		},
	}
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
