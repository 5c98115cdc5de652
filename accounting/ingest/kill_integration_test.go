//go:build integration

package ingest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestKillAndRerun kills `gpubridge ingest` with SIGKILL after it has
// committed some batches, reruns it, and checks that the ledger equals the
// plain-SQL reference with no line written twice.
func TestKillAndRerun(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	lo := uint32(synth.TestIDs + 1_000_000)
	const rows = 200_000
	sy := acctest.NewSynth(t, env, lo, rows, nil)
	ro, rw, tres, qos := sy.RO, sy.RW, sy.TRES, sy.QOS
	month := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	spec := synth.Month{Start: month, Jobs: rows, Accounts: 40, Seed: 7, FirstID: lo, Prefix: "m4synk", GPUShare: 0.4, MIGShare: 0.05, QOS: qos}
	var buf []synth.Row
	if err := spec.Generate(tres, func(r synth.Row) error {
		buf = append(buf, r)
		if len(buf) == 10000 {
			err := synth.Insert(ctx, rw, env.Cluster, buf)
			buf = buf[:0]
			return err
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := synth.Insert(ctx, rw, env.Cluster, buf); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "gpubridge")
	build := exec.Command("go", "build", "-o", bin, "github.com/gpubridge/gpubridge/cmd/gpubridge")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db, dsn := acctest.ScratchDB(t, env, "kill")
	ingestCmd := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, append([]string{"ingest"}, args...)...)
		c.Env = append(os.Environ(), "GPUBRIDGE_DB_DSN="+dsn)
		return c
	}
	window := []string{"from=2025-05-01", "to=2025-06-01"}

	// Run and kill -9 once a few batches are committed.
	var stderr bytes.Buffer
	c := ingestCmd(window...)
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var lines int
		if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger"); err == nil && lines > 20000 {
			if err := c.Process.Signal(syscall.SIGKILL); err == nil {
				killed = true
			}
			break
		}
	}
	err := c.Wait()
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); !killed || !ok || !ws.Signaled() {
		t.Fatalf("the ingest was not killed mid-run (killed=%v, %v): %s", killed, err, stderr.String())
	}
	var partial int
	if err := db.Get(&partial, "SELECT COUNT(*) FROM usage_ledger WHERE account LIKE 'm4synk%'"); err != nil {
		t.Fatal(err)
	}

	// Rerun from the watermark, then the whole window once more.
	for _, args := range [][]string{nil, window} {
		out, err := ingestCmd(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("rerun %v: %v\n%s", args, err, out)
		}
		t.Logf("rerun %v: %s", args, bytes.TrimSpace(bytes.Split(out, []byte("\n"))[0]))
	}
	want := acctest.Reference(t, ro, env.Cluster, "m4synk%", spec.Period().Prev(), spec.Period(), time.Now().Unix(), month.Unix())
	got := acctest.LedgerSums(t, db, env.Cluster, "m4synk%")
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ledger vs SQL reference after kill -9 and rerun (-want +got)\n%s", d)
	}
	var corrections, lines, keys int
	if err := db.Get(&corrections, "SELECT COUNT(*) FROM usage_ledger WHERE revision > 0"); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger WHERE account LIKE 'm4synk%'"); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&keys, "SELECT COUNT(*) FROM (SELECT DISTINCT job_id, submit_time, usage_period, tier, gpu_type FROM usage_ledger WHERE account LIKE 'm4synk%') k"); err != nil {
		t.Fatal(err)
	}
	if corrections != 0 || lines != keys {
		t.Errorf("after the rerun: %d corrections, %d lines for %d keys; want none twice", corrections, lines, keys)
	}
	t.Logf("killed after %d of %d lines; the rerun completed the ledger", partial, lines)
}
