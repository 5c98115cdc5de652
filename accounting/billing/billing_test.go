package billing

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
)

const cluster = "c"

var nov = ledgertest.P("2026-11")

// books is a ledger with one finished November run of acme (1 h of an
// H100) and one still running (accrued), the example card, and labels.
func books(t *testing.T) (Books, *ledger.Memory, *ratecard.Memory) {
	t.Helper()
	l, cards := ledgertest.Books(t, cluster)
	b := Books{Cluster: cluster, Ledger: l, Cards: cards, Labels: func(ctx context.Context) (ledger.Labeler, error) {
		return TenantLabels(ctx, names{"Acme"})
	}}
	return b, l, cards
}

type names []string

func (n names) Names(context.Context) ([]string, error) { return n, nil }

func rows(t *testing.T, s export.Summary) []string {
	t.Helper()
	var out []string
	for _, r := range s.Rows {
		out = append(out, strings.Join([]string{r.Tenant, r.Account, string(r.Kind), r.Rate.String(), r.Amount.String()}, "|"))
	}
	return out
}

// TestViewOpenAndClosed: an open period shows the current card, labels
// and accruals; once closed, the stored card and labels, no accruals, and
// later changes of the card do not show.
func TestViewOpenAndClosed(t *testing.T) {
	ctx := context.Background()
	b, l, cards := books(t)
	s, err := b.Summary(ctx, nov, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Acme|ACME|accrual|2.10|2.10", "Acme|acme|usage|2.10|2.10"}
	if d := cmp.Diff(want, rows(t, s)); d != "" {
		t.Errorf("open (-want +got)\n%s", d)
	}
	if s.Meta.Closed {
		t.Error("open period shown as closed")
	}

	// Close it (ingest coverage and accruals past the end), then change the card.
	asOf := ledgertest.TS("2026-12-01 01:00:00")
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReplaceAccruals(ctx, cluster, asOf, nil); err != nil {
		t.Fatal(err)
	}
	c := Closer{Cluster: cluster, Ledger: l, Cards: cards, Labels: b.Labels, Clock: func() time.Time { return time.Unix(asOf, 0) }}
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	card := ledgertest.Card(t)
	card.Rates[0].PerGPUHour *= 10
	if err := cards.Save(ctx, card, "t", time.Now()); err != nil {
		t.Fatal(err)
	}
	b.Labels = func(context.Context) (ledger.Labeler, error) { return ledger.Labels{}, nil }
	s, err = b.Summary(ctx, nov, "")
	if err != nil {
		t.Fatal(err)
	}
	// No accruals in a closed period; the stored card and labels price it.
	want = []string{"Acme|acme|usage|2.10|2.10"}
	if d := cmp.Diff(want, rows(t, s)); d != "" || !s.Meta.Closed {
		t.Errorf("closed (-want +got)\n%s (closed %v)", d, s.Meta.Closed)
	}
	if s, err := b.Summary(ctx, nov, "nobody"); err != nil || len(s.Rows) != 0 {
		t.Errorf("another account: %v %v", s.Rows, err)
	}
}

type reader struct {
	calls int
	err   error
}

func (r *reader) Ingest(context.Context, ingest.Window) (ingest.Result, error) {
	r.calls++
	return ingest.Result{}, r.err
}

func TestCloseRefusals(t *testing.T) {
	ctx := context.Background()
	b, l, _ := books(t)
	at := func(s string) func() time.Time { return func() time.Time { return ledgertest.TSTime(s) } }
	r := &reader{}
	c := Closer{Cluster: cluster, Ledger: l, Cards: b.Cards, Labels: b.Labels, Reader: r, Clock: at("2026-11-30 23:59:59")}
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Reread: true}); !errors.Is(err, ledger.ErrNotEnded) || !strings.Contains(err.Error(), "can be closed from 2026-12-01T00:00:00Z") {
		t.Errorf("before its end: %v", err)
	}
	c.Clock = at("2026-12-02 00:00:00")
	no := errors.New("declined")
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Reread: true, Confirm: func(string) error { return no }}); !errors.Is(err, no) || r.calls != 0 {
		t.Errorf("declined: %v, %d re-reads", err, r.calls)
	}
	// Not ingested past the end: ledger.Close refuses, after the re-read.
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Reread: true}); !errors.Is(err, ledger.ErrNotIngested) || r.calls != 1 {
		t.Errorf("not ingested: %v, %d re-reads", err, r.calls)
	}
	r.err = errors.New("slurmdbd down")
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Reread: true}); !errors.Is(err, r.err) {
		t.Errorf("re-read failure: %v", err)
	}
	c.Cards = ratecard.NewMemory()
	if _, err := c.Close(ctx, CloseOptions{Period: nov}); !errors.Is(err, ratecard.ErrNoCard) {
		t.Errorf("no card: %v", err)
	}
	if _, closed, _ := l.Period(ctx, cluster, nov); closed {
		t.Error("a refused close closed the period")
	}
}

func TestCloseTwice(t *testing.T) {
	ctx := context.Background()
	b, l, cards := books(t)
	asOf := ledgertest.TS("2026-12-01 01:00:00")
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReplaceAccruals(ctx, cluster, asOf, nil); err != nil {
		t.Fatal(err)
	}
	c := Closer{Cluster: cluster, Ledger: l, Cards: cards, Labels: b.Labels, Clock: func() time.Time { return time.Unix(asOf, 0) }}
	rec, err := c.Close(ctx, CloseOptions{Period: nov, Actor: "alice"})
	if err != nil || rec.Amount.String() != "2.10" || rec.Snapshot.Tenants["acme"] != "Acme" {
		t.Fatalf("close: %+v, %v", rec, err)
	}
	if _, err := c.Close(ctx, CloseOptions{Period: nov}); !errors.Is(err, ledger.ErrAlreadyClosed) || !strings.Contains(err.Error(), "2026-11 is already closed (at 2026-12-01T01:00:00Z by alice)") {
		t.Errorf("second close: %v", err)
	}
}
