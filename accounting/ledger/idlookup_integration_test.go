//go:build integration

package ledger

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestIDLookupMatchesInList is the property test of loadExisting's query
// builder on the testbed's MariaDB (issue 25 item 10): a scratch ledger
// holds lines of random job ids (some with two runs, the same ids also
// under another cluster); for random wanted id sets (seeded; the seed is
// printed) and term limits, the rows of the wanted ids that the lookups
// find are exactly those a plain IN list finds, and the server accepts
// every lookup.
func TestIDLookupMatchesInList(t *testing.T) {
	env := testbed.Require(t)
	db, _ := acctest.ScratchDB(t, env, "idlookup")
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	stored := randomIDs(rng, 3000, 3)
	insertLookupLines(t, db, stored)
	for round := range 60 {
		want := randomIDs(rng, 1+rng.IntN(400), 1+rng.IntN(40))
		limit := maxTerms
		if round%2 == 1 {
			limit = 1 + rng.IntN(10)
		}
		got := map[[2]int64]bool{}
		for rest := want; len(rest) > 0; {
			var l idLookup
			l, rest = nextIDLookup(rest, limit)
			for _, r := range lookupRows(t, db, "SELECT job_id, submit_time FROM usage_ledger WHERE cluster = ? AND "+l.where, append([]any{"c"}, l.args...)) {
				if _, ok := slices.BinarySearch(want, uint32(r[0])); ok {
					got[r] = true
				}
			}
		}
		in := make([]string, len(want))
		for i, id := range want {
			in[i] = strconv.FormatUint(uint64(id), 10)
		}
		wantRows := map[[2]int64]bool{}
		for _, r := range lookupRows(t, db, "SELECT job_id, submit_time FROM usage_ledger WHERE cluster = 'c' AND job_id IN ("+strings.Join(in, ",")+")", nil) {
			wantRows[r] = true
		}
		if len(got) != len(wantRows) {
			t.Errorf("round %d (seed %d, limit %d, ids %v): %d rows, the IN list finds %d", round, seed, limit, want, len(got), len(wantRows))
		}
		for r := range wantRows {
			if !got[r] {
				t.Errorf("round %d (seed %d, limit %d, ids %v): run %v not found", round, seed, limit, want, r)
			}
		}
	}
}

// insertLookupLines writes one line per stored id under clusters c and d,
// and a second run (another submit time) for every third id.
func insertLookupLines(t *testing.T, db *sqlx.DB, ids []uint32) {
	t.Helper()
	var b strings.Builder
	b.WriteString("INSERT INTO usage_ledger (" + lineCols + ") VALUES ")
	first := true
	for i, id := range ids {
		for _, cl := range []string{"c", "d"} {
			for s := range 1 + min(1, i%3) {
				if !first {
					b.WriteByte(',')
				}
				first = false
				b.WriteString("('" + cl + "'," + strconv.FormatUint(uint64(id), 10) + "," + strconv.Itoa(100+s) +
					",'2026-11','reserved','h100',0,'2026-11','a','u',1,0,60,60,0,0)")
			}
		}
	}
	if _, err := db.ExecContext(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

// lookupRows runs query and returns its (job_id, submit_time) rows.
func lookupRows(t *testing.T, db *sqlx.DB, query string, args []any) [][2]int64 {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%v: %.300s", err, query)
	}
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var r [2]int64
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
