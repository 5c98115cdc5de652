package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records instead of failing.
type recorder struct {
	testing.TB
	errs, fatals []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) {
	r.fatals = append(r.fatals, sprintf(f, a...))
	panic(r)
}
func (r *recorder) Fatal(a ...any) { r.fatals = append(r.fatals, sprint(a...)); panic(r) }
func run(r *recorder, f func(testing.TB)) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	f(r)
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "out.txt")

	r := &recorder{TB: t}
	run(r, func(tb testing.TB) { Check(tb, path, "x\n") })
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "run go test -update to create it") {
		t.Errorf("missing file: %q", r.fatals)
	}

	*update = true
	r = &recorder{TB: t}
	run(r, func(tb testing.TB) { Check(tb, path, "x\n") })
	*update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "x\n" || len(r.errs)+len(r.fatals) != 0 {
		t.Errorf("-update wrote %q (%v), errors %q %q", b, err, r.errs, r.fatals)
	}

	r = &recorder{TB: t}
	run(r, func(tb testing.TB) { Check(tb, path, "x\n") })
	if len(r.errs)+len(r.fatals) != 0 {
		t.Errorf("equal content: errors %q %q", r.errs, r.fatals)
	}

	r = &recorder{TB: t}
	run(r, func(tb testing.TB) { Check(tb, path, "y\n") })
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "out.txt (-want +got)") || !strings.Contains(r.errs[0], `"y\n"`) {
		t.Errorf("different content: errors %q", r.errs)
	}
	if b, _ := os.ReadFile(path); string(b) != "x\n" {
		t.Errorf("a failed comparison changed the file: %q", b)
	}
}

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
func sprint(a ...any) string            { return fmt.Sprint(a...) }

// TestOneHelper keeps this the only golden-file helper: no test file of
// the module defines an -update flag of its own (there were six).
func TestOneHelper(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "flag.Bool("+`"update"`) {
			t.Errorf("%s defines its own -update flag: use internal/golden.Check", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
