package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// bookingLines are booking 7 of acme (2 h100 for 10 h in November, charged
// at the booked rate) with one job inside it (1 h100 for 3 h, rate 0), and
// a correction of booking 8's October charge booked in November.
func bookingLines() []meter.Line {
	charge := line("acme", 0, "2026-11", meter.Booked, "h100", 2, "2026-11-10 00:00:00", "2026-11-10 10:00:00", 0, "2026-11", true)
	charge.Run, charge.User, charge.Charge, charge.Booking = meter.RunKey{Cluster: "testbed"}, "", true, 7
	inside := line("acme", 30, "2026-11", meter.Booked, "h100", 1, "2026-11-10 01:00:00", "2026-11-10 04:00:00", 0, "2026-11", true)
	inside.Booking = 7
	corr := line("acme", 0, "2026-10", meter.Booked, "h100", 1, "2026-10-30 00:00:00", "2026-10-30 00:00:00", 1, "2026-11", true)
	corr.Run, corr.User, corr.Charge, corr.Booking, corr.GPUSeconds = meter.RunKey{Cluster: "testbed"}, "", true, 8, -3600
	return []meter.Line{charge, inside, corr}
}

func bookingMeta(t testing.TB) Meta {
	m := meta(t)
	var err error
	if m.Card, err = m.Card.WithRate(pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: 1_500_000_000, From: m.Card.Rates[0].From}); err != nil {
		t.Fatal(err)
	}
	return m
}

// A booking's charge is its own line in every export, priced at the booked
// rate; the use inside it costs 0; the totals count used GPU-seconds.
func TestBookingLinesInExports(t *testing.T) {
	ctx := context.Background()
	m := bookingMeta(t)
	src := source(bookingLines(), 1)
	s, err := Summarize(ctx, m, src, false)
	if err != nil {
		t.Fatal(err)
	}
	var charge, inside *Row
	for i, r := range s.Rows {
		switch {
		case r.Kind == meter.KindBooking && r.Booking == 7:
			charge = &s.Rows[i]
		case r.Tier == meter.Booked && r.Booking == 7:
			inside = &s.Rows[i]
		}
	}
	if charge == nil || charge.GPUSeconds != 20*3600 || charge.Amount.String() != "30.00" {
		t.Fatalf("charge row %+v, want 20 GPU-hours at 1.50 = 30.00", charge)
	}
	if inside == nil || inside.GPUSeconds != 3*3600 || inside.Amount.Units() != 0 || inside.Basis != pricing.InsideBookingBasis {
		t.Fatalf("inside row %+v, want 3 GPU-hours at 0", inside)
	}
	if s.GPUSeconds != 3*3600 || s.Amount.String() != "28.50" {
		t.Errorf("total %d GPU-seconds %s, want 10800 (used) and 28.50 (30.00 - 1.50)", s.GPUSeconds, s.Amount)
	}
	us := s.Utilization()
	if len(us) != 2 || us[0].Booking != 7 || us[0].Booked != 20*3600 || us[0].Used != 3*3600 || us[0].Idle() != 17*3600 || us[0].Percent() != 1500 {
		t.Errorf("utilization %+v", us)
	}
	for _, f := range []Format{CSV, JSON, FOCUS} {
		for _, d := range []bool{false, true} {
			var b bytes.Buffer
			if err := Write(ctx, &b, m, src, Options{Format: f, Detail: d}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			switch f {
			case CSV, FOCUS:
				rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				col := map[string]int{}
				for i, h := range rows[0] {
					col[h] = i
				}
				bk := map[Format]string{CSV: "booking", FOCUS: "x_Booking"}[f]
				found := false
				for _, r := range rows[1:] {
					if r[col[bk]] != "7" {
						continue
					}
					if f == FOCUS && r[col["ChargeCategory"]] == "Purchase" {
						found = r[col["BilledCost"]] == "30.00" && r[col["CommitmentDiscountId"]] == "testbed/booking/7" && r[col["ChargeFrequency"]] == "One-Time"
					}
					if f == CSV && r[col["kind"]] == "booking" {
						found = r[col["amount"]] == "30.00"
					}
				}
				if !found {
					t.Errorf("%s detail=%v: no booking 7 charge line of 30.00:\n%s", f, d, out)
				}
			case JSON:
				var v struct {
					Summary []struct {
						Kind    string `json:"kind"`
						Booking int64  `json:"booking"`
						Amount  string `json:"amount"`
					} `json:"summary"`
					Lines []struct {
						Kind    string `json:"kind"`
						Booking int64  `json:"booking"`
						JobID   uint32 `json:"jobId"`
					} `json:"lines"`
				}
				if err := json.Unmarshal(b.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				found := false
				for _, r := range v.Summary {
					found = found || r.Kind == "booking" && r.Booking == 7 && r.Amount == "30.00"
				}
				for _, l := range v.Lines {
					if l.Kind == "booking" && l.JobID != 0 {
						t.Errorf("a charge line with a job id: %+v", l)
					}
				}
				if !found {
					t.Errorf("json detail=%v: no booking 7 charge:\n%s", d, out)
				}
			}
		}
	}
}

// A booking charge without a booked rate fails the export, never 0; a
// rate for both usage tiers does not price it.
func TestBookingWithoutBookedRateRefused(t *testing.T) {
	_, err := Summarize(context.Background(), meta(t), source(bookingLines(), 1), false)
	var mre *pricing.MissingRatesError
	if err == nil || !strings.Contains(err.Error(), "booked") {
		t.Fatalf("err %v, want a missing booked rate", err)
	}
	_ = mre
}

// TestUtilizationNeverNegative: use inside a booking whose charge is not
// written yet shows "pending" (JSON null), not a negative idle; a
// correction that leaves less booked than used shows 0 idle.
func TestUtilizationNeverNegative(t *testing.T) {
	ctx := context.Background()
	m := bookingMeta(t)
	ls := bookingLines()
	inside := ls[1] // booking 7's use, its charge (ls[0]) not written yet
	more := inside
	more.Booking, more.Run.JobID = 8, 31 // booking 8: only a -1 h correction
	s, err := Summarize(ctx, m, source([]meter.Line{inside, more, ls[2]}, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	us := s.Utilization()
	if len(us) != 2 {
		t.Fatalf("utilization %+v, want bookings 7 and 8", us)
	}
	for _, u := range us {
		if u.Idle() < 0 {
			t.Errorf("booking %d: idle %d < 0 (booked %d, used %d)", u.Booking, u.Idle(), u.Booked, u.Used)
		}
	}
	if !us[0].Pending() || us[1].Pending() {
		t.Errorf("pending %v %v, want booking 7 (no charge) pending, 8 (a charge row) not", us[0].Pending(), us[1].Pending())
	}
	tb := UtilizationTable([]Summary{s})
	want := [][]string{
		{"2026-11", "acme", "acme", "7", "h100", "pending", "3.000000", "pending", "pending"},
		{"2026-11", "acme", "acme", "8", "h100", "-1.000000", "3.000000", "0.000000", "0.00%"},
	}
	if d := cmp.Diff(want, tb.Rows); d != "" {
		t.Errorf("utilization table (-want +got)\n%s", d)
	}
}
