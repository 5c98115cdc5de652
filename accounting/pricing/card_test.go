package pricing

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

const exampleYAML = `
version: 1
currency: EUR
types:
  - name: 1g.10gb
    parent: h100
  - name: 3g.40gb
    parent: h100
  - name: a30-1g
    parent: a30
    slices: 1
    parentSlices: 4
rates:
  - type: h100
    tier: reserved
    perGPUHour: "2.10"
    from: 2026-01-01
  - type: h100
    tier: ondemand
    perGPUHour: 3.5
    from: 2026-01-01
  - type: h100
    perGPUHour: "2.80"
    from: 2027-01-01
  - type: 3g.40gb
    tier: ondemand
    perGPUHour: "1.00"
    from: 2026-06-01
  - type: a30
    perGPUHour: "1.00"
    from: 2026-01-01
`

func day(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func mustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestQuote(t *testing.T) {
	card, err := ParseYAML([]byte(exampleYAML))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		PerHour  string
		Num, Den int64
		Basis    string
		From     string
		Unit     string
	}
	cases := map[string]struct {
		typ     string
		tier    meter.Tier
		at      string
		want    want
		wantErr bool
	}{
		"own reserved rate":                      {"h100", meter.Reserved, "2026-11-03 10:00:00", want{"2.10", 1, 1, "h100", "2026-01-01", "2.10"}, false},
		"own ondemand rate (YAML number)":        {"h100", meter.OnDemand, "2026-11-03 10:00:00", want{"3.50", 1, 1, "h100", "2026-01-01", "3.50"}, false},
		"later rate for both tiers wins":         {"h100", meter.OnDemand, "2027-01-01 00:00:00", want{"2.80", 1, 1, "h100", "2027-01-01", "2.80"}, false},
		"one second before the new rate":         {"h100", meter.Reserved, "2026-12-31 23:59:59", want{"2.10", 1, 1, "h100", "2026-01-01", "2.10"}, false},
		"MIG from parent, 1/7":                   {"1g.10gb", meter.Reserved, "2026-11-03 10:00:00", want{"2.10", 1, 7, "h100 x 1/7", "2026-01-01", "0.30"}, false},
		"MIG from parent, 3/7":                   {"3g.40gb", meter.Reserved, "2026-11-03 10:00:00", want{"2.10", 3, 7, "h100 x 3/7", "2026-01-01", "0.90"}, false},
		"MIG own rate beats parent":              {"3g.40gb", meter.OnDemand, "2026-11-03 10:00:00", want{"1.00", 1, 1, "3g.40gb", "2026-06-01", "1.00"}, false},
		"MIG own rate not yet effective: parent": {"3g.40gb", meter.OnDemand, "2026-05-31 23:59:59", want{"3.50", 3, 7, "h100 x 3/7", "2026-01-01", "1.50"}, false},
		"MIG of a 4-slice GPU":                   {"a30-1g", meter.OnDemand, "2026-11-03 10:00:00", want{"1.00", 1, 4, "a30 x 1/4", "2026-01-01", "0.25"}, false},
		"before any rate":                        {"h100", meter.Reserved, "2025-12-31 23:59:59", want{}, true},
		"unknown type":                           {"b200", meter.Reserved, "2026-11-03 10:00:00", want{}, true},
		"untyped gpu":                            {meter.UntypedGPU, meter.Reserved, "2026-11-03 10:00:00", want{}, true},
		"MIG whose parent has no rate then":      {"1g.10gb", meter.Reserved, "2025-06-01 00:00:00", want{}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := card.Quote(tc.typ, tc.tier, day(tc.at))
			if tc.wantErr {
				if !errors.Is(err, ErrNoRate) {
					t.Fatalf("err = %v, want ErrNoRate", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{q.PerHour.String(), q.Num, q.Den, q.Basis, q.From.String(), q.UnitPrice().String()}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestAmount(t *testing.T) {
	card, err := ParseYAML([]byte(exampleYAML))
	if err != nil {
		t.Fatal(err)
	}
	at := day("2026-11-03 10:00:00")
	cases := map[string]struct {
		typ  string
		tier meter.Tier
		sec  int64
		want string
	}{
		"1 GPU-hour h100":                    {"h100", meter.Reserved, 3600, "2.10"},
		"1 GPU-second h100 (0.0583 cent)":    {"h100", meter.Reserved, 1, "0.00"},
		"9 GPU-seconds (0.525 cent) rounds":  {"h100", meter.Reserved, 9, "0.01"},
		"-9 GPU-seconds rounds away":         {"h100", meter.Reserved, -9, "-0.01"},
		"7 GPU-hours of 1g.10gb = 1 h100-h":  {"1g.10gb", meter.Reserved, 7 * 3600, "2.10"},
		"1 hour of 1g.10gb (exact 0.30)":     {"1g.10gb", meter.Reserved, 3600, "0.30"},
		"1 hour of 3g.40gb ondemand own":     {"3g.40gb", meter.OnDemand, 3600, "1.00"},
		"a month of 8 H100s":                 {"h100", meter.OnDemand, 8 * 30 * 86400, "20160.00"},
		"100 s of 1g.10gb = 0.8333 cent → 1": {"1g.10gb", meter.Reserved, 100, "0.01"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, err := card.Quote(tc.typ, tc.tier, at)
			if err != nil {
				t.Fatal(err)
			}
			a, err := card.Amount(q, tc.sec)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestValidateReportsEverything(t *testing.T) {
	minor := 9
	c := Card{
		Version: 2, Currency: "euro", MinorUnits: &minor,
		Types: []GPUType{
			{Name: "1g.10gb", Parent: "h100"},
			{Name: "1g.10gb", Parent: "h100"},
			{Name: "weird", Parent: "h100"},
			{Name: "h100", Slices: 2},
			{Name: "2g.20gb", Parent: "1g.10gb"},
			{Name: "self", Parent: "self", Slices: 1},
			{Name: "7g.80gb", Parent: "h100", Slices: 9},
		},
		Rates: []Rate{
			{Type: "h100", Tier: "gold", PerGPUHour: -1, From: mustDate("2026-01-01")},
			{Type: "", PerGPUHour: 1},
			{Type: "x", PerGPUHour: 1, From: mustDate("2026-01-01")},
			{Type: "x", PerGPUHour: 2, From: mustDate("2026-01-01")},
		},
	}
	err := c.Validate()
	var ve ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want ValidationError", err)
	}
	var fields []string
	for _, e := range ve {
		fields = append(fields, e.Field)
	}
	want := []string{"version", "currency", "minorUnits", "types[1].name", "types[2].slices", "types[3]",
		"types[4].parent", "types[5].parent", "types[6].slices",
		"rates[0].tier", "rates[0].perGPUHour", "rates[1].type", "rates[1].from", "rates[3]"}
	if d := cmp.Diff(want, fields); d != "" {
		t.Errorf("fields (-want +got)\n%s\n%v", d, err)
	}
}

func TestParseYAMLRejectsUnknownFields(t *testing.T) {
	_, err := ParseYAML([]byte("version: 1\ncurrency: EUR\nrates: []\nprice: 3\n"))
	if err == nil || !strings.Contains(err.Error(), "price") {
		t.Fatalf("err = %v, want unknown field error", err)
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	card, err := ParseYAML([]byte(exampleYAML))
	if err != nil {
		t.Fatal(err)
	}
	b, err := card.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseYAML(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if d := cmp.Diff(card, back, cmp.Comparer(func(a, b Date) bool { return a.Unix() == b.Unix() })); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if !strings.Contains(string(b), `perGPUHour: "3.50"`) {
		t.Errorf("prices must be written as strings:\n%s", b)
	}
}

func TestMinor(t *testing.T) {
	two := 2
	cases := map[string]struct {
		c    Card
		want int
	}{
		"EUR":           {Card{Currency: "EUR"}, 2},
		"JPY":           {Card{Currency: "JPY"}, 0},
		"KWD":           {Card{Currency: "KWD"}, 3},
		"explicit wins": {Card{Currency: "JPY", MinorUnits: &two}, 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.c.Minor(); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestWithRateAndType(t *testing.T) {
	card, err := ParseYAML([]byte(exampleYAML))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ParsePrice("2.20")
	c2, err := card.WithRate(Rate{Type: "h100", Tier: meter.Reserved, PerGPUHour: p, From: mustDate("2026-01-01")})
	if err != nil {
		t.Fatal(err)
	}
	if len(c2.Rates) != len(card.Rates) {
		t.Errorf("same key must replace: %d rates, want %d", len(c2.Rates), len(card.Rates))
	}
	q, _ := c2.Quote("h100", meter.Reserved, day("2026-11-01 00:00:00"))
	if q.PerHour != p {
		t.Errorf("got %s, want 2.20", q.PerHour)
	}
	q, _ = card.Quote("h100", meter.Reserved, day("2026-11-01 00:00:00"))
	if q.PerHour.String() != "2.10" {
		t.Errorf("the original card changed: %s", q.PerHour)
	}
	c3, found := c2.WithoutRate("h100", meter.Reserved, mustDate("2026-01-01"))
	if !found || len(c3.Rates) != len(card.Rates)-1 {
		t.Errorf("WithoutRate: found=%v, %d rates", found, len(c3.Rates))
	}
	if _, err := card.WithType(GPUType{Name: "2g.20gb", Parent: "h100"}); err != nil {
		t.Fatal(err)
	}
	if _, err := card.WithType(GPUType{Name: "odd", Parent: "h100"}); err == nil {
		t.Error("a profile without readable slices must be rejected")
	}
}

func TestSlicesFromName(t *testing.T) {
	cases := map[string]int{
		"1g.10gb": 1, "3g.40gb": 3, "7g.80gb": 7, "1g.20gb+me": 1,
		"nvidia_h100_80gb_hbm3_2g.20gb": 2, "h100": 0, "gpu": 0, "10g.10gb": 0, "x1g.10gb": 0,
	}
	for name, want := range cases {
		if got := SlicesFromName(name); got != want {
			t.Errorf("SlicesFromName(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestMissingTracker(t *testing.T) {
	var m MissingTracker
	if m.Err() != nil {
		t.Fatal("empty tracker must return nil")
	}
	m.Add("gpu", meter.Reserved, 10)
	m.Add("b200", meter.OnDemand, 5)
	m.Add("gpu", meter.Reserved, 20)
	err := m.Err()
	if !errors.Is(err, ErrNoRate) {
		t.Fatalf("want ErrNoRate, got %v", err)
	}
	want := "no rate for GPU type(s): b200 (ondemand: 5 GPU-seconds in 1 line(s)), gpu (reserved: 30 GPU-seconds in 2 line(s))"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %q", err)
	}
}

func TestParseYAMLRefusesNumbersYAMLWouldRound(t *testing.T) {
	const head = "version: 1\ncurrency: EUR\nrates:\n  - {type: h100, from: 2026-01-01, perGPUHour: "
	cases := map[string]struct {
		price string
		want  string // "" = accepted
	}{
		"short unquoted":        {price: `3.5`},
		"nine decimals":         {price: `0.357142857`},
		"quoted long":           {price: `"0.123456789"`},
		"long unquoted":         {price: `0.123456789012345678901`, want: `rates[0].perGPUHour: 0.123456789012345678901 has more than 15 significant digits, which YAML reads as a float and rounds; quote it: "0.123456789012345678901"`},
		"rounds to a short one": {price: `2.1000000000000001`, want: `rates[0].perGPUHour: 2.1000000000000001 has more than 15 significant digits`},
		"exponent":              {price: `1e3`, want: `rates[0].perGPUHour: 1e3 is not a plain decimal`},
		"infinity":              {price: `.inf`, want: `rates[0].perGPUHour: .inf is not a plain decimal`},
		"octal-looking":         {price: `010`, want: `rates[0].perGPUHour: 010 has a leading zero`},
		"huge integer":          {price: `123456789012345678901234`, want: `rates[0].perGPUHour: 123456789012345678901234 has more than 15 significant digits`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseYAML([]byte(head + tc.price + "}\n"))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ve ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a ValidationError with %q", err, tc.want)
			}
		})
	}
}

func TestParseYAMLRefusesLargeFiles(t *testing.T) {
	b := []byte("version: 1\ncurrency: EUR\nrates: []\n" + strings.Repeat("# padding\n", MaxCardBytes/10+1))
	_, err := ParseYAML(b)
	var ve ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "a rate card has at most 1048576") {
		t.Fatalf("err = %v", err)
	}
}
