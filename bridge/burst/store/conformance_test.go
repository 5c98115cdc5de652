package store

// The conformance tests every Store passes: Memory in unit tests, DB in
// integration tests against the testbed's MariaDB.

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
)

// conformer is a store under test.
type conformer interface {
	burst.Store
	Refusals(ctx context.Context, tenant string) ([]StoredRefusal, error)
	Moves(ctx context.Context, tenant string, since time.Time) ([]burst.MoveRecord, error)
}

var (
	_ conformer = (*DB)(nil)
	_ conformer = (*Memory)(nil)
)

func conformance(t *testing.T, open func(t *testing.T) conformer) {
	t.Run("moves idempotent", func(t *testing.T) { testMovesIdempotent(t, open(t)) })
	t.Run("sync refusals", func(t *testing.T) { testSyncRefusals(t, open(t)) })
}

func testMovesIdempotent(t *testing.T, s conformer) {
	ctx := context.Background()
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	ms := []burst.MoveRecord{
		{JobID: 1, Tenant: "b5a", User: "alice", GPUs: "h100:1", GPUCount: 1, MovedAt: at, SlurmReason: "QOSGrpGRES", Estimate: 400, SubmitTime: at.Add(-time.Minute)},
		{JobID: 2, Tenant: "b5a", User: "alice", GPUs: "h100:2", GPUCount: 2, MovedAt: at, SlurmReason: "QOSGrpGRES"},
	}
	n, err := s.RecordMoves(ctx, at, ms)
	if err != nil || n != 2 {
		t.Fatalf("RecordMoves = %d, %v; want 2, nil", n, err)
	}
	// Recording again (an adopted move) adds nothing; a later move of the
	// same job (requeued and moved again) is a new row.
	again := append(ms, burst.MoveRecord{JobID: 1, Tenant: "b5a", User: "alice", GPUs: "h100:1", GPUCount: 1, MovedAt: at.Add(time.Hour)})
	n, err = s.RecordMoves(ctx, at.Add(time.Hour), again)
	if err != nil || n != 1 {
		t.Fatalf("RecordMoves again = %d, %v; want 1, nil", n, err)
	}
	got, err := s.Moves(ctx, "b5a", at)
	if err != nil {
		t.Fatal(err)
	}
	want := []burst.MoveRecord{ms[0], ms[1], again[2]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func testSyncRefusals(t *testing.T, s conformer) {
	ctx := context.Background()
	at := time.Date(2026, 5, 4, 10, 0, 0, 123456789, time.UTC)
	r := func(id int64, reason burst.Reason) burst.Refusal {
		return burst.Refusal{JobID: id, Tenant: "b5a", User: "alice", GPUs: burst.Request{"h100": 1}, Reason: reason, Detail: "d", SlurmReason: "QOSGrpGRES"}
	}
	ids := func(rs []burst.Refusal) map[int64]burst.Reason {
		m := map[int64]burst.Reason{}
		for _, x := range rs {
			m[x.JobID] = x.Reason
		}
		return m
	}
	steps := []struct {
		in          []burst.Refusal
		wantChanged map[int64]burst.Reason
		wantStored  map[int64]burst.Reason
		wantFirst   map[int64]time.Time
	}{
		{in: []burst.Refusal{r(1, burst.Cap), r(2, burst.Disabled)},
			wantChanged: map[int64]burst.Reason{1: burst.Cap, 2: burst.Disabled},
			wantStored:  map[int64]burst.Reason{1: burst.Cap, 2: burst.Disabled},
			wantFirst:   map[int64]time.Time{1: at.Truncate(time.Second), 2: at.Truncate(time.Second)}},
		{in: []burst.Refusal{r(1, burst.Cap), r(2, burst.Budget), r(3, burst.Cap)},
			wantChanged: map[int64]burst.Reason{2: burst.Budget, 3: burst.Cap},
			wantStored:  map[int64]burst.Reason{1: burst.Cap, 2: burst.Budget, 3: burst.Cap},
			wantFirst:   map[int64]time.Time{1: at.Truncate(time.Second), 2: at.Add(10 * time.Second).Truncate(time.Second), 3: at.Add(10 * time.Second).Truncate(time.Second)}},
		{in: nil, wantChanged: map[int64]burst.Reason{}, wantStored: map[int64]burst.Reason{}, wantFirst: map[int64]time.Time{}},
	}
	for i, st := range steps {
		now := at.Add(time.Duration(i) * 10 * time.Second)
		changed, err := s.SyncRefusals(ctx, now, st.in)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(st.wantChanged, ids(changed)); diff != "" {
			t.Errorf("step %d changed (-want +got)\n%s", i, diff)
		}
		stored, err := s.Refusals(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got, first := map[int64]burst.Reason{}, map[int64]time.Time{}
		for _, x := range stored {
			got[x.JobID], first[x.JobID] = x.Reason, x.FirstAt
		}
		if diff := cmp.Diff(st.wantStored, got); diff != "" {
			t.Errorf("step %d stored (-want +got)\n%s", i, diff)
		}
		if diff := cmp.Diff(st.wantFirst, first); diff != "" {
			t.Errorf("step %d first_at (-want +got)\n%s", i, diff)
		}
	}
}
