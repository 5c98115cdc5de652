//go:build integration

package docs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
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
// testbed, each document in a shell session of its own, on a scratch
// gpubridge database; it prints how many examples it found, ran and
// skipped (with the reasons) and fails on any drift, or when the examples
// run and skipped do not add up to those found.
func TestDocExamples(t *testing.T) {
	env := testbed.Require(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := setupWorkdir(t, root, work, env)
	dsn := scratchDB(t, env)
	environ := append(os.Environ(),
		"PATH="+bin+":"+os.Getenv("PATH"),
		"GPUBRIDGE_DB_DSN="+dsn,
		"GPUBRIDGE_GUARD_FILE="+filepath.Join(env.Root, "var/lib/gpubridge/guard/tenants.table"),
		"TZ=UTC", "LC_ALL=C.UTF-8", "COLUMNS=200",
	)
	found, ran, skipped := 0, 0, map[string]string{}
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
		found += len(exs)
		if len(exs) == 0 {
			continue
		}
		t.Run(doc, func(t *testing.T) {
			s, err := NewSession(work, environ, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, ex := range exs {
				if ex.Skip != "" {
					skipped[ex.Name()] = ex.Skip
					continue
				}
				ran++
				start := time.Now()
				for _, d := range Run(s, ex) {
					t.Error(d)
				}
				t.Logf("%s: %d command(s) in %s", ex.Name(), len(ex.Steps), time.Since(start).Round(10*time.Millisecond))
			}
		})
	}
	names := make([]string, 0, len(skipped))
	for n := range skipped {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("skipped %s: %s", n, skipped[n])
	}
	fmt.Printf("doc examples: %d found in README.md and docs/*.md, %d run, %d skipped\n", found, ran, len(skipped))
	if ran+len(skipped) != found {
		t.Errorf("%d examples run and %d skipped, but %d found", ran, len(skipped), found)
	}
}

// setupWorkdir makes the directory the documents' commands run in: bin/
// with gpubridge built from this tree and the cluster's commands, and the
// repository's test/, contrib/ and bridge/ (fixtures the documents name).
// It returns the bin directory.
func setupWorkdir(t *testing.T, root, work string, env testbed.Env) string {
	t.Helper()
	bin := filepath.Join(work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "gpubridge"), "./cmd/gpubridge")
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

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

// scratchDB creates an empty, migrated gpubridge database for the
// documents (the testbed's gpubridge user may create gpubridge_*
// databases) and drops it at the end.
func scratchDB(t *testing.T, env testbed.Env) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("gpubridge_docs_%d", time.Now().UnixNano()%1e6)
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("create scratch database: %v", err)
	}
	t.Cleanup(func() {
		if db, err := sqldb.Open(context.Background(), env.DBDSN); err == nil {
			db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
			db.Close()
		}
	})
	cfg.DBName = name
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return cfg.FormatDSN()
}
