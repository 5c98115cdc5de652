package acctest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// WaitFor polls ok every 250 ms until it holds, and fails the test when d
// has passed first.
func WaitFor(t testing.TB, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !ok(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}

// Sbatch submits a batch job as user (output to /dev/null) and returns its
// id.
func Sbatch(t testing.TB, env testbed.Env, user string, args ...string) string {
	t.Helper()
	out := env.Exec(t, user, append([]string{"sbatch", "--parsable", "-o", "/dev/null"}, args...)...)
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	return id
}

// JobState is the job's state as squeue shows it ("" once slurmctld no
// longer lists it).
func JobState(env testbed.Env, id string) string {
	out, _ := env.Run(context.Background(), "", nil, "squeue", "-h", "-j", id, "-o", "%T")
	return strings.TrimSpace(out)
}

// JobRow is what a test reads of one row of the job table.
type JobRow struct {
	Submit   int64  `db:"time_submit"`
	Eligible int64  `db:"time_eligible"`
	Start    int64  `db:"time_start"`
	End      int64  `db:"time_end"`
	Mod      int64  `db:"mod_time"`
	State    int    `db:"state"`
	TRES     string `db:"tres_alloc"`
}

// JobRows reads the rows (runs) of job id submitted at or after since.
func JobRows(t testing.TB, db *sqlx.DB, cluster, id string, since int64) []JobRow {
	t.Helper()
	var out []JobRow
	if err := db.Select(&out, "SELECT time_submit, time_eligible, time_start, time_end, mod_time, state, tres_alloc FROM `"+cluster+
		"_job_table` WHERE id_job = ? AND time_submit >= ? ORDER BY time_submit", id, since); err != nil {
		t.Fatal(err)
	}
	return out
}
