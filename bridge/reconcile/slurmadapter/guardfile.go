package slurmadapter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
)

// GuardFile is the job_submit guard's tenant table on disk (tenant.Guard;
// config tenants.guardFile, read by contrib/job_submit.lua on the
// slurmctld host).
type GuardFile struct {
	Path string
	// AllowEmpty lets a table without tenants replace a table with tenants
	// (or one that cannot be read). Only a person's explicit
	// `gpubridge apply --allow-mass-delete` sets it; the daemon never does,
	// so an empty store or an empty read can never switch the guard off.
	AllowEmpty bool
	// Logger says when a table is kept; nil logs to slog.Default().
	Logger *slog.Logger
}

// Write puts data at g.Path when it differs from the file there, through
// internal/atomicfile (a temporary file in the same directory, fsync,
// rename, fsync of the directory), so that slurmctld never reads a
// half-written or lost table; the file is 0644 (slurmctld must read it) and
// missing directories are made 0755. It reports whether it wrote.
//
// data must be a table the guard accepts (tenant.ParseGuard), else nothing
// is written. A table with no tenants does not replace one with tenants
// unless AllowEmpty is set: the old table stays in place, Write logs a
// warning saying so and reports false with no error (the rest of the apply
// or reconcile is not failed for it). An empty table is written where there
// is none, or where the old one was empty too.
func (g GuardFile) Write(data []byte) (bool, error) {
	ts, err := tenant.ParseGuard(data)
	if err != nil {
		return false, fmt.Errorf("write guard table %s: the guard would refuse the new table: %w", g.Path, err)
	}
	old, err := os.ReadFile(g.Path)
	switch {
	case err == nil && bytes.Equal(old, data):
		return false, nil
	case err == nil && len(ts) == 0 && !g.AllowEmpty:
		inPlace, perr := tenant.ParseGuard(old)
		if perr != nil || len(inPlace) > 0 {
			what := fmt.Sprintf("%d tenant(s)", len(inPlace))
			if perr != nil {
				what = "a table that cannot be read (" + perr.Error() + ")"
			}
			g.logger().Warn("guard table kept: the new table has no tenants and the one in place has "+what+
				"; only a person's `gpubridge apply --allow-mass-delete` may empty it",
				"path", g.Path)
			return false, nil
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("write guard table: read the one in place: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(g.Path), 0o755); err != nil {
		return false, fmt.Errorf("write guard table: %w", err)
	}
	if _, err := atomicfile.Write(g.Path, data, atomicfile.Options{Mode: 0o644}); err != nil {
		return false, fmt.Errorf("write guard table: %w", err)
	}
	return true, nil
}

func (g GuardFile) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.Default()
}

// WriteGuard is GuardFile{Path: path}.Write(data): the daemon's and a plain
// apply's writer, which never empties a table with tenants.
func WriteGuard(path string, data []byte) (bool, error) {
	return GuardFile{Path: path}.Write(data)
}
