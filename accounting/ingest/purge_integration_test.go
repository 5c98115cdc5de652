//go:build integration

package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestPurgeCheckPassesHealthyHours: the purge check must never refuse a
// healthy month, or the daemon's ingest would stop for good. Real jobs of
// every kind (requeued, preempted, cancelled while pending, an array, one
// still running when its hour is rolled up) and synthetic rows of the
// benchmark's writer, once slurmdbd has rolled their hours up, leave no
// missing use; and the check is not blind: deleting a rolled-up row is
// found.
func TestPurgeCheckPassesHealthyHours(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sy := acctest.NewSynth(t, env, synth.TestIDs+210000, 10000, []string{"alice", "bob"}, "m4purge", "m4synpurge")
	// slurmdbd's rollups of the test's associations go with the test.
	t.Cleanup(func() {
		for _, id := range sy.Assoc {
			for _, tbl := range []string{"hour", "day", "month"} {
				if _, err := sy.RW.Exec("DELETE FROM `"+env.Cluster+"_assoc_usage_"+tbl+"_table` WHERE id = ?", id); err != nil {
					t.Errorf("remove the test's rollups: %v", err)
				}
			}
		}
	})
	t.Cleanup(func() {
		_, _ = env.Run(context.Background(), "", nil, "scancel", "-A", "m4purge")
		acctest.WaitFor(t, "the test's jobs to be gone", 2*time.Minute, func() bool {
			out, err := env.Run(context.Background(), "", nil, "squeue", "-h", "-A", "m4purge", "-o", "%i")
			return err == nil && strings.TrimSpace(out) == ""
		})
	})
	start := time.Now().UTC().Truncate(time.Second)
	h0 := start.Add(-10 * time.Minute).Truncate(time.Hour)
	sb := func(user string, args ...string) string {
		return acctest.Sbatch(t, env, user, append([]string{"-A", "m4purge", "-t", "5", "-J", "m4-purge"}, args...)...)
	}
	running := func(ids ...string) func() bool {
		return func() bool {
			for _, id := range ids {
				if acctest.JobState(env, id) != "RUNNING" {
					return false
				}
			}
			return true
		}
	}
	// Preemption: four on-demand jobs fill gpu-a, a pool job takes one's GPU.
	// They need all four h100: wait until no job of an earlier test (one
	// still completing after a node fault) holds any.
	acctest.WaitFor(t, "gpu-a to hold no job", 3*time.Minute, func() bool {
		out, err := env.Run(context.Background(), "", nil, "squeue", "-h", "-w", "gpu-a", "-o", "%i %T")
		return err == nil && strings.TrimSpace(out) == ""
	})
	var od []string
	for range 4 {
		od = append(od, sb("bob", "-p", "ondemand", "--qos=ondemand", "--requeue", "--gres=gpu:h100:1", "--wrap", "sleep 120"))
	}
	acctest.WaitFor(t, "the on-demand jobs to run", time.Minute, running(od...))
	pool := sb("alice", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "sleep 4")
	acctest.WaitFor(t, "the pool job to preempt an on-demand one", time.Minute, func() bool { return acctest.JobState(env, pool) != "PENDING" })
	requeued := sb("alice", "--requeue", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 20")
	pending := sb("alice", "--hold", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 5")
	sb("bob", "--array=0-2", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 3")
	long := sb("alice", "--gres=gpu:3g.40gb:1", "--wrap", "sleep 240")
	acctest.WaitFor(t, "the jobs to run", time.Minute, running(requeued, long))
	env.Exec(t, "", "scancel", pending)
	time.Sleep(2 * time.Second)
	env.Exec(t, "", "scontrol", "requeue", requeued)
	acctest.WaitFor(t, "the short jobs to end", 2*time.Minute, func() bool {
		out, _ := env.Run(ctx, "", nil, "squeue", "-h", "-A", "m4purge", "-o", "%i")
		ids := strings.Fields(out)
		return len(ids) <= len(od)+1 // the on-demand jobs and the long one may run on
	})
	// End the on-demand jobs (the preempted one's run ended already).
	env.Exec(t, "", "scancel", strings.Join(od, ","))
	out, _ := env.Run(ctx, "", nil, "sacct", "-n", "-X", "-D", "-P", "-j", strings.Join(od, ","), "-o", "JobID,State")
	if !strings.Contains(out, "PREEMPTED") && !strings.Contains(out, "REQUEUED") {
		t.Logf("no on-demand run shows as preempted (%s); the check still covers the others", strings.TrimSpace(out))
	}
	acctest.WaitFor(t, "slurmdbd to record the ends", time.Minute, func() bool {
		var open int
		q := "SELECT COUNT(*) FROM `" + env.Cluster + "_job_table` WHERE account = 'm4purge' AND time_submit >= ? AND time_end = 0 AND time_start > 0 AND id_job <> ?"
		if err := sy.RO.Get(&open, q, start.Unix()-60, long); err != nil {
			t.Fatal(err)
		}
		return open == 0
	})
	// Synthetic rows of the benchmark's writer in the same hours.
	now := time.Now().UTC()
	var rows []synthRow
	for i, u := range []string{"alice", "bob"} {
		r := sy.Row(uint32(i), "m4synpurge", u, "", "", "", map[string]int{"h100": 1 + i})
		r.Start = now.Add(-8 * time.Minute).Unix()
		r.Submit, r.End = r.Start-10, r.Start+int64(120*(i+1))
		rows = append(rows, r)
	}
	sy.Insert(rows...)

	// slurmdbd rolls the hours up, the current one included (a bounded
	// rollup, which leaves its own schedule alone).
	h1 := now.Truncate(time.Hour).Add(time.Hour)
	f := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	env.Exec(t, "", "sacctmgr", "-i", "rollup", f(h0), f(h1))
	src, err := ingest.NewSlurmDB(sy.RO, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	mine := func(ms []ingest.Missing) []ingest.Missing {
		var out []ingest.Missing
		for _, m := range ms {
			if strings.HasPrefix(m.Account, "m4purge") || strings.HasPrefix(m.Account, "m4synpurge") {
				out = append(out, m)
			}
		}
		return out
	}
	missing, err := ingest.CheckRollups(ctx, src, h0.Unix(), h1.Unix())
	if err != nil {
		t.Fatal(err)
	}
	if m := mine(missing); len(m) != 0 {
		t.Fatalf("the purge check refuses healthy hours %s..%s: %v", f(h0), f(h1), m)
	}
	var rolled int64
	if err := sy.RO.Get(&rolled, "SELECT CAST(COALESCE(SUM(alloc_secs), 0) AS SIGNED) FROM `"+env.Cluster+"_assoc_usage_hour_table` WHERE id = ? AND id_tres = ? AND time_start >= ?",
		sy.Assoc[[2]string{"m4synpurge", "bob"}], sy.TRES.GPU, h0.Unix()); err != nil || rolled == 0 {
		t.Fatalf("slurmdbd rolled up %d GPU-seconds of the synthetic rows (%v): the test proves nothing", rolled, err)
	}
	// Not blind: a rolled-up row deleted is missing use.
	sy.Delete(1)
	missing, err = ingest.CheckRollups(ctx, src, h0.Unix(), h1.Unix())
	if err != nil {
		t.Fatal(err)
	}
	if m := mine(missing); len(m) != 1 || m[0].Account != "m4synpurge" || m[0].User != "bob" || m[0].Seconds() != 2*240 {
		t.Fatalf("after deleting bob's synthetic row: %v; want 480 GPU-seconds of m4synpurge/bob missing", m)
	}
	t.Logf("healthy hours %s..%s pass; a deleted rolled-up row is found: %v", f(h0), f(h1), mine(missing))
}

type synthRow = synth.Row
