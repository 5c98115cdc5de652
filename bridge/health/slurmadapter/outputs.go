package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

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

func (f Files) localDir() string {
	if f.LocalDir == "" {
		return f.NodeDir
	}
	return f.LocalDir
}

func (f Files) local(key string) string { return filepath.Join(f.localDir(), fileName(key)) }

// validKey: a run key ("h" and hex digits from health's newKey; tests use
// other letters, digits, '-' and '_') names a file of the directory itself,
// never one elsewhere ("/", ".." and every other character refused).
func validKey(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for _, c := range key {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Read returns up to max bytes of a run's output. The directory is a
// shared one that other users may write, so the file is opened inside it
// (os.Root: no path out of it, no symbolic link in the path), without
// following a symbolic link in its own name (O_NOFOLLOW), without waiting
// on a FIFO (O_NONBLOCK), and read only if it is a regular file with one
// link; anything else is refused with health.ErrBadOutput.
func (f Files) Read(_ context.Context, key string, max int64) ([]byte, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("%w: run key %q is not a gpubridge run key", health.ErrBadOutput, key)
	}
	fh, err := f.open(key)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", f.local(key), err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s, not a regular file", health.ErrBadOutput, f.local(key), fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink != 1 {
		return nil, fmt.Errorf("%w: %s has %d hard links; a check's output has one", health.ErrBadOutput, f.local(key), st.Nlink)
	}
	b, err := io.ReadAll(io.LimitReader(fh, max))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.local(key), err)
	}
	return b, nil
}

// open opens a run's output file read-only inside the output directory,
// not following a symbolic link.
func (f Files) open(key string) (*os.File, error) {
	root, err := os.OpenRoot(f.localDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", f.local(key), health.ErrNoOutput)
	}
	if err != nil {
		return nil, fmt.Errorf("open the health output directory: %w", err)
	}
	defer root.Close()
	fh, err := root.OpenFile(fileName(key), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", f.local(key), health.ErrNoOutput)
	case err != nil && (errors.Is(err, syscall.ELOOP) || isSymlink(root, fileName(key))):
		// ELOOP from O_NOFOLLOW, or os.Root's own refusal of a link
		// that leads out of the directory.
		return nil, fmt.Errorf("%w: %s is a symbolic link", health.ErrBadOutput, f.local(key))
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", f.local(key), err)
	}
	return fh, nil
}

func isSymlink(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// Remove deletes a run's output file (a symbolic link in its place is
// removed itself, never its target).
func (f Files) Remove(_ context.Context, key string) error {
	if !validKey(key) {
		return fmt.Errorf("%w: run key %q is not a gpubridge run key", health.ErrBadOutput, key)
	}
	err := os.Remove(f.local(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
