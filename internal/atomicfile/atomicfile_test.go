package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if wrote, err := Write(p, []byte("one"), Options{}); err != nil || !wrote {
		t.Fatalf("first write: wrote=%v err=%v", wrote, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(p, []byte("two"), Options{}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ = os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o600 {
		t.Errorf("after replace: %q mode %v; want \"two\" mode 0600 (kept)", b, st.Mode().Perm())
	}
	if _, err := Write(p, []byte("three"), Options{Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(p)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("explicit mode: got %v, want 0640", st.Mode().Perm())
	}
	assertNoTemp(t, dir, 1)
}

func TestSkipUnchanged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if _, err := Write(p, []byte("x"), Options{SkipUnchanged: true}); err != nil {
		t.Fatal(err)
	}
	wrote, err := Write(p, []byte("x"), Options{SkipUnchanged: true})
	if err != nil || wrote {
		t.Fatalf("same content: wrote=%v err=%v; want false, nil", wrote, err)
	}
	wrote, err = Write(p, []byte("y"), Options{SkipUnchanged: true})
	if err != nil || !wrote {
		t.Fatalf("new content: wrote=%v err=%v; want true, nil", wrote, err)
	}
}

type failReader struct{ n int }

func (f *failReader) Read(b []byte) (int, error) {
	if f.n == 0 {
		f.n++
		return copy(b, "partial"), nil
	}
	return 0, errors.New("disk on fire")
}

// A failed write leaves the old file intact and no temporary file behind.
func TestFailedWriteKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if _, err := Write(p, []byte("good"), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFrom(p, &failReader{}, Options{}); err == nil {
		t.Fatal("want the reader's error")
	}
	b, _ := os.ReadFile(p)
	if string(b) != "good" {
		t.Errorf("after a failed write the file holds %q; want the old content", b)
	}
	assertNoTemp(t, dir, 1)
}

func TestRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, []byte("x"), Options{}); err == nil {
		t.Fatal("writing over a directory must fail")
	}
	if err := WriteFrom(filepath.Join(dir, "missing", "f"), io.LimitReader(nil, 0), Options{}); err == nil {
		t.Fatal("a missing directory must fail")
	}
}

func assertNoTemp(t *testing.T, dir string, want int) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != want {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v; want %d file(s), no temporary left", names, want)
	}
}
