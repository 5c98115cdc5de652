//go:build integration

package ingest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestPurgeCheckAllowsReservationIdleTime: slurmdbd's hourly rollups give
// a reservation's idle time to the associations of its assoclist (here
// the account association of m4resvidle), which no job row accounts for.
// A real reservation of 1 h100, idle for most of a minute with a short
// job inside, rolled up: the purge check passes (on a check without the
// reservations' idle time it reports the account's idle GPU-seconds as
// missing rows), and deleting the job's row is still found as missing.
func TestPurgeCheckAllowsReservationIdleTime(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	const acct = "m4resvidle"
	sy := acctest.NewSynth(t, env, synth.TestIDs+220000, 1000, []string{"alice"}, acct)
	var acctAssoc int64
	if err := sy.RO.Get(&acctAssoc, "SELECT id_assoc FROM `"+env.Cluster+"_assoc_table` WHERE acct = ? AND user = '' AND deleted = 0", acct); err != nil {
		t.Fatalf("the account association of %s: %v", acct, err)
	}
	userAssoc := sy.Assoc[[2]string{acct, "alice"}]
	name := acct + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	var job string
	// Cleanup, last registered first run: the test's job rows, reservation
	// rows and rollups go, so slurmdbd's own rollup of these hours later
	// finds nothing of the test's; then the account.
	t.Cleanup(func() {
		c := context.Background()
		_, _ = env.Run(c, "", nil, "sacctmgr", "-i", "delete", "user", "alice", "where", "account="+acct)
		_, _ = env.Run(c, "", nil, "sacctmgr", "-i", "delete", "account", acct)
	})
	t.Cleanup(func() {
		c := context.Background()
		if job != "" {
			_, _ = env.Run(c, "", nil, "scancel", job)
		}
		_, _ = env.Run(c, "", nil, "scontrol", "delete", "reservationname="+name)
		acctest.WaitFor(t, "the test's jobs to be gone", time.Minute, func() bool {
			out, err := env.Run(c, "", nil, "squeue", "-h", "-A", acct, "-o", "%i")
			return err == nil && strings.TrimSpace(out) == ""
		})
		for _, q := range []string{
			"DELETE FROM `" + env.Cluster + "_job_table` WHERE account = '" + acct + "' AND id_resv IN (SELECT id_resv FROM `" + env.Cluster + "_resv_table` WHERE resv_name = '" + name + "')",
			"DELETE FROM `" + env.Cluster + "_resv_table` WHERE resv_name = '" + name + "'",
		} {
			if _, err := sy.RW.Exec(q); err != nil {
				t.Errorf("remove the test's rows: %v", err)
			}
		}
		for _, id := range []int64{acctAssoc, userAssoc} {
			for _, tbl := range []string{"hour", "day", "month"} {
				if _, err := sy.RW.Exec("DELETE FROM `"+env.Cluster+"_assoc_usage_"+tbl+"_table` WHERE id = ?", id); err != nil {
					t.Errorf("remove the test's rollups: %v", err)
				}
			}
		}
	})

	env.Exec(t, "", "scontrol", "create", "reservation", "reservationname="+name, "accounts="+acct, "starttime=now", "duration=00:05:00",
		"tres=gres/gpu:h100=1", "flags=ignore_jobs")
	began := time.Now()
	job = acctest.Sbatch(t, env, "alice", "-A", acct, "--reservation="+name, "-t", "2", "-J", "m4-resvidle", "--gres=gpu:h100:1", "--wrap", "sleep 12")
	acctest.WaitFor(t, "the job in the reservation to end", 90*time.Second, func() bool {
		s := acctest.JobState(env, job)
		return s == "" || s == "COMPLETED"
	})
	// The reservation idles on for the rest of its first minute.
	time.Sleep(time.Until(began.Add(50 * time.Second)))
	env.Exec(t, "", "scontrol", "delete", "reservationname="+name)
	var resvID, jobSecs int64
	acctest.WaitFor(t, "slurmdbd to record the reservation's end and the job's", time.Minute, func() bool {
		var deleted int
		err := sy.RO.QueryRow("SELECT id_resv, MAX(deleted) FROM `"+env.Cluster+"_resv_table` WHERE resv_name = ? GROUP BY id_resv", name).Scan(&resvID, &deleted)
		if err != nil || deleted == 0 {
			return false
		}
		err = sy.RO.QueryRow("SELECT CAST(SUM(time_end - time_start) AS SIGNED) FROM `"+env.Cluster+"_job_table` WHERE id_job = ? AND id_resv = ? AND time_start > 0 AND time_end > 0", job, resvID).Scan(&jobSecs)
		return err == nil && jobSecs > 0
	})
	var resv struct{ Start, End int64 }
	if err := sy.RO.QueryRow("SELECT MIN(time_start), MAX(time_end) FROM `"+env.Cluster+"_resv_table` WHERE id_resv = ?", resvID).Scan(&resv.Start, &resv.End); err != nil {
		t.Fatal(err)
	}

	h0 := time.Unix(resv.Start, 0).UTC().Truncate(time.Hour)
	h1 := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	f := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
	env.Exec(t, "", "sacctmgr", "-i", "rollup", f(h0), f(h1))
	rolled := func(assoc int64) int64 {
		var n int64
		if err := sy.RO.Get(&n, "SELECT CAST(COALESCE(SUM(alloc_secs), 0) AS SIGNED) FROM `"+env.Cluster+"_assoc_usage_hour_table` WHERE id = ? AND id_tres = ? AND time_start >= ? AND time_start < ?",
			assoc, sy.TRES.GPU, h0.Unix(), h1.Unix()); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The rollups hold the job under alice and the idle rest of the
	// reservation under the account: without the latter the test proves
	// nothing.
	idle := resv.End - resv.Start - jobSecs
	if got := rolled(acctAssoc); got < idle-2 || got > idle+2 || idle < 20 {
		t.Fatalf("slurmdbd rolled up %d GPU-seconds for %s's account association; want about the reservation's idle %d (%d s, job %d s)",
			got, acct, idle, resv.End-resv.Start, jobSecs)
	}
	if got := rolled(userAssoc); got != jobSecs {
		t.Fatalf("slurmdbd rolled up %d GPU-seconds for %s/alice; want the job's %d", got, acct, jobSecs)
	}

	src, err := ingest.NewSlurmDB(sy.RO, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	mine := func(ms []ingest.Missing) []ingest.Missing {
		var out []ingest.Missing
		for _, m := range ms {
			if m.Account == acct {
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
		t.Fatalf("the purge check refuses the idle time of reservation %s (id %d, %s..%s, job %d s) as missing rows: %v",
			name, resvID, time.Unix(resv.Start, 0).UTC().Format(time.TimeOnly), time.Unix(resv.End, 0).UTC().Format(time.TimeOnly), jobSecs, m)
	}
	// Not blind: the job's row deleted is alice's GPU-seconds missing (the
	// account's share grows by as much, which is no refusal).
	if _, err := sy.RW.Exec("DELETE FROM `"+env.Cluster+"_job_table` WHERE id_job = ? AND id_resv = ?", job, resvID); err != nil {
		t.Fatal(err)
	}
	missing, err = ingest.CheckRollups(ctx, src, h0.Unix(), h1.Unix())
	if err != nil {
		t.Fatal(err)
	}
	if m := mine(missing); len(m) != 1 || m[0].User != "alice" || m[0].Seconds() != jobSecs {
		t.Fatalf("after deleting the job's row: %v; want %d GPU-seconds of %s/alice missing", m, jobSecs, acct)
	}
	t.Logf("reservation %s: %d s, job %d s, idle %d GPU-seconds to %s; check passes; the deleted row is found: %v",
		name, resv.End-resv.Start, jobSecs, rolled(acctAssoc), acct, mine(missing))
}
