//go:build integration

package ingest_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestRealJobs runs real jobs of three accounts on the testbed (full H100s,
// MIG slices, a job moved to the ondemand partition and QOS while held, a
// job cancelled while pending, a requeued job), ingests them, and checks
// the ledger against the plain-SQL reference exactly, then the GPU-seconds
// per account against sreport for the same hour-aligned window.
func TestRealJobs(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	ro := acctest.SlurmDB(t, env)
	accounts := []string{"m4acme", "m4beta", "m4gamma"}
	acctest.EnsureAccounts(t, env, ro, []string{"alice", "bob", "carol"}, accounts...)
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Second)

	sbatch := func(user string, args ...string) string {
		t.Helper()
		out := env.Exec(t, user, append([]string{"sbatch", "--parsable", "-o", "/dev/null", "-t", "3", "-J", "m4-real"}, args...)...)
		id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
		return id
	}
	state := func(id string) string {
		out, _ := env.Run(ctx, "", nil, "squeue", "-h", "-j", id, "-o", "%T")
		return strings.TrimSpace(out)
	}
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); !ok(); time.Sleep(500 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	full := sbatch("alice", "-A", "m4acme", "-p", "pool", "--gres=gpu:h100:2", "--wrap", "sleep 6")
	mig1 := sbatch("bob", "-A", "m4beta", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 5")
	mig3 := sbatch("bob", "-A", "m4beta", "--gres=gpu:3g.40gb:1", "--wrap", "sleep 4")
	moved := sbatch("carol", "-A", "m4gamma", "-p", "pool", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	env.Exec(t, "", "scontrol", "update", "jobid="+moved, "partition=ondemand", "qos=ondemand")
	env.Exec(t, "", "scontrol", "release", moved)
	cancelled := sbatch("alice", "-A", "m4acme", "--hold", "--gres=gpu:h100:1", "--wrap", "sleep 5")
	time.Sleep(time.Second)
	env.Exec(t, "", "scancel", cancelled)
	requeued := sbatch("carol", "-A", "m4gamma", "--requeue", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 8")
	waitFor("the requeue job to run", time.Minute, func() bool { return state(requeued) == "RUNNING" })
	time.Sleep(3 * time.Second)
	env.Exec(t, "", "scontrol", "requeue", requeued)
	ids := []string{full, mig1, mig3, moved, cancelled, requeued}
	waitFor("the jobs to end", 3*time.Minute, func() bool { return state(strings.Join(ids, ",")) == "" })
	// slurmdbd writes job records asynchronously: wait until every run has
	// ended in the database (the requeued job has two rows).
	waitFor("slurmdbd to record the jobs", time.Minute, func() bool {
		var open, rows int
		q := "SELECT COALESCE(SUM(time_end = 0), 0), COUNT(*) FROM `" + env.Cluster + "_job_table` WHERE id_job IN (" + strings.Join(ids, ",") + ") AND time_submit >= ?"
		if err := ro.QueryRow(q, start.Unix()-60).Scan(&open, &rows); err != nil {
			t.Fatal(err)
		}
		return open == 0 && rows == len(ids)+1
	})
	// As of the next second: a run that ended in this very second would
	// belong to the next ingest's window ([from, to) is half-open).
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	asOf := time.Now().UTC().Truncate(time.Second)

	db, _ := acctest.ScratchDB(t, env, "realjobs")
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: ledger.NewDB(db, nil), Rules: rules, Clock: func() time.Time { return asOf }, UseHostClock: true}
	if _, err := in.Ingest(ctx, ingest.Window{From: start}); err != nil {
		t.Fatal(err)
	}
	p0, p1 := meter.PeriodOf(start), meter.PeriodOf(asOf)
	// Only the test's own accounts: other tests' jobs may share the hours.
	own := map[string]bool{}
	for _, a := range accounts {
		own[a] = true
	}
	mine := func(m map[acctest.Key]int64) map[acctest.Key]int64 {
		for k := range m {
			if !own[k.Account] {
				delete(m, k)
			}
		}
		return m
	}
	want := mine(acctest.Reference(t, ro, env.Cluster, "m4%", p0, p1, asOf.Unix(), start.Unix()))
	got := mine(acctest.LedgerSums(t, db, env.Cluster, "m4%"))
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ledger vs SQL reference (-want +got)\n%s", d)
	}
	for _, a := range accounts {
		found := false
		for k := range got {
			found = found || k.Account == a
		}
		if !found {
			t.Errorf("no GPU use of %s in the ledger: %v", a, got)
		}
	}
	// The moved job is on-demand, the cancelled one costs nothing, the
	// requeued one has two runs.
	type jl struct {
		Submit int64  `db:"submit_time"`
		Tier   string `db:"tier"`
		Type   string `db:"gpu_type"`
	}
	lines := func(id string) []jl {
		var out []jl
		if err := db.Select(&out, "SELECT submit_time, tier, gpu_type FROM usage_ledger WHERE job_id = ? AND submit_time >= ? ORDER BY submit_time", id, start.Unix()-60); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if l := lines(moved); len(l) != 1 || l[0].Tier != "ondemand" || l[0].Type != "h100" {
		t.Errorf("moved job %s: %+v, want one ondemand h100 line", moved, l)
	}
	if l := lines(cancelled); len(l) != 0 {
		t.Errorf("job %s cancelled while pending has lines: %+v", cancelled, l)
	}
	if l := lines(requeued); len(l) != 2 || l[0].Submit == l[1].Submit || l[0].Type != "1g.10gb" {
		t.Errorf("requeued job %s: %+v, want two runs", requeued, l)
	}
	if l := lines(mig3); len(l) != 1 || l[0].Type != "3g.40gb" {
		t.Errorf("MIG job %s: %+v", mig3, l)
	}

	// sreport: roll up the hours the jobs ran in (a bounded rollup, which
	// also covers the current hour and leaves slurmdbd's own schedule
	// alone), then compare GPU-seconds per account with ours for the same
	// window: every run of these accounts read through our source and
	// clipped to the window.
	h0, h1 := start.Truncate(time.Hour), asOf.Truncate(time.Hour).Add(time.Hour)
	f := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	env.Exec(t, "", "sacctmgr", "-i", "rollup", f(h0), f(h1))
	out := env.Exec(t, "", "env", "TZ=UTC", "sreport", "-n", "-P", "-t", "seconds", "cluster", "AccountUtilizationByUser", "-T", "gres/gpu",
		"start="+f(h0), "end="+f(h1), "accounts="+strings.Join(accounts, ","), "cluster="+env.Cluster)
	sreport := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fs := strings.Split(line, "|")
		if len(fs) < 6 || fs[2] != "" { // account rows have no login
			continue
		}
		n, err := strconv.ParseInt(fs[5], 10, 64)
		if err != nil {
			t.Fatalf("sreport line %q: %v", line, err)
		}
		sreport[fs[1]] = n
	}
	ours := map[string]int64{}
	clip := func(r meter.Run) error {
		if !own[r.Account] || r.Start == 0 {
			return nil
		}
		end := r.End
		if end == 0 {
			end = h1.Unix() // the rollup counts a running job to the window's end
		}
		s, e := max(r.Start, h0.Unix()), min(end, h1.Unix())
		for _, g := range r.GPUs {
			if e > s {
				ours[r.Account] += g.Count * (e - s)
			}
		}
		return nil
	}
	err = src.Read(ctx, ingest.Query{From: h0.Unix(), To: time.Now().Unix()}, ingest.Handler{
		Running: func(rs []meter.Run) error {
			for _, r := range rs {
				_ = clip(r)
			}
			return nil
		},
		Finished: func(r meter.Run, _ uint64) error { return clip(r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for a, v := range ours {
		if v == 0 {
			delete(ours, a)
		}
	}
	if d := cmp.Diff(sreport, ours); d != "" {
		t.Errorf("GPU-seconds per account, %s..%s: sreport vs ours (-sreport +ours)\n%s\nsreport output:\n%s", f(h0), f(h1), d, out)
	}
	t.Logf("sreport %s..%s: %v", f(h0), f(h1), fmt.Sprint(sreport))
}
