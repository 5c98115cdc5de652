package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/money"
)

// src serves a fixed job table.
type src struct{ runs []meter.Run }

func (s *src) Name() string { return "slurmdb" }
func (s *src) Read(_ context.Context, q ingest.Query, h ingest.Handler) error {
	var running []meter.Run
	for _, r := range s.runs {
		if r.End == 0 && r.Start > 0 {
			running = append(running, r)
		}
	}
	if err := h.Running(running); err != nil {
		return err
	}
	for _, r := range s.runs {
		if r.End >= q.From && r.End < q.To {
			if err := h.Finished(r, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestClosePeriodJob(t *testing.T) {
	ctx := context.Background()
	now := ledgertest.TSTime("2026-12-02 03:00:00")
	clock := func() time.Time { return now }
	runs := []meter.Run{
		{Key: meter.RunKey{Cluster: "c", JobID: 1, Submit: 1}, Account: "acme", Partition: "pool", Start: ledgertest.TS("2026-11-10 00:00:00"),
			End: ledgertest.TS("2026-11-10 01:00:00"), GPUs: []meter.Alloc{{Type: "h100", Count: 1}}},
		{Key: meter.RunKey{Cluster: "c", JobID: 2, Submit: 1}, Account: "acme", Partition: "pool", Start: ledgertest.TS("2026-11-30 12:00:00"),
			GPUs: []meter.Alloc{{Type: "h100", Count: 2}}}, // still running at close
	}
	store := ledger.NewMemory()
	cards := ratecard.NewMemory()
	in := &ingest.Ingester{Cluster: "c", Source: &src{runs}, Ledger: store, Rules: ledgertest.Rules, Clock: clock}
	job := &ClosePeriod{Closer: billing.Closer{Cluster: "c", Reader: in, Ledger: store, Cards: cards,
		Labels: func(context.Context) (ledger.Labeler, error) { return ledger.Labels{"acme": "acme"}, nil }}, Clock: clock}

	if err := job.Run(ctx); !errors.Is(err, ratecard.ErrNoCard) {
		t.Fatalf("without a rate card: %v, want ErrNoCard", err)
	}
	if err := cards.Save(ctx, ledgertest.Card(t), "test", now); err != nil {
		t.Fatal(err)
	}
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rec, ok, _ := store.Period(ctx, "c", ledgertest.P("2026-11"))
	// 1 h of one H100 + 12 h of two H100 (accrued to the period end) at 2.10.
	if !ok || rec.GPUSeconds != 3600+2*12*3600 || rec.Amount != money.New(210*25, money.Currency{Code: "EUR", Minor: 2}) {
		t.Fatalf("closed record %+v (ok %v)", rec, ok)
	}
	if err := job.Run(ctx); err != nil {
		t.Fatalf("second run: %v", err)
	}
	// The running job ends on Dec 3: only December is added.
	runs[1].End = ledgertest.TS("2026-12-03 00:00:00")
	now = ledgertest.TSTime("2026-12-03 01:00:00")
	if err := (&Ingest{Ingester: in}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	dec := ledgertest.Sums(t, store, "c", ledgertest.P("2026-12"))
	var sec int64
	for _, v := range dec {
		sec += v
	}
	if sec != 2*2*86400 {
		t.Errorf("december %d GPU-seconds, want %d: %v", sec, 2*2*86400, dec)
	}
}

func TestClosePeriodJobMissingRate(t *testing.T) {
	ctx := context.Background()
	now := ledgertest.TSTime("2026-12-02 03:00:00")
	runs := []meter.Run{{Key: meter.RunKey{Cluster: "c", JobID: 1, Submit: 1}, Account: "acme", Start: ledgertest.TS("2026-11-10 00:00:00"),
		End: ledgertest.TS("2026-11-10 01:00:00"), GPUs: []meter.Alloc{{Type: "gpu", Count: 1}}}}
	store := ledger.NewMemory()
	cards := ratecard.NewMemory()
	_ = cards.Save(ctx, ledgertest.Card(t), "test", now)
	in := &ingest.Ingester{Cluster: "c", Source: &src{runs}, Ledger: store, Clock: func() time.Time { return now }}
	err := (&ClosePeriod{Closer: billing.Closer{Cluster: "c", Reader: in, Ledger: store, Cards: cards}, Clock: func() time.Time { return now }}).Run(ctx)
	var mre *pricing.MissingRatesError
	if !errors.As(err, &mre) || mre.Items[0].Type != "gpu" {
		t.Fatalf("err = %v, want the missing type gpu", err)
	}
	if _, ok, _ := store.Period(ctx, "c", ledgertest.P("2026-11")); ok {
		t.Error("period closed despite a missing rate")
	}
}
