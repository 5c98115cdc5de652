package slurmadapter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WriteGuard puts the job_submit guard's data file (tenant.Guard) at path
// when its content differs, atomically (a temporary file in the same
// directory, renamed over the old one), so that slurmctld never reads a
// half-written file. It reports whether it wrote.
func WriteGuard(path string, data []byte) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".gpubridge-guard-*")
	if err != nil {
		return false, fmt.Errorf("write guard file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, fmt.Errorf("write guard file %s: %w", tmp, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return false, fmt.Errorf("write guard file %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("write guard file %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write guard file %s: %w", path, err)
	}
	return true, nil
}
