package acctest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// Key is what the reference and the ledger are compared on.
type Key struct {
	Account string
	Period  string
	Tier    meter.Tier
	Type    string
}

// SlurmDB opens slurm_acct_db with the read-only user; Bench with the
// read-write user (for synthetic rows).
func SlurmDB(t testing.TB, env testbed.Env) *sqlx.DB {
	return open(t, env.SlurmDBDSN, "GPUBRIDGE_SLURMDB_DSN")
}

// Bench opens slurm_acct_db with the read-write benchmark user.
func Bench(t testing.TB, env testbed.Env) *sqlx.DB {
	return open(t, env.BenchDBDSN, "GPUBRIDGE_BENCH_SLURMDB_DSN")
}

func open(t testing.TB, dsn, name string) *sqlx.DB {
	t.Helper()
	if dsn == "" {
		t.Fatalf("%s is not set: `source .testbed/env` after `make testbed-up`", name)
	}
	db, err := sqldb.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Reference recomputes GPU-seconds per account, month, tier and GPU type
// with plain SQL over the job table, independently of the Go code: for each
// month, the allocated count of each typed GPU TRES (or of gres/gpu when a
// row has no typed GPU) times the run clipped to the month, a running run
// measured to asOf. The account is the association's (as sacct shows it),
// else the row's. Tier: ondemand when the partition or the QOS is
// "ondemand". Only accounts LIKE accountLike are counted, and only runs
// that ended at or after endFrom (Unix seconds; 0 for all) or are running:
// the rows an ingest from endFrom selects.
func Reference(t testing.TB, db *sqlx.DB, cluster, accountLike string, from, to meter.Period, asOf, endFrom int64) map[Key]int64 {
	t.Helper()
	out := map[Key]int64{}
	jt := "`" + cluster + "_job_table`"
	// count of TRES id X in tres_alloc: the digits after ",X=".
	count := "CAST(SUBSTRING_INDEX(REGEXP_SUBSTR(CONCAT(',', t.tres_alloc), CONCAT(',', tr.id, '=[0-9]+')), '=', -1) AS UNSIGNED)"
	has := "CONCAT(',', t.tres_alloc) LIKE CONCAT('%,', tr.id, '=%')"
	stop := "IF(t.time_end = 0, ?, t.time_end)"
	for p := from; p <= to; p++ {
		ps, pe := p.StartUnix(), p.EndUnix()
		q := simpleReference(stop, count, jt, has, "`"+cluster+"_assoc_table`")
		args := []any{asOf, pe, ps, accountLike, accountLike, pe, asOf, ps, asOf, endFrom}
		rows, err := db.QueryContext(context.Background(), q, args...)
		if err != nil {
			t.Fatalf("reference query for %s: %v", p, err)
		}
		for rows.Next() {
			var k Key
			var tier string
			var sec int64
			if err := rows.Scan(&k.Account, &k.Type, &tier, &sec); err != nil {
				t.Fatal(err)
			}
			k.Period, k.Tier = p.String(), meter.Tier(tier)
			if sec != 0 {
				out[k] += sec
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}

// simpleReference is the reference query: one row per (account, type, tier)
// of the month given by the bound parameters.
func simpleReference(stop, count, jt, has, at string) string {
	return fmt.Sprintf(`
SELECT COALESCE(NULLIF(a.acct, ''), g.account) AS account, g.gpu_type,
       IF(t.`+"`partition`"+` = 'ondemand' OR q.name = 'ondemand', 'ondemand', 'reserved') AS tier,
       CAST(SUM(g.n * (LEAST(%[1]s, ?) - GREATEST(t.time_start, ?))) AS SIGNED) AS sec
FROM (
  SELECT t.job_db_inx, t.account, SUBSTRING(tr.name, 5) AS gpu_type, %[2]s AS n
  FROM %[3]s t JOIN tres_table tr ON tr.type = 'gres' AND tr.name LIKE 'gpu:%%' AND %[4]s
  WHERE t.account LIKE ?
  UNION ALL
  SELECT t.job_db_inx, t.account, 'gpu', %[2]s
  FROM %[3]s t JOIN tres_table tr ON tr.type = 'gres' AND tr.name = 'gpu' AND %[4]s
  WHERE t.account LIKE ? AND NOT EXISTS (SELECT 1 FROM tres_table ty WHERE ty.type = 'gres' AND ty.name LIKE 'gpu:%%'
    AND CONCAT(',', t.tres_alloc) LIKE CONCAT('%%,', ty.id, '=%%'))
) g JOIN %[3]s t ON t.job_db_inx = g.job_db_inx
LEFT JOIN qos_table q ON q.id = t.id_qos
LEFT JOIN %[5]s a ON a.id_assoc = t.id_assoc
WHERE t.time_start > 0 AND t.time_start < ? AND %[1]s > ? AND t.time_start < ? AND g.n > 0
  AND (t.time_end = 0 OR t.time_end >= ?)
GROUP BY 1, g.gpu_type, tier`, stop, count, jt, has, at)
}

// LedgerSums reads a ledger database's lines (booked anywhere) and accruals
// per account, usage period, tier and type, for accounts LIKE accountLike.
func LedgerSums(t testing.TB, db *sqlx.DB, cluster, accountLike string) map[Key]int64 {
	t.Helper()
	out := map[Key]int64{}
	for _, table := range []string{"usage_ledger", "usage_accrual"} {
		rows, err := db.QueryContext(context.Background(), "SELECT account, usage_period, tier, gpu_type, CAST(SUM(gpu_seconds) AS SIGNED) FROM "+table+
			" WHERE cluster = ? AND account LIKE ? GROUP BY account, usage_period, tier, gpu_type", cluster, accountLike)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k Key
			var tier string
			var sec int64
			if err := rows.Scan(&k.Account, &k.Period, &tier, &k.Type, &sec); err != nil {
				t.Fatal(err)
			}
			k.Tier = meter.Tier(tier)
			out[k] += sec
		}
		rows.Close()
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// Like escapes s for a LIKE pattern prefix.
func Like(prefix string) string { return strings.ReplaceAll(prefix, "_", `\_`) + "%" }
