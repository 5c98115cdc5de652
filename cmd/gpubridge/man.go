package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
)

func registerMan(a *App, root *cobra.Command) { root.AddCommand(manCmd(a, root)) }

// manCmd writes one man page per command of the tree (section 1), from the
// commands' own help, for `make man` and the Debian package.
func manCmd(a *App, root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages of every command (section 1) to DIR",
		Long: `Write gpubridge.1 and one page per command (gpubridge-show-tenants.1, ...) to DIR, from the
command tree's help. The pages carry the date of $SOURCE_DATE_EPOCH when it is set (reproducible
builds), else today. make man runs it; the Debian package installs the pages.`,
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			date, err := manDate()
			if err != nil {
				return app.Input(err)
			}
			root.DisableAutoGenTag = true
			root.InitDefaultCompletionCmd()
			h := &doc.GenManHeader{Title: "GPUBRIDGE", Section: "1", Source: "gpubridge " + version, Manual: "gpubridge manual", Date: &date}
			if err := doc.GenManTree(root, h, dir); err != nil {
				return fmt.Errorf("write man pages to %s: %w", dir, err)
			}
			n, _ := filepath.Glob(filepath.Join(dir, "*.1"))
			_, err = fmt.Fprintf(a.out, "Wrote %d man pages to %s.\n", len(n), dir)
			return err
		},
	}
}

// manDate is $SOURCE_DATE_EPOCH (seconds, UTC) when set, else now.
func manDate() (time.Time, error) {
	s, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || s == "" {
		return time.Now().UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}
