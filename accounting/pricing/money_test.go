package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/money"
)

func TestParsePrice(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Price
		wantStr string
		wantErr bool
	}{
		"two decimals":  {in: "2.50", want: 2_500_000_000, wantStr: "2.50"},
		"integer":       {in: "4", want: 4_000_000_000, wantStr: "4.00"},
		"nine decimals": {in: "0.357142857", want: 357_142_857, wantStr: "0.357142857"},
		"leading dot":   {in: ".5", want: 500_000_000, wantStr: "0.50"},
		"trailing dot":  {in: "3.", want: 3_000_000_000, wantStr: "3.00"},
		"zero":          {in: "0", want: 0, wantStr: "0.00"},
		"ten decimals":  {in: "0.1234567891", wantErr: true},
		"negative":      {in: "-1", wantErr: true},
		"plus sign":     {in: "+1", wantErr: true},
		"exponent":      {in: "1e3", wantErr: true},
		"comma":         {in: "1,50", wantErr: true},
		"empty":         {in: "", wantErr: true},
		"dot only":      {in: ".", wantErr: true},
		"two dots":      {in: "1.2.3", wantErr: true},
		"too large":     {in: "10000000000", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePrice(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if got != tc.want || got.String() != tc.wantStr {
				t.Errorf("got %d (%s), want %d (%s)", got, got, tc.want, tc.wantStr)
			}
		})
	}
}

func TestAmountFormat(t *testing.T) {
	cases := map[string]struct {
		a     int64
		minor int
		want  string
	}{
		"cents":          {1234, 2, "12.34"},
		"negative cents": {-1234, 2, "-12.34"},
		"small":          {5, 2, "0.05"},
		"small negative": {-5, 2, "-0.05"},
		"zero":           {0, 2, "0.00"},
		"yen":            {1234, 0, "1234"},
		"fils":           {1234, 3, "1.234"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := money.New(tc.a, money.Currency{Code: "EUR", Minor: tc.minor}).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// refRound is an independent reference: exact rational, rounded half away
// from zero.
func refRound(b int64, a, c, d uint64, minor int) *big.Int {
	r := new(big.Rat).SetFrac(
		new(big.Int).Mul(new(big.Int).Mul(new(big.Int).Mul(big.NewInt(b), new(big.Int).SetUint64(a)), new(big.Int).SetUint64(c)), big.NewInt(pow10(minor))),
		new(big.Int).SetUint64(d))
	neg := r.Sign() < 0
	r.Abs(r)
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if neg {
		q.Neg(q)
	}
	return q
}

func TestMulDivRoundMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		b := rng.Int64N(1 << uint(rng.IntN(40)+1))
		if rng.IntN(4) == 0 {
			b = -b
		}
		a := uint64(rng.Int64N(20_000_000_000))
		c := uint64(1 + rng.IntN(8))
		d := uint64(3600*priceUnit) * uint64(1+rng.IntN(8))
		minor := rng.IntN(4)
		want := refRound(b, a, c, d, minor)
		got, err := mulDivRound(b, a, c, d, minor)
		if !want.IsInt64() {
			if err == nil {
				t.Fatalf("case %d: want overflow error", i)
			}
			continue
		}
		if err != nil || int64(got) != want.Int64() {
			t.Fatalf("case %d: mulDivRound(%d,%d,%d,%d,%d) = %d, %v; want %s", i, b, a, c, d, minor, got, err, want)
		}
	}
}

func TestMulDivRoundHalves(t *testing.T) {
	// 1 GPU-second at 18.00/h = 0.5 cent exactly: rounds away from zero.
	card := Card{Currency: "EUR"}
	q := Quote{PerHour: 18 * priceUnit, Num: 1, Den: 1}
	cases := map[string]struct {
		sec  int64
		want int64
	}{
		"half rounds up":            {1, 1},
		"minus half rounds down":    {-1, -1},
		"three halves":              {3, 2},
		"one hour":                  {3600, 1800},
		"reversal is exact inverse": {-3600, -1800},
		"zero":                      {0, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := card.Amount(q, tc.sec)
			if err != nil || got.Units() != tc.want {
				t.Errorf("got %d, %v; want %d", got.Units(), err, tc.want)
			}
		})
	}
}

func TestMulDivRoundOverflow(t *testing.T) {
	if _, err := mulDivRound(1<<62, 1<<62, 8, 1, 6); err == nil {
		t.Fatal("want an overflow error")
	}
}

