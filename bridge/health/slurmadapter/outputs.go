package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpubridge/gpubridge/bridge/health"
)

// Files are the check jobs' output files in a directory the nodes write
// (NodeDir, as the job sees it) and gpubridge reads (LocalDir, as this
// host sees it: the same directory on a shared filesystem; on the testbed
// the chroot's path).
type Files struct {
	NodeDir  string
	LocalDir string
}

var _ health.Outputs = Files{}

func fileName(key string) string { return "gpubridge-health-" + key + ".out" }

// Path is a run's output file as the node sees it.
func (f Files) Path(key string) string { return filepath.Join(f.NodeDir, fileName(key)) }

func (f Files) local(key string) string {
	dir := f.LocalDir
	if dir == "" {
		dir = f.NodeDir
	}
	return filepath.Join(dir, fileName(key))
}

// Read returns up to max bytes of a run's output.
func (f Files) Read(_ context.Context, key string, max int64) ([]byte, error) {
	fh, err := os.Open(f.local(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", f.local(key), health.ErrNoOutput)
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, max))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.local(key), err)
	}
	return b, nil
}

// Remove deletes a run's output file.
func (f Files) Remove(_ context.Context, key string) error {
	err := os.Remove(f.local(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
