package pricing

import (
	"math/big"
	"math/rand/v2"
	"testing"
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
		a     Amount
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
			if got := tc.a.Format(tc.minor); got != tc.want {
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
		want Amount
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
			if err != nil || got != tc.want {
				t.Errorf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestMulDivRoundOverflow(t *testing.T) {
	if _, err := mulDivRound(1<<62, 1<<62, 8, 1, 6); err == nil {
		t.Fatal("want an overflow error")
	}
}