// TestAmountsFollowTheCurrency: the same GPU time at the same price is
// counted in the card currency's minor unit: yen have none, dinars three.
func TestAmountsFollowTheCurrency(t *testing.T) {
	cases := map[string]struct {
		card  string
		price string
		sec   int64
		units int64
		str   string
	}{
		"EUR cents":           {card: "currency: EUR", price: "2.10", sec: 3600, units: 210, str: "2.10"},
		"JPY whole yen":       {card: "currency: JPY", price: "350", sec: 3600, units: 350, str: "350"},
		"JPY rounds to a yen": {card: "currency: JPY", price: "350", sec: 5, units: 0, str: "0"},
		"JPY a month":         {card: "currency: JPY", price: "350", sec: 8 * 30 * 86400, units: 2016000, str: "2016000"},
		"KWD fils":            {card: "currency: KWD", price: "0.650", sec: 3600, units: 650, str: "0.650"},
		"KWD rounds to a fil": {card: "currency: KWD", price: "0.650", sec: 10, units: 2, str: "0.002"},
		"KWD correction":      {card: "currency: KWD", price: "0.650", sec: -3600, units: -650, str: "-0.650"},
		"explicit minorUnits": {card: "currency: XAU\nminorUnits: 4", price: "0.0012", sec: 3600, units: 12, str: "0.0012"},
		"CLF four places":     {card: "currency: CLF", price: "0.0650", sec: 3600, units: 650, str: "0.0650"},
		"UYW four places":     {card: "currency: UYW", price: "1.2345", sec: 3600, units: 12345, str: "1.2345"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			card, err := ParseYAML([]byte("version: 1\n" + tc.card + "\nrates:\n  - {type: h100, perGPUHour: \"" + tc.price + "\", from: 2026-01-01}\n"))
			if err != nil {
				t.Fatal(err)
			}
			q, err := card.Quote("h100", "reserved", 1800000000)
			if err != nil {
				t.Fatal(err)
			}
			a, err := card.Amount(q, tc.sec)
			if err != nil {
				t.Fatal(err)
			}
			if a.Units() != tc.units || a.String() != tc.str || a.Currency() != card.Unit() {
				t.Errorf("got %d %s (%q), want %d (%q)", a.Units(), a.Currency(), a, tc.units, tc.str)
			}
		})
	}
}

func TestCurrencyMustBeKnown(t *testing.T) {
	for card, want := range map[string]string{
		"currency: QQQ": "currency: QQQ is not an ISO 4217 currency this gpubridge knows",
		"currency: XAU": "currency: XAU has no minor unit in ISO 4217",
		"currency: eur": `currency: "eur" is not an ISO 4217 currency code`,
	} {
		_, err := ParseYAML([]byte("version: 1\n" + card + "\nrates: []\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", card, err, want)
		}
	}
}

// TestNoOverflow: the largest price times a MIG weight, and the largest
// price times a long run, are exact or a clear error, never a wrapped
// number.
func TestNoOverflow(t *testing.T) {
	top, err := ParsePrice("1000000000")
	if err != nil || top != MaxPrice {
		t.Fatalf("ParsePrice(max) = %v, %v", top, err)
	}
	for _, s := range []string{"1000000000.000000001", "1000000001", "9000000000"} {
		if _, err := ParsePrice(s); err == nil || !strings.Contains(err.Error(), "at most 1000000000 per GPU-hour") {
			t.Errorf("ParsePrice(%s) err = %v", s, err)
		}
	}
	// 7/8 of the top price: PerHour × 7 does not fit 64 bits.
	q := Quote{PerHour: MaxPrice, Num: 7, Den: 8}
	want := new(big.Int).Mul(big.NewInt(int64(MaxPrice)), big.NewInt(7))
	want.Quo(want, big.NewInt(8))
	if got := q.UnitPrice(); int64(got) != want.Int64() {
		t.Errorf("UnitPrice = %d, want %s", got, want)
	}
	// An old-style price near int64's end (read from JSON) × 3/7.
	q = Quote{PerHour: 9_000_000_000 * priceUnit, Num: 3, Den: 7}
	if got := q.UnitPrice(); got != 3_857_142_857_142_857_143 {
		t.Errorf("UnitPrice = %d", got)
	}
	card := Card{Version: 1, Currency: "EUR"}
	// A year of 100 GPUs at the top price: 8.76e14 EUR fits.
	a, err := card.Amount(Quote{PerHour: MaxPrice, Num: 1, Den: 1, Type: "h100"}, 10_000*365*86400/100)
	if err != nil || a.String() != "876000000000000.00" {
		t.Errorf("a big bill = %v, %v", a, err)
	}
	// A year of a million GPUs (8.76e18 EUR) does not: an error naming the line.
	if _, err := card.Amount(Quote{PerHour: MaxPrice, Num: 1, Den: 1, Type: "h100", Basis: "h100"}, 1_000_000*365*86400); !errors.Is(err, money.ErrOverflow) || !strings.Contains(err.Error(), "GPU-seconds of h100") {
		t.Errorf("overflow err = %v", err)
	}
	bad := Card{Version: 1, Currency: "EUR", Rates: []Rate{{Type: "h100", PerGPUHour: MaxPrice + 1, From: DateOf(time.Unix(0, 0))}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "rates[0].perGPUHour") {
		t.Errorf("Validate of a price above the bound: %v", err)
	}
}

func oldPriceString(p Price) string {
	sign := ""
	v := int64(p)
	if v < 0 {
		sign, v = "-", -v
	}
	frac := fmt.Sprintf("%09d", v%priceUnit)
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, v/priceUnit, frac)
}

// TestPriceStringEqualsFmt: Price.String (without fmt) writes what the
// fmt formatting it replaced wrote, for every kind of value.
func TestPriceStringEqualsFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 6))
	vs := []Price{0, 1, -1, 10, 100_000_000, 2_500_000_000, 357142857, MaxPrice, math.MaxInt64, math.MinInt64, -2_500_000_000, 1_000_000_000}
	for range 100000 {
		v := Price(r.Int64() - r.Int64())
		switch r.IntN(3) {
		case 0:
			v = Price(r.Int64N(100) * 10_000_000 * int64(1+r.IntN(3)))
		case 1:
			v = Price(r.Int64N(int64(MaxPrice)))
		}
		vs = append(vs, v)
	}
	for _, v := range vs {
		if got, want := v.String(), oldPriceString(v); got != want {
			t.Fatalf("Price(%d).String() = %q, fmt gives %q", int64(v), got, want)
		}
	}
}
