package acctest

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// Synth is one test's block of synthetic rows in the testbed's job table:
// ids [Lo, Lo+N), accounts starting with synth.AccountPrefix. It holds what
// building rows needs (TRES and QOS ids, the accounts' associations).
type Synth struct {
	t      testing.TB
	env    testbed.Env
	RO, RW *sqlx.DB // slurm_acct_db: read-only and the benchmark user
	Lo, N  uint32
	TRES   synth.TRES
	QOS    map[string]int64 // normal, ondemand
	// Assoc is id_assoc by (account, user); UID the uid of each user.
	Assoc map[[2]string]int64
	UID   map[string]int64
}

// NewSynth removes the block's rows now (leftovers of an interrupted run)
// and when the test ends, reads the TRES and QOS ids, and, when accounts
// are given, makes them (EnsureAccounts) with the users.
func NewSynth(t testing.TB, env testbed.Env, lo, n uint32, users []string, accounts ...string) *Synth {
	t.Helper()
	ctx := context.Background()
	s := &Synth{t: t, env: env, RO: SlurmDB(t, env), RW: Bench(t, env), Lo: lo, N: n, UID: map[string]int64{}}
	if _, err := synth.Delete(ctx, s.RW, env.Cluster, lo, lo+n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := synth.Delete(context.Background(), s.RW, env.Cluster, lo, lo+n); err != nil {
			t.Error(err)
		}
	})
	var err error
	if s.TRES, err = synth.LoadTRES(ctx, s.RW); err != nil {
		t.Fatal(err)
	}
	if len(accounts) > 0 {
		// EnsureAccounts creates the ondemand QOS when it is missing (a fresh
		// testbed): read the QOS ids after it, or rows meant for ondemand
		// carry id 0 and meter as reserved.
		s.Assoc = EnsureAccounts(t, env, s.RO, users, accounts...)
		for _, u := range users {
			s.UID[u] = UID(t, env, u)
		}
	}
	if s.QOS, err = synth.QOSIDs(ctx, s.RW, "normal", "ondemand"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"normal", "ondemand"} {
		if s.QOS[q] == 0 && len(accounts) > 0 {
			t.Fatalf("QOS %s does not exist on the testbed after EnsureAccounts", q)
		}
	}
	return s
}

// TS reads "2006-01-02 15:04:05" as UTC Unix seconds ("" is 0).
func TS(t testing.TB, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.Unix()
}

// Per reads "2006-01" as a period.
func Per(t testing.TB, s string) meter.Period {
	t.Helper()
	p, err := meter.ParsePeriod(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Row is a completed run of job Lo+id by the first user of acct in
// partition pool, QOS normal, with 4 CPUs and gpus (type "" is untyped);
// times as TS reads them, "" for none.
func (s *Synth) Row(id uint32, acct, user, submit, start, end string, gpus map[string]int) synth.Row {
	s.t.Helper()
	if id >= s.N {
		s.t.Fatalf("synthetic row %d outside the test's block of %d", id, s.N)
	}
	return synth.Row{JobID: s.Lo + id, Account: acct, Partition: "pool", QOS: s.QOS["normal"], Assoc: s.Assoc[[2]string{acct, user}],
		User: s.UID[user], State: synth.StateCompleted, TRES: s.TRES.Alloc(4, gpus),
		Submit: TS(s.t, submit), Start: TS(s.t, start), End: TS(s.t, end)}
}

// Insert writes rows into the job table.
func (s *Synth) Insert(rows ...synth.Row) {
	s.t.Helper()
	if err := synth.Insert(context.Background(), s.RW, s.env.Cluster, rows); err != nil {
		s.t.Fatal(err)
	}
}

// Delete removes the block's rows with ids Lo+id for the given ids.
func (s *Synth) Delete(ids ...uint32) {
	s.t.Helper()
	for _, id := range ids {
		if _, err := synth.Delete(context.Background(), s.RW, s.env.Cluster, s.Lo+id, s.Lo+id+1); err != nil {
			s.t.Fatal(err)
		}
	}
}

// RunKey is a usage key without the cluster, for comparing ledgers run by
// run.
type RunKey struct {
	Job    uint32
	Submit int64
	Period string
	Tier   meter.Tier
	Type   string
}

// RunSums reads a ledger's lines and accruals per run key for accounts
// LIKE like.
func RunSums(t testing.TB, db *sqlx.DB, cluster, like string) map[RunKey]int64 {
	t.Helper()
	out := map[RunKey]int64{}
	for _, table := range []string{"usage_ledger", "usage_accrual"} {
		rows, err := db.Query("SELECT job_id, submit_time, usage_period, tier, gpu_type, CAST(SUM(gpu_seconds) AS SIGNED) FROM "+table+
			" WHERE cluster = ? AND account LIKE ? GROUP BY job_id, submit_time, usage_period, tier, gpu_type", cluster, like)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k RunKey
			var sec int64
			if err := rows.Scan(&k.Job, &k.Submit, &k.Period, &k.Tier, &k.Type, &sec); err != nil {
				t.Fatal(err)
			}
			if sec != 0 {
				out[k] += sec
			}
		}
		rows.Close()
	}
	return out
}

// LedgerLines is the ledger's lines (not accruals) of accounts LIKE like,
// as comparable rows: key, revision, booked period, seconds.
func LedgerLines(t testing.TB, db *sqlx.DB, cluster, like string) []string {
	t.Helper()
	var out []string
	if err := db.Select(&out, "SELECT CONCAT_WS(' ', job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds) "+
		"FROM usage_ledger WHERE cluster = ? AND account LIKE ? ORDER BY job_id, submit_time, usage_period, tier, gpu_type, revision", cluster, like); err != nil {
		t.Fatal(err)
	}
	return out
}
