//go:build integration

package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/jobs"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
	"github.com/gpubridge/gpubridge/test/fault"
)

// TestScheduledIngestCorrectsRealRecords changes job records the ways the
// issue lists, on the real testbed, and lets only the daemon's scheduled
// jobs (the ingest job and the close job, their Run called with an
// injected clock; no from= after the ledger's first ingest) bring the
// ledger back to the job table:
//   - a late end record: a real job ends while slurmdbd is stopped;
//     slurmdbd, started again, gets the end from slurmctld's queue with
//     the old end time (and a new mod_time);
//   - a runaway job fixed with sacctmgr: a real job whose slurmctld record
//     is lost (slurmctld killed and started from the state it saved before
//     the job was submitted), then `sacctmgr -i show runawayjobs` sets its
//     end to its start;
//   - a record losing its GPUs: a row's tres_alloc rewritten without GPUs,
//     with mod_time as slurmdbd writes it.
//
// The month the jobs ran in is closed in between (the injected clock runs
// a month ahead, so the running jobs' part of it is final): afterwards the
// ledger equals the plain-SQL recomputation from the job table for every
// month, the closed month's exports are byte-identical, and the
// differences are adjustments in the open month. It also checks what
// Slurm does with mod_time in each case.
func TestScheduledIngestCorrectsRealRecords(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	lo := uint32(synth.TestIDs + 200000)
	// When it ends (after the daemons are started again): no job of the
	// test's account is left on the cluster.
	t.Cleanup(func() {
		_, _ = env.Run(context.Background(), "", nil, "scancel", "-A", "m4corr")
		acctest.WaitFor(t, "the test's jobs to be gone", 2*time.Minute, func() bool {
			out, err := env.Run(context.Background(), "", nil, "squeue", "-h", "-A", "m4corr", "-o", "%i")
			return err == nil && strings.TrimSpace(out) == ""
		})
	})
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4corr", "m4syncorr")
	ro := sy.RO
	like := "m4%corr"
	slurmdbd := fault.NewDaemon(t, env, "slurmdbd")
	slurmctld := fault.NewDaemon(t, env, "slurmctld")
	// The runaway fix makes slurmdbd roll the month up again, synthetic
	// rows included: remove what it rolled up of the synthetic account,
	// whose row goes when the test ends.
	t.Cleanup(func() {
		for _, tbl := range []string{"hour", "day", "month"} {
			if _, err := sy.RW.Exec("DELETE FROM `"+env.Cluster+"_assoc_usage_"+tbl+"_table` WHERE id = ?", sy.Assoc[[2]string{"m4syncorr", "alice"}]); err != nil {
				t.Errorf("remove the synthetic account's rollups: %v", err)
			}
		}
	})
	// The state slurmctld will be restarted from, to lose the runaway
	// job: saved before the test submits anything, so that slurmctld,
	// restarted from it, knows none of the test's jobs (it cannot bring
	// back a job that has ended meanwhile).
	stateDir := filepath.Join(env.Root, "var/spool/slurmctld")
	// The saved state must hold no job at all: a job of an earlier test
	// in it (one still completing) would come back with the rollback as
	// a phantom that holds its node's GPUs until slurmctld finds it gone,
	// minutes later. So wait for an empty queue, then stop slurmctld,
	// which saves its whole state (a slurmctld fresh from the testbed's
	// cached root has saved none, and would later refuse node state
	// without job state), and start it again.
	acctest.WaitFor(t, "the cluster to hold no job", 3*time.Minute, func() bool {
		out, err := env.Run(ctx, "", nil, "squeue", "-h", "-o", "%i")
		return err == nil && strings.TrimSpace(out) == ""
	})
	slurmctld.Stop()
	slurmctld.Start()
	saved := t.TempDir()
	for _, f := range []string{"job_state", "job_state.old"} {
		if out, err := exec.Command("cp", "-p", filepath.Join(stateDir, f), saved).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
			t.Fatalf("save slurmctld's job state: %v: %s", err, out)
		}
	}

	real := time.Now().UTC().Truncate(time.Second)
	p := meter.PeriodOf(real)
	since := real.Add(-time.Minute).Unix()
	// The ledger starts ten minutes ago (its first ingest has from=; the
	// rest is the daemon's jobs). Earlier hours of the month may hold
	// other tests' leftovers in slurmdbd's rollups (synthetic rows rolled
	// up, then deleted), which the purge check would rightly refuse.
	start := real.Add(-10 * time.Minute)
	// A synthetic run since then: it will lose its GPUs.
	lost := sy.Row(1, "m4syncorr", "alice", "", "", "", map[string]int{"h100": 2})
	lost.Submit, lost.Start, lost.End = start.Unix()+30, start.Unix()+60, start.Unix()+300
	sy.Insert(lost)

	// Real jobs: one that ends normally, one that will end while slurmdbd
	// is down, and one that will run away.
	normal := acctest.Sbatch(t, env, "alice", "-A", "m4corr", "-t", "2", "-J", "m4-corr", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 2")
	late := acctest.Sbatch(t, env, "alice", "-A", "m4corr", "-t", "3", "-J", "m4-corr", "--gres=gpu:3g.40gb:1", "--wrap", "sleep 40")
	runaway := acctest.Sbatch(t, env, "alice", "-A", "m4corr", "-t", "20", "-J", "m4-corr", "--gres=gpu:h100:1", "--wrap", "sleep 1200")
	acctest.WaitFor(t, "slurmdbd to record the jobs' starts", time.Minute, func() bool {
		a, b, c := acctest.JobRows(t, ro, env.Cluster, runaway, since), acctest.JobRows(t, ro, env.Cluster, late, since), acctest.JobRows(t, ro, env.Cluster, normal, since)
		return len(a) == 1 && a[0].Start > 0 && len(b) == 1 && b[0].Start > 0 && len(c) == 1 && c[0].End > 0
	})
	// Slurm stamps mod_time when a job ends.
	if r := acctest.JobRows(t, ro, env.Cluster, normal, since)[0]; r.Mod < r.End || r.Mod > r.End+5 {
		t.Errorf("job %s ended at %d, mod_time %d: want mod_time stamped at the end", normal, r.End, r.Mod)
	}

	// The daemon's jobs, on a clock a month ahead: the jobs still running
	// then have final lines in this month.
	db, _ := acctest.ScratchDB(t, env, "corrections")
	store := ledger.NewDB(db, nil)
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	now := p.End().Add(10 * time.Minute)
	clock := func() time.Time { return now }
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: store, Rules: rules, Clock: clock, UseHostClock: true}
	ingestJob := &jobs.Ingest{Ingester: in}
	if _, err := in.Ingest(ctx, ingest.Window{From: start}); err != nil {
		t.Fatal(err)
	}
	cards := ratecard.NewMemory()
	if err := cards.Save(ctx, cardFor(t, db), "test", now); err != nil {
		t.Fatal(err)
	}
	books := billing.Books{Cluster: env.Cluster, Ledger: store, Cards: cards}
	closeJob := &jobs.ClosePeriod{Closer: billing.Closer{Cluster: env.Cluster, Reader: in, Ledger: store, Cards: cards}, Clock: clock}
	now = p.End().Add(27 * time.Hour) // 03:00 on the 2nd
	if err := closeJob.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if _, closed, err := store.Period(ctx, env.Cluster, p); err != nil || !closed {
		t.Fatalf("the close job left %s open (%v)", p, err)
	}
	exports := func() map[string][]byte {
		out := map[string][]byte{}
		for _, f := range []export.Format{export.CSV, export.JSON, export.FOCUS} {
			for _, d := range []bool{false, true} {
				var b bytes.Buffer
				if err := books.Export(ctx, billing.ExportRequest{Period: p, Options: export.Options{Format: f, Detail: d}}, &b); err != nil {
					t.Fatal(err)
				}
				out[fmt.Sprintf("%s detail=%v", f, d)] = b.Bytes()
			}
		}
		return out
	}
	before := exports()
	if !bytes.Contains(before["csv detail=true"], []byte("m4corr")) {
		t.Fatalf("the closed month's export holds none of the test's jobs:\n%s", before["csv detail=true"])
	}

	// A late end record: slurmdbd is down while the job ends.
	slurmdbd.Stop()
	acctest.WaitFor(t, "job "+late+" to end while slurmdbd is down", 2*time.Minute, func() bool {
		s := acctest.JobState(env, late)
		return s != "RUNNING" && s != "COMPLETING"
	})
	time.Sleep(3 * time.Second)
	restarted := time.Now().Unix()
	slurmdbd.Start()
	acctest.WaitFor(t, "slurmctld to send the queued end record", 2*time.Minute, func() bool {
		r := acctest.JobRows(t, ro, env.Cluster, late, since)
		return len(r) == 1 && r[0].End > 0
	})
	if r := acctest.JobRows(t, ro, env.Cluster, late, since)[0]; r.End >= restarted || r.Mod < restarted {
		t.Errorf("late end record of %s: end %d, mod_time %d, slurmdbd started at %d: want an old end and a new mod_time", late, r.End, r.Mod, restarted)
	} else {
		t.Logf("fact: a late end record keeps its end (%ds before slurmdbd came back) and stamps mod_time when slurmdbd writes it", restarted-r.End)
	}

	// A runaway job: slurmctld loses its record. It is stopped, not
	// killed: a slurmctld that never saved its association usage (a
	// testbed fresh from its cached root) refuses to start without that
	// file ("fatal: No Assoc usage file"); only the job state is rolled back.
	slurmctld.Stop()
	for _, f := range []string{"job_state", "job_state.old"} {
		var err error
		if _, serr := os.Stat(filepath.Join(saved, f)); serr == nil {
			var out []byte
			if out, err = exec.Command("cp", "-p", filepath.Join(saved, f), stateDir).CombinedOutput(); err != nil {
				err = fmt.Errorf("%w: %s", err, out)
			}
		} else if err = os.Remove(filepath.Join(stateDir, f)); os.IsNotExist(err) {
			err = nil // there was no job state before the test
		}
		if err != nil {
			t.Fatalf("restore slurmctld's job state: %v", err)
		}
	}
	slurmctld.Start()
	acctest.WaitFor(t, "sacctmgr to list job "+runaway+" as runaway", 2*time.Minute, func() bool {
		out, _ := env.Run(ctx, "", []byte("N\n"), "sacctmgr", "show", "runawayjobs", "format=ID")
		return strings.Contains(out, runaway)
	})
	mod0 := acctest.JobRows(t, ro, env.Cluster, runaway, since)[0].Mod
	env.Exec(t, "", "sacctmgr", "-i", "show", "runawayjobs")
	acctest.WaitFor(t, "the runaway fix", time.Minute, func() bool { return acctest.JobRows(t, ro, env.Cluster, runaway, since)[0].End > 0 })
	r := acctest.JobRows(t, ro, env.Cluster, runaway, since)[0]
	if r.End != max(r.Start, r.Eligible, r.Submit) {
		t.Errorf("runaway fix set the end of %s to %d; want GREATEST(start, eligible, submit) = %d", runaway, r.End, max(r.Start, r.Eligible, r.Submit))
	}
	t.Logf("fact: the runaway fix set the end to the start (%d GPU-seconds left) and mod_time %d -> %d (stamped: %v)", r.End-r.Start, mod0, r.Mod, r.Mod != mod0)

	// A record losing its GPUs, mod_time as slurmdbd writes it.
	if _, err := sy.RW.Exec("UPDATE `"+env.Cluster+"_job_table` SET tres_alloc = ?, mod_time = UNIX_TIMESTAMP() WHERE id_job = ? AND time_submit = ?",
		sy.TRES.Alloc(4, nil), lost.JobID, lost.Submit); err != nil {
		t.Fatal(err)
	}

	// The scheduled ingest, five minutes later: the runs that were running
	// are looked up by key, the changed row found by mod_time.
	now = now.Add(5 * time.Minute)
	if err := ingestJob.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := acctest.Reference(t, ro, env.Cluster, like, p-1, p+1, now.Unix(), 0)
	got := acctest.LedgerSums(t, db, env.Cluster, like)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ledger vs SQL reference after the scheduled ingest (-want +got)\n%s", d)
	}
	if len(want) == 0 {
		t.Fatal("the reference is empty: the test proves nothing")
	}
	after := exports()
	for name := range before {
		if !bytes.Equal(before[name], after[name]) {
			t.Errorf("closed %s's %s export changed:\n%s\n---\n%s", p, name, before[name], after[name])
		}
	}
	// Each correction is an adjustment in the open month, tagged with the
	// closed one.
	adj := map[string]int64{}
	if err := store.Lines(ctx, env.Cluster, ledger.LineQuery{Booked: p + 1}, func(l meter.Line) error {
		if l.Kind() == meter.KindAdjustment && l.Period == p {
			adj[fmt.Sprint(l.Run.JobID)] += l.GPUSeconds
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{late, runaway, fmt.Sprint(lost.JobID)} {
		if adj[id] >= 0 {
			t.Errorf("job %s: adjustments booked in %s for %s sum to %d GPU-seconds, want a negative correction (%v)", id, p+1, p, adj[id], adj)
		}
	}
	// Nothing more to correct.
	now = now.Add(5 * time.Minute)
	res, err := in.Scheduled(ctx)
	if err != nil || res.Stats.Lines != 0 || len(res.Gone) != 0 {
		t.Fatalf("the next scheduled ingest: %d lines, gone %v, %v", res.Stats.Lines, res.Gone, err)
	}
}
