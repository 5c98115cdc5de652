package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
)

// Books is the books' test fixture of cluster as of 2026-11-20 00:00 UTC:
// a memory ledger holding one finished hour of an h100 by acme on
// 2026-11-10 and a run of ACME still accruing since 2026-11-19 23:00, and
// a rate card store holding Card.
func Books(t *testing.T, cluster string) (*ledger.Memory, *ratecard.Memory) {
	t.Helper()
	ctx := context.Background()
	l := ledger.NewMemory()
	asOf := TS("2026-11-20 00:00:00")
	done := meter.Run{Key: meter.RunKey{Cluster: cluster, JobID: 1, Submit: 1}, Account: "acme", Partition: "pool",
		Start: TS("2026-11-10 00:00:00"), End: TS("2026-11-10 01:00:00"), GPUs: []meter.Alloc{{Type: "h100", Count: 1}}}
	running := meter.Run{Key: meter.RunKey{Cluster: cluster, JobID: 2, Submit: 1}, Account: "ACME", Partition: "pool",
		Start: TS("2026-11-19 23:00:00"), GPUs: []meter.Alloc{{Type: "h100", Count: 1}}}
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", Runs: Measure(asOf, done), From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReplaceAccruals(ctx, cluster, asOf, Measure(asOf, running)); err != nil {
		t.Fatal(err)
	}
	cards := ratecard.NewMemory()
	if err := cards.Save(ctx, Card(t), "t", time.Now()); err != nil {
		t.Fatal(err)
	}
	return l, cards
}
