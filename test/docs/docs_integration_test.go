//go:build integration

package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/fault"
)

// The documents whose examples run, from the repository's root.
func documents(t *testing.T, root string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f, root+"/"))
	}
	sort.Strings(out[1:])
	return out
}

// slurmTools are the cluster's commands the documents run as a site's
// login node has them; the harness runs them inside the testbed's root.
var slurmTools = []string{"sacctmgr", "sbatch", "scancel", "scontrol", "sinfo", "squeue", "sacct", "srun"}

// TestDocExamples runs every example of README.md and docs/*.md on the
// testbed, each document in a shell session of its own on a scratch
// gpubridge database of its own; it prints how many examples it found, ran
// and skipped (with the reasons) and fails on any drift, or when the
// examples run and skipped do not add up to those found. The drifts of an
// example listed in pending are logged, not failed.
func TestDocExamples(t *testing.T) {
	env := testbed.Require(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	freshTestbed(t, env)
	work := t.TempDir()
	bin := setupWorkdir(t, root, work, env)
	ensureOnDemandQOS(t, env, work, bin)
	c := &counts{skipped: map[string]string{}}
	for _, doc := range documents(t, root) {
		src, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		exs, err := Extract(doc, string(src))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, ex := range exs {
			c.keys = append(c.keys, ex.Key())
		}
		c.found += len(exs)
		if len(exs) == 0 {
			continue
		}
		if only := os.Getenv("DOCTEST_ONLY"); only != "" && !listed(only, doc) {
			c.ran += len(exs) // DOCTEST_ONLY=docs/a.md,docs/b.md: the others are not run this time
			continue
		}
		t.Run(doc, func(t *testing.T) {
			drifts := runDocument(t, env, work, bin, exs, c)
			if dir := os.Getenv("DOCTEST_UPDATE"); dir != "" && len(drifts) > 0 {
				// DOCTEST_UPDATE=DIR: DIR/<doc> is the text with what the commands print now (to review with diff)
				out := filepath.Join(dir, doc)
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(out, []byte(Rewrite(string(src), drifts)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	c.report(t)
}

// counts are the examples found, run and skipped, over all documents.
type counts struct {
	found, ran, pending int
	skipped             map[string]string // example name -> reason
	keys                []string          // every example's Key
}

// report prints the counts and checks that they add up.
func (c *counts) report(t *testing.T) {
	names := make([]string, 0, len(c.skipped))
	for n := range c.skipped {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("skipped %s: %s", n, c.skipped[n])
	}
	fmt.Printf("doc examples: %d found in README.md and docs/*.md, %d run (%d of them pending: drifts logged), %d skipped\n",
		c.found, c.ran, c.pending, len(c.skipped))
	known := map[string]bool{}
	for _, k := range c.keys {
		known[k] = true
	}
	for k := range pending {
		if !known[k] {
			t.Errorf("pending lists %q, which is no example of the documents", k)
		}
	}
	if c.ran+len(c.skipped) != c.found {
		t.Errorf("%d examples run and %d skipped, but %d found", c.ran, len(c.skipped), c.found)
	}
}

// listed reports whether doc is in the comma-separated list.
func listed(list, doc string) bool {
	return strings.Contains(","+list+",", ","+doc+",")
}

// runDocument runs one document's examples in order in one session, on a
// scratch database, and removes the tenants it made from Slurm at the end;
// it returns the drifts.
func runDocument(t *testing.T, env testbed.Env, work, bin string, exs []Example, c *counts) (all []Drift) {
	_, dsn := fault.ScratchDB(t, env, "docs", filepath.Base(exs[0].File))
	s, err := NewSession(work, environ(env, bin, dsn), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer removeTenants(t, s)
	defer teardown(t, s, exs)
	for _, ex := range exs {
		if ex.Skip != "" {
			c.skipped[ex.Name()] = ex.Skip
			continue
		}
		c.ran++
		start := time.Now()
		drifts := Run(s, ex)
		all = append(all, drifts...)
		why, isPending := pending[ex.Key()]
		for _, d := range drifts {
			if isPending {
				t.Logf("pending (%s): %s", why, d)
			} else {
				t.Error(d)
			}
		}
		if isPending {
			c.pending++
			if len(drifts) == 0 {
				t.Logf("%s passes now: remove it from pending", ex.Key())
			}
		}
		t.Logf("%s: %d command(s) in %s", ex.Name(), len(ex.Steps), time.Since(start).Round(10*time.Millisecond))
	}
	return all
}

// teardown runs the document's teardown commands, in order.
func teardown(t *testing.T, s *Session, exs []Example) {
	for _, ex := range exs {
		for _, cmd := range ex.Teardown {
			if out, rc, err := s.Run(cmd); err != nil || rc != 0 {
				t.Errorf("%s: teardown %q: exit %d, %v: %s", ex.Name(), cmd, rc, err, strings.Join(out, "\n"))
			}
		}
	}
}

// environ is a document's environment: the testbed's, with bin first in
// PATH and the scratch database dsn.
func environ(env testbed.Env, bin, dsn string) []string {
	return append(os.Environ(),
		"PATH="+bin+":"+os.Getenv("PATH"),
		"GPUBRIDGE_DB_DSN="+dsn,
		"GPUBRIDGE_GUARD_FILE="+filepath.Join(env.Root, "var/lib/gpubridge/guard/tenants.table"),
		"TZ=UTC", "LC_ALL=C.UTF-8", "COLUMNS=200",
	)
}

// ensureOnDemandQOS makes the shared on-demand QOS exist as gpubridge
// makes it (one tenant applied and removed, on a scratch store), so that a
// document's first apply shows the same plan whether or not an earlier
// test on the testbed made it.
func ensureOnDemandQOS(t *testing.T, env testbed.Env, work, bin string) {
	_, dsn := fault.ScratchDB(t, env, "docs", "warmup")
	s, err := NewSession(work, environ(env, bin, dsn), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, rc, err := s.Run("gpubridge -i add tenant docwarmup users=alice >/dev/null && gpubridge -i apply >/dev/null && " +
		"gpubridge -i delete tenant --purge docwarmup >/dev/null && gpubridge -i apply --allow-mass-delete >/dev/null")
	if err != nil || rc != 0 {
		t.Fatalf("making the on-demand QOS: exit %d, %v: %s", rc, err, strings.Join(out, "\n"))
	}
}

// removeTenants cancels the jobs of the tenants a document made, deletes
// them and applies, so that the next document (on a database of its own)
// finds Slurm without them.
func removeTenants(t *testing.T, s *Session) {
	names, rc, err := s.Run("gpubridge -P -n show tenants format=name")
	if err != nil || rc != 0 {
		t.Errorf("listing the document's tenants: exit %d, %v: %s", rc, err, strings.Join(names, "\n"))
		return
	}
	if len(names) == 0 {
		return
	}
	cmd := "for n in " + strings.Join(names, " ") + "; do scancel -A $n 2>/dev/null; done; gpubridge -i delete tenant --purge " +
		strings.Join(names, " ") + " >/dev/null; for i in 1 2 3 4 5 6 7 8 9 10; do gpubridge -i apply --allow-mass-delete >/dev/null && " +
		"[ -z \"$(gpubridge -P -n show tenants format=name)\" ] && exit 0; sleep 1; done; exit 1"
	if out, rc, err := s.Run(cmd); err != nil || rc != 0 {
		t.Errorf("removing the document's tenants %v: exit %d, %v: %s", names, rc, err, strings.Join(out, "\n"))
	}
}

// setupWorkdir makes the directory the documents' commands run in: bin/
// with gpubridge and faultproxy built from this tree and the cluster's
// commands, and the repository's test/, contrib/ and bridge/ (fixtures the
// documents name). It returns the bin directory.
func setupWorkdir(t *testing.T, root, work string, env testbed.Env) string {
	t.Helper()
	bin := filepath.Join(work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// faultproxy: a slurmrestd that answers slowly, for the writer lock held
	// by another apply (docs/tenants.md).
	build := exec.Command("go", "build", "-o", bin+"/", "./cmd/gpubridge", "./test/fault/cmd/faultproxy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tool := range slurmTools {
		// DOCTEST_USER: the user a document's "# as NAME" runs the command as.
		script := fmt.Sprintf("#!/bin/sh\nexec %s --user \"${DOCTEST_USER:-root}\" %s \"$@\"\n", env.ExecScript, tool)
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"test", "contrib", "bridge"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(work, d)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// freshTestbed restarts the testbed from its cached root before the
// documents run (about 10 s): they show exact figures (job ids, the runs of
// a month, the accounts Slurm holds), which the rows and objects that the
// suite's other tests left in slurmdbd and Slurm would change. The run's
// use lock is held (make test), so nothing else uses the testbed meanwhile.
func freshTestbed(t *testing.T, env testbed.Env) {
	t.Helper()
	if os.Getenv("GPUBRIDGE_TESTBED_IN_USE") == "" {
		t.Fatal("run the document tests through test/testbed/use.sh: they restart the testbed, which needs its use lock")
	}
	if out, err := env.Script(10*time.Minute, "up.sh", "--fresh"); err != nil {
		t.Fatalf("up.sh --fresh: %v\n%s", err, out)
	}
}

// TestPendingIsEmpty: no example's drift is only logged.
func TestPendingIsEmpty(t *testing.T) {
	for k, why := range pending {
		t.Errorf("pending lists %q (%s): make it pass, or mark it skip with the reason it cannot run here", k, why)
	}
}
