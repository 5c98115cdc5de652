//go:build integration

package ledger_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/lease/leasetest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestMariaDBConformance runs the ledger conformance suite on a scratch
// database of the testbed's MariaDB, once writing lines with LOAD DATA
// LOCAL INFILE (the default) and once with multi-row INSERTs (the
// fallback for servers that refuse LOCAL INFILE).
func TestMariaDBConformance(t *testing.T) {
	env := testbed.Require(t)
	for name, inserts := range map[string]bool{"load data": false, "inserts": true} {
		t.Run(name, func(t *testing.T) {
			db, _ := acctest.ScratchDB(t, env, "ledger")
			store := ledger.NewDB(db, nil)
			store.UseInserts(inserts)
			ledgertest.Run(t, func(*testing.T) ledgertest.Store { return store })
		})
	}
}

// TestMariaDBOddNames writes names that LOAD DATA would have to escape (a
// tab, a backslash, a newline, non-ASCII): the batch goes in INSERTs and
// reads back byte for byte, beside plain names loaded with LOAD DATA.
func TestMariaDBOddNames(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	db, _ := acctest.ScratchDB(t, env, "oddnames")
	store := ledger.NewDB(db, nil)
	asOf := ledgertest.TS("2026-12-15 00:00:00")
	names := []string{"plain", "tab\there", `back\slash`, "new\nline", "naïve", "NULL", `\N`}
	var runs []meter.Run
	for i, n := range names {
		runs = append(runs, meter.Run{Key: meter.RunKey{Cluster: "c", JobID: uint32(i + 1), Submit: 1}, Account: n, User: n, Partition: "pool",
			Start: ledgertest.TS("2026-11-02 10:00:00"), End: ledgertest.TS("2026-11-02 11:00:00"), GPUs: []meter.Alloc{{Type: "h100", Count: 1}}})
	}
	for _, batch := range [][]meter.Run{runs[:1], runs} { // plain alone (LOAD DATA), then all (INSERTs)
		if _, err := store.ApplyBatch(ctx, "c", asOf, meter.Batch{Runs: ledgertest.Measure(asOf, batch...)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, l := range ledgertest.AllLines(t, store, "c", ledgertest.P("2026-11")) {
		if l.Account != l.User {
			t.Errorf("account %q, user %q", l.Account, l.User)
		}
		got = append(got, l.Account)
	}
	if d := cmp.Diff(names, got); d != "" {
		t.Errorf("names (-want +got)\n%s", d)
	}
}

// TestMariaDBBookingConformance runs the booking charge suite on a scratch
// database (with the usage lines both ways).
func TestMariaDBBookingConformance(t *testing.T) {
	env := testbed.Require(t)
	for name, inserts := range map[string]bool{"load data": false, "inserts": true} {
		t.Run(name, func(t *testing.T) {
			db, _ := acctest.ScratchDB(t, env, "bookcharge")
			store := ledger.NewDB(db, nil)
			store.UseInserts(inserts)
			ledgertest.RunBookings(t, func(*testing.T) ledgertest.BookingStore { return store })
		})
	}
}

// TestMariaDBReReadIsolatedThenRange re-reads a batch whose lowest job ids
// are isolated and whose later ids form a range (issue 25 item 10: the
// lookup of the existing lines was refused with Error 1064, so every
// ingest of that window failed). The second pass writes nothing.
func TestMariaDBReReadIsolatedThenRange(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	db, _ := acctest.ScratchDB(t, env, "rereadpattern")
	store := ledger.NewDB(db, nil)
	asOf := ledgertest.TS("2026-12-15 00:00:00")
	var runs []meter.Run
	for _, id := range []uint32{700103, 700260, 700300, 700301} {
		runs = append(runs, meter.Run{Key: meter.RunKey{Cluster: "c", JobID: id, Submit: 1}, Account: "acme", User: "u", Partition: "pool",
			Start: ledgertest.TS("2026-11-02 10:00:00"), End: ledgertest.TS("2026-11-02 11:00:00"), GPUs: []meter.Alloc{{Type: "h100", Count: 1}}})
	}
	b := meter.Batch{Runs: ledgertest.Measure(asOf, runs...), CheckAll: true}
	if _, err := store.ApplyBatch(ctx, "c", asOf, b); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	st, err := store.ApplyBatch(ctx, "c", asOf, b)
	if err != nil {
		t.Fatalf("re-read: %v", err)
	}
	if st.Lines != 0 {
		t.Errorf("re-read wrote %d lines, want 0 (%+v)", st.Lines, st)
	}
	if n := len(ledgertest.AllLines(t, store, "c", ledgertest.P("2026-11"))); n != len(runs) {
		t.Errorf("%d lines, want %d", n, len(runs))
	}
}

// TestMariaDBConformanceWithoutUserLocks runs the conformance suite (its
// ledger lock, ingest and close included) on a pool that refuses every
// MariaDB user-lock function with 1235, as a Galera node does: the ledger
// takes no GET_LOCK.
func TestMariaDBConformanceWithoutUserLocks(t *testing.T) {
	env := testbed.Require(t)
	_, dsn := acctest.ScratchDB(t, env, "nolocks")
	db, err := leasetest.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refused := leasetest.Refused.Load()
	store := ledger.NewDB(db, nil)
	ledgertest.Run(t, func(*testing.T) ledgertest.Store { return store })
	if n := leasetest.Refused.Load() - refused; n != 0 {
		t.Errorf("%d statements used a user lock", n)
	}
}
