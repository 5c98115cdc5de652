//go:build integration

package slurmrest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestJobsSinceTestbed checks ListJobsSince and ListJobStates against the
// testbed's slurmrestd 26.05, in both API versions: the one-pass read
// gives ListJobs's jobs; a read with update_time never misses a change (a
// job submitted after the last read is there), and a read while no job
// changed is Unchanged; jobs/state/ lists the job with its state.
func TestJobsSinceTestbed(t *testing.T) {
	env := testbed.Require(t)
	for _, v := range Supported {
		t.Run(v, func(t *testing.T) {
			c := itClient(t, env, v)
			x, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			acct := "it-js" + v[len(v)-2:] // it-js44, it-js43
			var jobs []int64
			cleanup := func() {
				bg := context.Background()
				for _, id := range jobs {
					c.CancelJob(bg, id)
				}
				// slurmdbd sees a cancelled job end a moment later.
				var err error
				for i := 0; i < 20; i++ {
					if err = c.DeleteAccount(bg, acct); err == nil {
						return
					}
					time.Sleep(500 * time.Millisecond)
				}
				t.Errorf("cleanup: %v", err)
			}
			cleanup()
			t.Cleanup(cleanup)
			if err := c.CreateAccounts(x, []AccountSpec{{Name: acct}}); err != nil {
				t.Fatal(err)
			}
			if err := c.SetAssociations(x, []AssociationSpec{{Account: acct, User: "alice"}}); err != nil {
				t.Fatal(err)
			}
			submit := func() int64 {
				t.Helper()
				r, err := c.As("alice").SubmitJob(x, JobSpec{Name: acct, Account: acct, Partition: "pool", TRESPerNode: "gres/gpu:h100:1",
					Script: "#!/bin/bash\nsleep 2\n", TimeLimitMinutes: 2, Hold: true})
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, r.JobID)
				return r.JobID
			}
			mine := JobFilter{Accounts: []string{acct}, States: []string{"PENDING"}} // not the cancelled jobs of an earlier run
			ids := func(js []Job) []int64 {
				var out []int64
				for _, j := range js {
					out = append(out, j.ID)
				}
				slices.Sort(out)
				return out
			}
			first := submit()

			full, err := c.ListJobsSince(x, mine, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			old, err := c.ListJobs(x, mine)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(old, full.Jobs); diff != "" {
				t.Errorf("this account's jobs (-ListJobs +ListJobsSince)\n%s", diff)
			}
			if full.Unchanged || full.LastUpdate.IsZero() || full.Bytes == 0 {
				t.Errorf("full read: unchanged %v, last update %s, %d bytes", full.Unchanged, full.LastUpdate, full.Bytes)
			}

			// A change after the read is never missed.
			second := submit()
			after, err := c.ListJobsSince(x, mine, full.LastUpdate)
			if err != nil {
				t.Fatal(err)
			}
			if after.Unchanged || !slices.Equal(ids(after.Jobs), []int64{first, second}) {
				t.Fatalf("read after a submission: unchanged %v, jobs %v; want %d and %d", after.Unchanged, ids(after.Jobs), first, second)
			}

			// With no change in between (other users of the testbed may
			// change jobs: try a few times), the read is Unchanged and small.
			quiet := false
			for i := 0; i < 30 && !quiet; i++ {
				p, err := c.ListJobsSince(x, mine, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				q, err := c.ListJobsSince(x, mine, p.LastUpdate)
				if err != nil {
					t.Fatal(err)
				}
				if q.Unchanged {
					quiet = true
					if len(q.Jobs) != 0 || q.Bytes >= p.Bytes {
						t.Errorf("unchanged read: %d jobs, %d bytes (full: %d)", len(q.Jobs), q.Bytes, p.Bytes)
					}
				} else {
					time.Sleep(500 * time.Millisecond)
				}
			}
			if !quiet {
				t.Error("no read was Unchanged in 30 tries (is the testbed busy, or does update_time no longer work?)")
			}

			one, two := strconv.FormatInt(first, 10), strconv.FormatInt(second, 10)
			states, err := c.ListJobStates(x, one, two)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, s := range states {
				got[s.ID] = s.State
			}
			if diff := cmp.Diff(map[string][]string{one: {"PENDING"}, two: {"PENDING"}}, got); diff != "" {
				t.Errorf("job states (-want +got)\n%s", diff)
			}
		})
	}
}
