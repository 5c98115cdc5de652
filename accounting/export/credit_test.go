package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

// creditMeta is the fixture's November with credits: a NODE_FAIL job of
// acme (this period), a booking loss of beta in October (closed: a
// correction) and one of an account without a tenant.
func creditMeta(t testing.TB, closed bool) (Meta, []meter.Line) {
	m := meta(t)
	m.Closed, m.ClosedAt, m.Now = closed, closedAt, closedAt
	eur := m.Card.Unit()
	m.Credits = []Credit{
		{Key: "health-credit:job:testbed:10:1", Kind: "node-fail", Tenant: "acme", Account: "acme", Amount: money.New(-420, eur), Period: per("2026-11"),
			EventID: 7, Node: "gpu-a", JobID: 10, Submit: 1793613600, Start: 1793613600, End: 1793617200, Reason: "job ended NODE_FAIL"},
		{Key: "health-credit:booking:5:event:3", Kind: "booking-lost", Tenant: "beta", Account: "beta", Amount: money.New(-1000, eur), Period: per("2026-10"),
			EventID: 3, Node: "gpu-b", BookingID: 5, GPUSeconds: 14400, Start: 1792454400, End: 1792468800, Reason: "booked GPUs lost"},
		{Key: "health-credit:job:testbed:99:1", Kind: "node-fail", Account: "gamma", Amount: money.New(-5, eur), Period: per("2026-11"), JobID: 99, Submit: 1793613600},
	}
	lines := fixture()
	if closed {
		lines = slices.DeleteFunc(lines, func(l meter.Line) bool { return !l.Final })
	}
	return m, lines
}

func csvColumn(t *testing.T, data []byte, name string, keep func(map[string]string) bool) (*big.Rat, int) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sum, n := new(big.Rat), 0
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, c := range recs[0] {
			row[c] = r[i]
		}
		if keep != nil && !keep(row) || row["row_type"] != "" && row["row_type"] != RowLine {
			continue // the CSV's subtotal and total rows repeat the lines' sums
		}
		v, ok := new(big.Rat).SetString(strings.TrimPrefix(row[name], "'"))
		if !ok {
			t.Fatalf("%s %q is not a number", name, row[name])
		}
		sum.Add(sum, v)
		n++
	}
	return sum, n
}

// TestCreditsInEveryFormat: each credit is in the summary (rows of kind
// credit, in the totals), once per credit in every detail export, and in
// FOCUS as ChargeCategory Credit (a correction for a closed month's loss);
// every total equals the usage priced alone plus the credits, and FOCUS
// stays conformant, open and closed.
func TestCreditsInEveryFormat(t *testing.T) {
	ctx := context.Background()
	for _, closed := range []bool{false, true} {
		m, lines := creditMeta(t, closed)
		plain := m
		plain.Credits = nil
		base, err := Summarize(ctx, plain, source(lines, 1), false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Summarize(ctx, m, source(lines, 1), false)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := base.Amount.Add(money.New(-1425, m.Card.Unit()))
		if s.Amount != want || s.GPUSeconds != base.GPUSeconds || s.Lines != base.Lines+3 {
			t.Fatalf("closed=%v: total %s, %d s, %d lines; want %s, %d s, %d lines", closed, s.Amount, s.GPUSeconds, s.Lines, want, base.GPUSeconds, base.Lines+3)
		}
		credits := map[string]int64{}
		for _, r := range s.Rows {
			if r.IsCredit() {
				credits[r.Tenant+"/"+r.Usage.String()] += r.Amount.Units()
				if r.GPUSeconds != 0 || r.Type != "" || rateString(r) != "" {
					t.Errorf("credit row with GPU time, a type or a rate: %+v", r)
				}
			}
		}
		if len(credits) != 3 || credits["acme/2026-11"] != -420 || credits["beta/2026-10"] != -1000 || credits[NoTenant+"/2026-11"] != -5 {
			t.Errorf("credit rows %v", credits)
		}
		total, _ := new(big.Rat).SetString(want.String())
		isCredit := func(r map[string]string) bool { return r["kind"] == "credit" || r["ChargeCategory"] == "Credit" }
		for _, f := range []Format{CSV, JSON, FOCUS} {
			for _, d := range []bool{false, true} {
				var b bytes.Buffer
				if err := Write(ctx, &b, m, source(lines, 2), Options{Format: f, Detail: d}); err != nil {
					t.Fatal(err)
				}
				name := string(f) + map[bool]string{true: "-detail"}[d]
				switch f {
				case JSON:
					var v struct {
						Total struct {
							AmountMinor int64 `json:"amountMinor"`
						} `json:"total"`
						Credits []jsonCredit `json:"credits"`
					}
					if err := json.Unmarshal(b.Bytes(), &v); err != nil {
						t.Fatal(err)
					}
					if v.Total.AmountMinor != want.Units() || len(v.Credits) != 3 || v.Credits[0].AmountMinor != -420 || v.Credits[0].EventID != 7 ||
						!v.Credits[1].Correction || v.Credits[1].GPUSeconds != 14400 {
						t.Errorf("%s: total %d, credits %+v", name, v.Total.AmountMinor, v.Credits)
					}
				default:
					col := map[Format]string{CSV: "amount", FOCUS: "BilledCost"}[f]
					sum, _ := csvColumn(t, b.Bytes(), col, nil)
					if sum.Cmp(total) != 0 {
						t.Errorf("%s: %s sums to %s, want %s", name, col, sum.FloatString(2), want)
					}
					csum, n := csvColumn(t, b.Bytes(), col, isCredit)
					if wantN := map[bool]int{false: 3, true: 3}[d]; n != wantN || csum.FloatString(2) != "-14.25" {
						t.Errorf("%s: %d credit rows summing to %s, want %d summing to -14.25", name, n, csum.FloatString(2), wantN)
					}
				}
				if f == FOCUS {
					md, err := FOCUSMetadata(m)
					if err != nil {
						t.Fatal(err)
					}
					mb, _ := MarshalMetadata(md)
					var inv map[string]string
					if closed {
						inv = map[string]string{InvoiceID(m.Cluster, m.Period): want.String()}
					}
					exporttest.Conforms(t, name, b.Bytes(), exporttest.Options(m.Card, mb, inv))
					if !strings.Contains(b.String(), ",Credit,Correction,") {
						t.Errorf("%s: the October credit is not a correction", name)
					}
				}
			}
		}
	}
}

// TestCreditCurrencyRefused: a credit in another currency than the card's
// fails the summary and the export; nothing is converted or dropped.
func TestCreditCurrencyRefused(t *testing.T) {
	m, lines := creditMeta(t, false)
	m.Credits[0].Amount = money.New(-420, money.Currency{Code: "USD", Minor: 2})
	if _, err := Summarize(context.Background(), m, source(lines, 1), true); err == nil || !strings.Contains(err.Error(), "is in USD") {
		t.Errorf("summary: %v, want the USD credit refused", err)
	}
	var b bytes.Buffer
	if err := Write(context.Background(), &b, m, source(lines, 1), Options{Format: CSV, Detail: true}); err == nil {
		t.Error("export with a USD credit under a EUR card succeeded")
	}
}
