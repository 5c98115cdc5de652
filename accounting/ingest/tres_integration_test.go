//go:build integration

package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

// TestMalformedTRESRefused: a job row whose tres_alloc holds an entry that
// is not id=count (here next to a real h100 entry) stops the ingest with
// ErrMalformedTRES naming the job, and nothing of the window is written or
// marked covered; it used to be skipped, billing the run short.
func TestMalformedTRESRefused(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sy := acctest.NewSynth(t, env, synth.TestIDs+400000, 10, []string{"alice"}, "m4syntres")
	good := sy.Row(1, "m4syntres", "alice", "2034-03-02 09:00:00", "2034-03-02 10:00:00", "2034-03-02 11:00:00", map[string]int{"h100": 1})
	bad := sy.Row(2, "m4syntres", "alice", "2034-03-03 09:00:00", "2034-03-03 10:00:00", "2034-03-03 11:00:00", map[string]int{"h100": 2})
	bad.TRES += ",1003=2x"
	sy.Insert(good, bad)

	db, _ := acctest.ScratchDB(t, env, "tres")
	store := ledger.NewDB(db, nil)
	src, err := ingest.NewSlurmDB(sy.RO, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: store, Rules: rules, UseHostClock: true,
		Clock: func() time.Time { return time.Unix(ts("2034-03-10 00:00:00"), 0) }}
	_, err = in.Ingest(ctx, ingest.Window{From: time.Unix(ts("2034-03-01 00:00:00"), 0), To: time.Unix(ts("2034-03-05 00:00:00"), 0)})
	if !errors.Is(err, ingest.ErrMalformedTRES) || !strings.Contains(err.Error(), "1003=2x") {
		t.Fatalf("ingest: %v, want ErrMalformedTRES naming the entry", err)
	}
	var n int
	if err := db.Get(&n, "SELECT COUNT(*) FROM usage_ledger WHERE account = 'm4syntres'"); err != nil || n != 0 {
		t.Errorf("%d lines written (%v), want none", n, err)
	}
	st, err := store.State(ctx, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Coverage) != 0 {
		t.Errorf("coverage %v after a refused window, want none", st.Coverage)
	}
}
