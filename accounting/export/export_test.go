package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/golden"
)

func ts(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func per(s string) meter.Period {
	p, err := meter.ParsePeriod(s)
	if err != nil {
		panic(err)
	}
	return p
}

func card(t testing.TB) pricing.Card {
	c, err := pricing.ParseYAML([]byte(`
version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
  - {name: 3g.40gb, parent: h100}
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2026-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2026-01-01}
  - {type: h100, tier: reserved, perGPUHour: "2.00", from: 2026-11-15}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type labels map[string]string

func (l labels) Tenant(a string) (string, bool) { t, ok := l[a]; return t, ok }

func line(acct string, job uint32, period string, tier meter.Tier, typ string, count int64, start, end string, rev int, booked string, final bool) meter.Line {
	s, e := ts(start), ts(end)
	return meter.Line{
		Usage: meter.Usage{Run: meter.RunKey{Cluster: "testbed", JobID: job, Submit: s - 60}, Period: per(period), Tier: tier, Type: typ,
			Count: count, Start: s, End: e, GPUSeconds: count * (e - s), Final: final},
		Account: acct, User: "alice", Revision: rev, Booked: per(booked),
	}
}

// fixture is a November with: reserved h100 before and after a rate change,
// on-demand use, MIG slices priced from their parent, an adjustment for
// October, a correction revision, an accrual of a running job and an
// account without a tenant.
func fixture() []meter.Line {
	corr := line("acme", 12, "2026-11", meter.Reserved, "h100", 1, "2026-11-03 10:00:00", "2026-11-03 10:30:00", 1, "2026-11", true)
	corr.GPUSeconds = -1800
	return []meter.Line{
		line("acme", 10, "2026-11", meter.Reserved, "h100", 2, "2026-11-02 10:00:00", "2026-11-02 11:00:00", 0, "2026-11", true),
		line("acme", 11, "2026-11", meter.Reserved, "h100", 1, "2026-11-20 10:00:00", "2026-11-20 10:00:09", 0, "2026-11", true),
		line("acme", 12, "2026-11", meter.Reserved, "h100", 1, "2026-11-03 10:00:00", "2026-11-03 11:00:00", 0, "2026-11", true),
		corr,
		line("acme", 13, "2026-11", meter.OnDemand, "h100", 1, "2026-11-04 00:00:00", "2026-11-04 01:00:00", 0, "2026-11", true),
		line("acme", 14, "2026-11", meter.Reserved, "1g.10gb", 1, "2026-11-05 00:00:00", "2026-11-05 01:00:00", 0, "2026-11", true),
		line("acme", 15, "2026-10", meter.Reserved, "h100", 1, "2026-10-30 00:00:00", "2026-10-30 00:10:00", 0, "2026-11", true),
		line("beta", 20, "2026-11", meter.Reserved, "3g.40gb", 2, "2026-11-06 00:00:00", "2026-11-06 00:00:50", 0, "2026-11", true),
		line("beta", 21, "2026-11", meter.OnDemand, "h100", 4, "2026-11-28 00:00:00", "2026-11-30 12:00:00", 0, "2026-11", false),
		line("orphan", 30, "2026-11", meter.Reserved, "h100", 1, "2026-11-07 00:00:00", "2026-11-07 00:01:00", 0, "2026-11", true),
	}
}

// source serves lines in a random order unless asked for the export order.
// The unordered (summary) pass gets only the fields Lines promises it
// (ledger.DB.SummaryLines reads no others): a summary that used another
// one would change.
func source(ls []meter.Line, seed uint64) Lines {
	return func(_ context.Context, ordered bool, fn func(meter.Line) error) error {
		cp := slices.Clone(ls)
		if !ordered {
			for i, l := range cp {
				s := meter.Line{Account: l.Account, Booked: l.Booked, Charge: l.Charge}
				s.Period, s.Tier, s.Type, s.Start, s.GPUSeconds, s.Final, s.Booking = l.Period, l.Tier, l.Type, l.Start, l.GPUSeconds, l.Final, l.Booking
				cp[i] = s
			}
		}
		rand.New(rand.NewPCG(seed, 9)).Shuffle(len(cp), func(i, j int) { cp[i], cp[j] = cp[j], cp[i] })
		if ordered {
			slices.SortFunc(cp, func(a, b meter.Line) int {
				return strings.Compare(key(a), key(b))
			})
		}
		for _, l := range cp {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
}

func key(l meter.Line) string {
	return strings.Join([]string{strings.Repeat("0", 10-len(itoa(l.Run.JobID))) + itoa(l.Run.JobID), l.Period.String(), string(l.Tier), l.Type, itoa(uint32(l.Revision))}, "|")
}

func itoa(v uint32) string { return fmtU(v) }

func fmtU(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// profiles are the fixture's tenant profiles: acme has all three fields
// (its description needs quoting and neutralizing), beta none.
type profiles map[string]Profile

func (p profiles) Profile(a string) Profile { return p[a] }

func meta(t testing.TB) Meta {
	return Meta{Cluster: "testbed", Period: per("2026-11"), Card: card(t), Tenants: labels{"acme": "acme", "beta": "beta"},
		Profiles: profiles{"acme": {Description: "=Acme, Inc. research", Organization: "Acme", CostCenter: "CC-4711"}, "orphan": {CostCenter: "never shown"}}}
}

func TestGolden(t *testing.T) {
	for _, f := range []Format{CSV, JSON, FOCUS} {
		for _, d := range []bool{false, true} {
			name := string(f)
			if d {
				name += "-detail"
			}
			t.Run(name, func(t *testing.T) {
				var a, b bytes.Buffer
				if err := Write(context.Background(), &a, meta(t), source(fixture(), 1), Options{Format: f, Detail: d}); err != nil {
					t.Fatal(err)
				}
				if err := Write(context.Background(), &b, meta(t), source(fixture(), 2), Options{Format: f, Detail: d}); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Fatal("two exports of the same lines differ")
				}
				ext := map[Format]string{CSV: ".csv", JSON: ".json", FOCUS: ".focus.csv"}[f]
				var path string
				if d {
					path = filepath.Join("testdata", "2026-11-"+string(f)+"-detail"+ext)
				} else {
					path = filepath.Join("testdata", "2026-11-"+string(f)+ext)
				}
				golden.Check(t, path, a.String())
			})
		}
	}
}

func TestSummaryFigures(t *testing.T) {
	s, err := Summarize(context.Background(), meta(t), source(fixture(), 3), false)
	if err != nil {
		t.Fatal(err)
	}
	type fig struct {
		Tenant, Type, Tier, Kind, Usage, Rate, Amount string
		Sec                                           int64
	}
	var got []fig
	for _, r := range s.Rows {
		got = append(got, fig{r.Tenant, r.Type, string(r.Tier), string(r.Kind), r.Usage.String(), r.Rate.String(), r.Amount.String(), r.GPUSeconds})
	}
	want := []fig{
		// 3600 s of 1g.10gb at 2.10/7 = 0.30
		{"acme", "1g.10gb", "reserved", "usage", "2026-11", "0.30", "0.30", 3600},
		// 2×3600 (4.20) + 3600−1800 (2.10 − 1.05): 7.35; rate 2.10
		{"acme", "h100", "ondemand", "usage", "2026-11", "3.50", "3.50", 3600},
		{"acme", "h100", "reserved", "usage", "2026-11", "2.00", "0.01", 9},
		{"acme", "h100", "reserved", "usage", "2026-11", "2.10", "5.25", 9000},
		{"acme", "h100", "reserved", "adjustment", "2026-10", "2.10", "0.35", 600},
		{"beta", "3g.40gb", "reserved", "usage", "2026-11", "0.90", "0.03", 100},
		{"beta", "h100", "ondemand", "accrual", "2026-11", "3.50", "840.00", 4 * 216000},
		{NoTenant, "h100", "reserved", "usage", "2026-11", "2.10", "0.04", 60},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if s.Amount.String() != "849.48" {
		t.Errorf("total %s, want 849.48", s.Amount.String())
	}
}

// TestTotalsEqualSumOfLines is the invariant: for random lines, every
// total is the sum of independently priced lines, and GPU-seconds add up.
func TestTotalsEqualSumOfLines(t *testing.T) {
	c := card(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var ls []meter.Line
	for i := range 5000 {
		typ := []string{"h100", "1g.10gb", "3g.40gb"}[rng.IntN(3)]
		tier := meter.Tiers[rng.IntN(2)]
		start := ts("2026-11-01 00:00:00") + rng.Int64N(29*86400)
		l := line([]string{"acme", "beta", "x"}[rng.IntN(3)], uint32(i), "2026-11", tier, typ, 1+rng.Int64N(4),
			time.Unix(start, 0).UTC().Format(time.DateTime), time.Unix(start+rng.Int64N(86400), 0).UTC().Format(time.DateTime), 0, "2026-11", true)
		if rng.IntN(10) == 0 {
			l.GPUSeconds = -l.GPUSeconds
			l.Revision = 1
		}
		ls = append(ls, l)
	}
	var want int64
	var sec int64
	for _, l := range ls {
		_, a, err := c.PriceLine(l)
		if err != nil {
			t.Fatal(err)
		}
		want += a.Units()
		sec += l.GPUSeconds
	}
	s, err := Summarize(context.Background(), meta(t), source(ls, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	var rowSum int64
	var rowSec int64
	for _, r := range s.Rows {
		rowSum += r.Amount.Units()
		rowSec += r.GPUSeconds
	}
	var tenSum int64
	for _, tt := range s.Tenants() {
		tenSum += tt.Amount.Units()
	}
	if s.Amount.Units() != want || rowSum != want || tenSum != want || s.GPUSeconds != sec || rowSec != sec {
		t.Errorf("total %d rows %d tenants %d, want %d; seconds %d rows %d, want %d", s.Amount.Units(), rowSum, tenSum, want, s.GPUSeconds, rowSec, sec)
	}
}

func TestMissingRateFailsBeforeWriting(t *testing.T) {
	ls := append(fixture(), line("acme", 40, "2026-11", meter.Reserved, "gpu", 1, "2026-11-08 00:00:00", "2026-11-08 00:00:10", 0, "2026-11", true),
		line("acme", 41, "2026-11", meter.OnDemand, "b200", 1, "2026-11-08 00:00:00", "2026-11-08 00:00:20", 0, "2026-11", true))
	for _, f := range []Format{CSV, JSON, FOCUS} {
		var b bytes.Buffer
		err := Write(context.Background(), &b, meta(t), source(ls, 1), Options{Format: f, Detail: true})
		var mre *pricing.MissingRatesError
		if !errors.As(err, &mre) || len(mre.Items) != 2 || mre.Items[0].Type != "b200" || mre.Items[1].Type != "gpu" {
			t.Fatalf("%s: err = %v, want both types listed", f, err)
		}
		if b.Len() != 0 {
			t.Errorf("%s: %d bytes written before the error", f, b.Len())
		}
	}
	s, err := Summarize(context.Background(), meta(t), source(ls, 1), true)
	if err != nil {
		t.Fatalf("allowMissing: %v", err)
	}
	n := 0
	for _, r := range s.Rows {
		if r.Rate < 0 {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d unpriced rows, want 2", n)
	}
}

var isoZ = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

func TestFOCUSShape(t *testing.T) {
	for _, d := range []bool{false, true} {
		var b bytes.Buffer
		if err := Write(context.Background(), &b, meta(t), source(fixture(), 1), Options{Format: FOCUS, Detail: d}); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, c := range recs[0] {
			col[c] = i
		}
		for _, r := range recs[1:] {
			if len(r) != len(focusColumns) {
				t.Fatalf("row has %d fields, want %d", len(r), len(focusColumns))
			}
			for _, c := range []string{"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"} {
				if !isoZ.MatchString(r[col[c]]) {
					t.Errorf("%s = %q, not YYYY-MM-DDTHH:mm:ssZ", c, r[col[c]])
				}
			}
			if cl := r[col["ChargeClass"]]; (cl == "Correction") != (r[col["x_Kind"]] == "adjustment") {
				t.Errorf("ChargeClass %q for kind %s", cl, r[col["x_Kind"]])
			}
			var tags map[string]string
			if err := json.Unmarshal([]byte(r[col["Tags"]]), &tags); err != nil {
				t.Errorf("Tags %q: %v", r[col["Tags"]], err)
			}
			for _, c := range []string{"BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "PricingQuantity", "ListUnitPrice"} {
				if !regexp.MustCompile(`^-?\d+(\.\d+)?$`).MatchString(r[col[c]]) {
					t.Errorf("%s = %q is not a FOCUS number", c, r[col[c]])
				}
			}
		}
	}
}

func TestGPUHours(t *testing.T) {
	for sec, want := range map[int64]string{0: "0.000000", 3600: "1.000000", 1: "0.000278", -1: "-0.000278", 5400: "1.500000", 7 * 3600: "7.000000"} {
		if got := GPUHours(sec); got != want {
			t.Errorf("GPUHours(%d) = %s, want %s", sec, got, want)
		}
	}
}
