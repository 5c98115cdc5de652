package ledgertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// CreditStore is what the credit part of the suite needs beyond Store.
type CreditStore interface {
	WriteCredits(ctx context.Context, cluster string, cs []ledger.Credit, now time.Time) ([]ledger.Credit, error)
	RunLines(ctx context.Context, cluster string, runs []meter.RunKey, fn func(meter.Line) error) error
}

var (
	_ CreditStore = (*ledger.DB)(nil)
	_ CreditStore = (*ledger.Memory)(nil)
)

// AllCredits reads the credits booked in p.
func AllCredits(t testing.TB, s Store, cluster string, p meter.Period) []ledger.Credit {
	t.Helper()
	var out []ledger.Credit
	if err := s.Credits(context.Background(), cluster, ledger.CreditQuery{Booked: p}, func(c ledger.Credit) error {
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// runCredits is the suite's credit part: written once per key, booked in
// the first open period, validated as a whole, in the close's amount, and
// the run lines it prices from.
func runCredits(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := context.Background()
	eur := money.Currency{Code: "EUR", Minor: 2}
	nov, dec := P("2026-11"), P("2026-12")
	now := TSTime("2026-12-02 03:00:00")
	credit := func(key string, units int64, p meter.Period) ledger.Credit {
		return ledger.Credit{Key: key, Kind: "node-fail", Tenant: "acme", Account: "acme", Amount: money.New(units, eur), Period: p,
			EventID: 7, Node: "gpu-a", JobID: 42, Submit: TS("2026-11-02 09:00:00"), Start: TS("2026-11-02 10:00:00"),
			End: TS("2026-11-02 11:00:00"), Reason: "job ended NODE_FAIL"}
	}

	t.Run("credits: each key once", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		batch := []ledger.Credit{credit("k1", -210, nov), credit("k2", -90, nov), credit("k1", -999, nov)}
		for i, want := range []int{2, 0, 0} {
			got, err := s.WriteCredits(ctx, c, batch, now)
			if err != nil || len(got) != want {
				t.Fatalf("write %d: %d new, %v; want %d", i, len(got), err, want)
			}
			if i == 0 && (got[0].Booked != nov || got[0].WrittenAt != now.Unix()) {
				t.Errorf("written credit as stored: %+v", got[0])
			}
		}
		got := AllCredits(t, s, c, nov)
		w1, w2 := credit("k1", -210, nov), credit("k2", -90, nov)
		for _, w := range []*ledger.Credit{&w1, &w2} {
			w.Booked, w.WrittenAt = nov, now.Unix()
		}
		if d := cmp.Diff([]ledger.Credit{w1, w2}, got); d != "" {
			t.Errorf("credits (-want +got)\n%s", d)
		}
		if len(AllCredits(t, s, c, dec)) != 0 {
			t.Error("credits booked in December")
		}
	})

	t.Run("credits: a closed period gets none", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		if err := s.MarkClosed(ctx, ledger.PeriodRecord{Cluster: c, Period: nov, ClosedAt: now, ClosedBy: "test", Amount: money.Zero(eur), Currency: "EUR"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WriteCredits(ctx, c, []ledger.Credit{credit("late", -210, nov)}, now); err != nil {
			t.Fatal(err)
		}
		if got := AllCredits(t, s, c, nov); len(got) != 0 {
			t.Errorf("closed November got credits: %+v", got)
		}
		got := AllCredits(t, s, c, dec)
		if len(got) != 1 || got[0].Period != nov || got[0].Booked != dec || !got[0].Correction() {
			t.Errorf("late credit: %+v, want one November credit booked in December as a correction", got)
		}
	})

	t.Run("credits: an invalid one writes nothing", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		bad := map[string]ledger.Credit{
			"positive":    credit("b", 5, nov),
			"zero":        credit("b", 0, nov),
			"no key":      credit("", -5, nov),
			"no currency": {Key: "b", Kind: "node-fail", Account: "acme", Amount: money.New(-5, money.Currency{}), Period: nov},
			"no period":   credit("b", -5, 0),
			"no account":  {Key: "b", Kind: "node-fail", Amount: money.New(-5, eur), Period: nov},
		}
		for name, b := range bad {
			got, err := s.WriteCredits(ctx, c, []ledger.Credit{credit("good", -1, nov), b}, now)
			if !errors.Is(err, ledger.ErrBadCredit) || len(got) != 0 {
				t.Errorf("%s: %d, %v; want ErrBadCredit", name, len(got), err)
			}
		}
		if got := AllCredits(t, s, c, nov); len(got) != 0 {
			t.Errorf("a refused batch wrote %+v", got)
		}
	})

	t.Run("credits: in the closed amount; run lines", func(t *testing.T) {
		s, c := newStore(t), cluster(t)
		end := TS("2026-12-02 03:00:00")
		r1 := run(c, 1, 1, "acme", "pool", TS("2026-11-02 10:00:00"), TS("2026-11-02 11:00:00"), meter.Alloc{Type: "h100", Count: 1})
		r2 := run(c, 2, 1, "acme", "pool", TS("2026-11-30 23:00:00"), TS("2026-12-01 01:00:00"), meter.Alloc{Type: "h100", Count: 2})
		if _, err := s.ReplaceAccruals(ctx, c, end, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyBatch(ctx, c, end, batch("slurmdb", TS("2026-11-01 00:00:00"), end, Measure(end, r1, r2))); err != nil {
			t.Fatal(err)
		}
		var lines []meter.Line
		if err := s.RunLines(ctx, c, []meter.RunKey{r2.Key}, func(l meter.Line) error {
			lines = append(lines, l)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(lines) != 2 || lines[0].Period != nov || lines[1].Period != dec || lines[0].GPUSeconds+lines[1].GPUSeconds != 4*3600 || lines[0].Run != r2.Key {
			t.Errorf("run lines of %v: %+v, want its November and December lines", r2.Key, lines)
		}
		if _, err := s.WriteCredits(ctx, c, []ledger.Credit{credit("k1", -210, nov)}, now); err != nil {
			t.Fatal(err)
		}
		rec, err := ledger.Close(ctx, s, ledger.CloseRequest{Cluster: c, Period: nov, Now: now, Actor: "test", Card: Card(t), LockWait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// 3600 s + 7200 s of h100 at 2.10, less the 2.10 credit.
		if rec.Amount != money.New(210+420-210, eur) {
			t.Errorf("closed amount %s, want 4.20 (usage 6.30, credit -2.10)", rec.Amount)
		}
		usd := credit("usd", -5, dec)
		usd.Amount = money.New(-5, money.Currency{Code: "USD", Minor: 2})
		if _, err := s.WriteCredits(ctx, c, []ledger.Credit{usd}, now); err != nil {
			t.Fatal(err)
		}
		jan2 := TS("2027-01-02 00:00:00")
		if _, err := s.ReplaceAccruals(ctx, c, jan2, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApplyBatch(ctx, c, jan2, batch("slurmdb", end, jan2, nil)); err != nil {
			t.Fatal(err)
		}
		_, err = ledger.Close(ctx, s, ledger.CloseRequest{Cluster: c, Period: dec, Now: TSTime("2027-01-02 00:00:00"), Actor: "test", Card: Card(t), LockWait: time.Second})
		if err == nil || !strings.Contains(err.Error(), "is in USD, the rate card in EUR") {
			t.Errorf("close of December with a USD credit under a EUR card: %v, want the currency refused", err)
		}
	})
}
