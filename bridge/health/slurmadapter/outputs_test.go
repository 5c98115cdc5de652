package slurmadapter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/health"
)

// TestFilesReadRefuses: the output directory is shared with the users of
// the nodes, so a file put in place of a run's output must not make
// gpubridge read (and store as evidence) another file (issue 25 item 7).
func TestFilesReadRefuses(t *testing.T) {
	ctx := context.Background()
	const key = "h0123456789ab"
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("db password"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		key   string
		setup func(t *testing.T, dir, name string)
	}{
		"symbolic link to a file": {key, func(t *testing.T, dir, name string) {
			must(t, os.Symlink(secret, filepath.Join(dir, name)))
		}},
		"symbolic link to a directory's file": {key, func(t *testing.T, dir, name string) {
			must(t, os.Symlink(secretDir, filepath.Join(dir, "d")))
			must(t, os.Symlink(filepath.Join("d", "secret"), filepath.Join(dir, name)))
		}},
		"hard link": {key, func(t *testing.T, dir, name string) {
			must(t, os.Link(secret, filepath.Join(dir, name)))
		}},
		"FIFO": {key, func(t *testing.T, dir, name string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, name), 0o600))
		}},
		"directory": {key, func(t *testing.T, dir, name string) {
			must(t, os.Mkdir(filepath.Join(dir, name), 0o700))
		}},
		"key with a path": {"h../../secret", func(*testing.T, string, string) {}},
		"key with a dot":  {"h..", func(*testing.T, string, string) {}},
		"empty key":       {"", func(*testing.T, string, string) {}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir, fileName(c.key))
			f := Files{NodeDir: "/shared/health", LocalDir: dir}
			b, err := f.Read(ctx, c.key, 1<<20)
			if !errors.Is(err, health.ErrBadOutput) {
				t.Fatalf("Read = %q, %v; want health.ErrBadOutput", b, err)
			}
		})
	}
}

// TestFilesReadRegular reads a run's file, bounded by max, and reports a
// missing file (or directory) as health.ErrNoOutput.
func TestFilesReadRegular(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := Files{NodeDir: "/shared/health", LocalDir: dir}
	const key = "h0123456789ab"
	if _, err := f.Read(ctx, key, 10); !errors.Is(err, health.ErrNoOutput) {
		t.Fatalf("missing file: %v, want ErrNoOutput", err)
	}
	if _, err := (Files{NodeDir: filepath.Join(dir, "absent")}).Read(ctx, key, 10); !errors.Is(err, health.ErrNoOutput) {
		t.Fatalf("missing directory: %v, want ErrNoOutput", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, fileName(key)), []byte("0123456789abcdef"), 0o600))
	b, err := f.Read(ctx, key, 10)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("Read = %q, %v; want the first 10 bytes", b, err)
	}
	must(t, f.Remove(ctx, key))
	if _, err := os.Lstat(filepath.Join(dir, fileName(key))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
