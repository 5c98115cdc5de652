package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"strconv"
	"testing"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// financeLedger is a November for finance: the fixture's usage (an
// adjustment, a correction, an accrual, an account without a tenant),
// booking 7's charge and the use inside it, a correction of booking 8,
// and credits (one of an account without a tenant); acme has a profile.
func financeLedger(t *testing.T) (Meta, Lines) {
	m, lines := creditMeta(t, false)
	var err error
	if m.Card, err = m.Card.WithRate(pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: 1_500_000_000, From: m.Card.Rates[0].From}); err != nil {
		t.Fatal(err)
	}
	return m, source(append(lines, bookingLines()...), 5)
}

// tally is one account's figures as one format states them.
type tally struct {
	used, booked int64
	amount       *big.Rat
}

func (a tally) String() string {
	return strconv.FormatInt(a.used, 10) + " s used, " + strconv.FormatInt(a.booked, 10) + " s booked, " + a.amount.FloatString(2)
}

func (a tally) equal(b tally) bool {
	return a.used == b.used && a.booked == b.booked && a.amount.Cmp(b.amount) == 0
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	if s == "" {
		return new(big.Rat)
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

func int64Cell(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func add(m map[string]tally, k string, used, booked int64, amount *big.Rat) {
	a, ok := m[k]
	if !ok {
		a.amount = new(big.Rat)
	}
	a.used += used
	a.booked += booked
	a.amount.Add(a.amount, amount)
	m[k] = a
}

// csvRecords reads a CSV as maps by header.
func csvRecords(t *testing.T, data []byte) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for i, c := range recs[0] {
			row[c] = r[i]
		}
		out = append(out, row)
	}
	return out
}

// TestFinanceTotalsAgree is issue 27's finance acceptance test on a built
// ledger: in the CSV (summary and line items) every tenant's subtotal is
// the sum of its lines' used GPU-seconds, booked GPU-seconds and amounts,
// and the total the sum of the subtotals and of every line; the CSV's
// per-tenant totals equal the JSON's tenant totals and the sums of the
// FOCUS dataset's BilledCost, x_GpuSeconds and x_BookedGpuSeconds per
// SubAccountId, to the cent; profiles and the has_tenant flag are on
// every row; without untenanted accounts, none of theirs is left.
func TestFinanceTotalsAgree(t *testing.T) {
	ctx := context.Background()
	for _, noUntenanted := range []bool{false, true} {
		for _, detail := range []bool{false, true} {
			name := map[bool]string{false: "summary", true: "detail"}[detail] + map[bool]string{true: ", no untenanted"}[noUntenanted]
			t.Run(name, func(t *testing.T) {
				m, lines := financeLedger(t)
				write := func(f Format) []byte {
					var b bytes.Buffer
					if err := Write(ctx, &b, m, lines, Options{Format: f, Detail: detail, NoUntenanted: noUntenanted}); err != nil {
						t.Fatal(err)
					}
					return b.Bytes()
				}

				// CSV: lines add up to their subtotals, subtotals to the total.
				lineSums, subtotals, total := map[string]tally{}, map[string]tally{}, map[string]tally{}
				var lineTotal = map[string]tally{}
				nTotal := 0
				for _, r := range csvRecords(t, write(CSV)) {
					used, booked, amount := int64Cell(t, r["gpu_seconds"]), int64Cell(t, r["booked_gpu_seconds"]), rat(t, r["amount"])
					if r["row_type"] == RowLine && used != 0 && booked != 0 {
						t.Errorf("a line with used and booked GPU-seconds: %v", r)
					}
					switch r["row_type"] {
					case RowLine:
						add(lineSums, r["account"], used, booked, amount)
						add(lineTotal, "", used, booked, amount)
					case RowSubtotal:
						if _, dup := subtotals[r["account"]]; dup {
							t.Errorf("two subtotals of %s", r["account"])
						}
						add(subtotals, r["account"], used, booked, amount)
						add(total, "subtotals", used, booked, amount)
					case RowTotal:
						nTotal++
						add(total, "total", used, booked, amount)
					default:
						t.Errorf("row_type %q", r["row_type"])
					}
					if has := r["has_tenant"] == "true"; r["row_type"] != RowTotal && has != (r["tenant"] != NoTenant) {
						t.Errorf("has_tenant %q on a row of tenant %q", r["has_tenant"], r["tenant"])
					}
					if r["account"] == "acme" && (r["cost_center"] != "CC-4711" || r["organization"] != "Acme" || r["tenant_description"] != "'=Acme, Inc. research") {
						t.Errorf("acme's profile missing: %v", r)
					}
					if noUntenanted && r["has_tenant"] == "false" {
						t.Errorf("an untenanted row with NoUntenanted: %v", r)
					}
				}
				if nTotal != 1 || len(subtotals) != len(lineSums) {
					t.Fatalf("%d total rows, %d subtotals for %d accounts", nTotal, len(subtotals), len(lineSums))
				}
				for acct, want := range lineSums {
					if got := subtotals[acct]; !got.equal(want) {
						t.Errorf("CSV subtotal of %s: %v; its lines add up to %v", acct, got, want)
					}
				}
				if !total["total"].equal(total["subtotals"]) || !total["total"].equal(lineTotal[""]) {
					t.Errorf("CSV total %v; subtotals add up to %v, lines to %v", total["total"], total["subtotals"], lineTotal[""])
				}
				if total["total"].booked == 0 || total["total"].used == 0 {
					t.Fatalf("the ledger has no booked or no used GPU-seconds: %v", total["total"])
				}
				if _, ok := subtotals["orphan"]; ok == noUntenanted {
					t.Errorf("untenanted account orphan in the CSV: %v, want %v", ok, !noUntenanted)
				}

				// JSON: tenant totals as the CSV's subtotals, to the cent.
				var v struct {
					Summary []struct {
						Account          string `json:"account"`
						GPUSeconds       int64  `json:"gpuSeconds"`
						BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
						Amount           string `json:"amount"`
					} `json:"summary"`
					Tenants []struct {
						Account          string `json:"account"`
						CostCenter       string `json:"costCenter"`
						GPUSeconds       int64  `json:"gpuSeconds"`
						BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
						Amount           string `json:"amount"`
					} `json:"tenants"`
					Total struct {
						GPUSeconds       int64  `json:"gpuSeconds"`
						BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
						Amount           string `json:"amount"`
					} `json:"total"`
				}
				if err := json.Unmarshal(write(JSON), &v); err != nil {
					t.Fatal(err)
				}
				jsonRows, jsonTenants := map[string]tally{}, map[string]tally{}
				for _, r := range v.Summary {
					add(jsonRows, r.Account, r.GPUSeconds, r.BookedGPUSeconds, rat(t, r.Amount))
				}
				for _, tt := range v.Tenants {
					add(jsonTenants, tt.Account, tt.GPUSeconds, tt.BookedGPUSeconds, rat(t, tt.Amount))
					if tt.Account == "acme" && tt.CostCenter != "CC-4711" {
						t.Errorf("JSON acme cost centre %q", tt.CostCenter)
					}
				}
				jt := tally{v.Total.GPUSeconds, v.Total.BookedGPUSeconds, rat(t, v.Total.Amount)}
				if !jt.equal(total["total"]) {
					t.Errorf("JSON total %v, CSV total %v", jt, total["total"])
				}

				// FOCUS: per SubAccountId sums as the CSV's subtotals.
				focus := map[string]tally{}
				for _, r := range csvRecords(t, write(FOCUS)) {
					add(focus, r["SubAccountId"], int64Cell(t, r["x_GpuSeconds"]), int64Cell(t, r["x_BookedGpuSeconds"]), rat(t, r["BilledCost"]))
					if r["SubAccountId"] == "acme" && r["x_CostCenter"] != "CC-4711" {
						t.Errorf("FOCUS acme row without its cost centre: %v", r)
					}
				}
				for _, f := range []struct {
					name string
					got  map[string]tally
				}{{"JSON summary rows", jsonRows}, {"JSON tenants", jsonTenants}, {"FOCUS", focus}} {
					if len(f.got) != len(subtotals) {
						t.Errorf("%s: %d accounts, CSV %d", f.name, len(f.got), len(subtotals))
					}
					for acct, want := range subtotals {
						if got := f.got[acct]; got.amount == nil || !got.equal(want) {
							t.Errorf("%s of %s: %v; CSV subtotal %v", f.name, acct, got, want)
						}
					}
				}
			})
		}
	}
}
