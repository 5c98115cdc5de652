package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Options tune a write. The zero value keeps the mode of the file being
// replaced (0644 for a new file).
type Options struct {
	// Mode is the new file's permission bits; 0 keeps the old file's mode
	// (or 0644 when there is none).
	Mode fs.FileMode
	// SkipUnchanged leaves the file alone (no rename, no mtime change) when
	// its content already equals the new content.
	SkipUnchanged bool
}

// Write replaces path with data. It reports whether the file was written
// (false only with SkipUnchanged and equal content). On an error the file
// at path is as it was and no temporary file is left behind.
func Write(path string, data []byte, o Options) (bool, error) {
	if o.SkipUnchanged {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return false, nil
		}
	}
	err := WriteFrom(path, bytes.NewReader(data), o)
	return err == nil, err
}

// WriteFrom is Write with the content streamed from r (for large exports).
func WriteFrom(path string, r io.Reader, o Options) (err error) {
	mode := o.Mode
	if st, serr := os.Stat(path); serr == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file", path)
		}
		if mode == 0 {
			mode = st.Mode().Perm()
		}
	} else if !errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, serr)
	}
	if mode == 0 {
		mode = 0o644
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, r); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir, path)
}

func syncDir(dir, path string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil // the rename happened; a directory we cannot open cannot be synced
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("write %s: fsync directory: %w", path, err)
	}
	return nil
}
