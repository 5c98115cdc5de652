package money

import (
	"errors"
	"math"
	"testing"
)

var (
	eur = Currency{"EUR", 2}
	jpy = Currency{"JPY", 0}
	kwd = Currency{"KWD", 3}
)

func TestISO4217(t *testing.T) {
	// The exponents that differ from 2, and a few that do not.
	want := map[string]int{
		"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2,
		"JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "XAF": 0, "XOF": 0, "XPF": 0, "UGX": 0,
		"BIF": 0, "DJF": 0, "GNF": 0, "KMF": 0, "PYG": 0, "RWF": 0, "VUV": 0, "UYI": 0,
		"KWD": 3, "BHD": 3, "IQD": 3, "JOD": 3, "LYD": 3, "OMR": 3, "TND": 3,
		"CLF": 4, "UYW": 4,
	}
	for code, m := range want {
		c, ok := ISO(code)
		if !ok || c.Minor != m || c.Code != code {
			t.Errorf("ISO(%s) = %+v, %v; want minor %d", code, c, ok, m)
		}
	}
	n := 0
	for code, m := range iso4217 {
		if !codeRe.MatchString(code) {
			t.Errorf("bad code %q", code)
		}
		if _, listed := want[code]; !listed && m != 2 && m != -1 {
			t.Errorf("%s has minor %d: add it to this test if ISO 4217 says so", code, m)
		}
		if m >= 0 {
			n++
		}
	}
	if n < 150 {
		t.Errorf("only %d currencies with a minor unit", n)
	}
	for _, code := range []string{"XAU", "XDR", "XTS", "XXX", "QQQ", ""} {
		if _, ok := ISO(code); ok {
			t.Errorf("ISO(%q) has a minor unit", code)
		}
	}
}

func TestLookup(t *testing.T) {
	two, nine := 2, 9
	cases := map[string]struct {
		code    string
		minor   *int
		want    Currency
		wantErr string
	}{
		"iso":            {code: "KWD", want: kwd},
		"override":       {code: "XAU", minor: &two, want: Currency{"XAU", 2}},
		"no minor unit":  {code: "XAU", wantErr: "XAU has no minor unit in ISO 4217; give its minor units explicitly"},
		"unknown":        {code: "QQQ", wantErr: "QQQ is not an ISO 4217 currency this gpubridge knows"},
		"lower case":     {code: "eur", wantErr: `"eur" is not an ISO 4217 currency code`},
		"too many minor": {code: "EUR", minor: &nine, wantErr: "minor units 9: want 0 to 6"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Lookup(tc.code, tc.minor)
			if tc.wantErr != "" {
				if err == nil || !contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || (len(s) >= len(sub) && index(s, sub) >= 0) }

func index(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestParseAndString(t *testing.T) {
	cases := map[string]struct {
		in, want string
		wantErr  bool
	}{
		"two decimals":        {in: "2500.00", want: "2500.00"},
		"whole":               {in: "2500", want: "2500.00"},
		"one decimal":         {in: "2500.5", want: "2500.50"},
		"three decimals":      {in: "1.234", want: "1.234"},
		"trailing zeros":      {in: "2500.500000", want: "2500.50"},
		"six decimals":        {in: "0.000001", want: "0.000001"},
		"negative":            {in: "-0.5", want: "-0.50"},
		"seven decimals":      {in: "0.0000001", wantErr: true},
		"exponent":            {in: "1e3", wantErr: true},
		"plus":                {in: "+1", wantErr: true},
		"comma":               {in: "1,5", wantErr: true},
		"empty":               {in: "", wantErr: true},
		"dot only":            {in: ".", wantErr: true},
		"trailing dot":        {in: "1.", wantErr: true},
		"leading dot":         {in: ".5", wantErr: true},
		"beyond 64 bits":      {in: "92233720368547758.08", wantErr: true},
		"largest at scale 2":  {in: "92233720368547758.07", want: "92233720368547758.07"},
		"double minus":        {in: "--1", wantErr: true},
		"spaces are trimmed":  {in: " 7 ", want: "7.00"},
		"negative whole zero": {in: "-0", want: "0.00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := Parse(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Parse(%q) err = %v", tc.in, err)
			}
			if err == nil && a.String() != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.in, a, tc.want)
			}
		})
	}
}

func TestNegativeAmountsFormat(t *testing.T) {
	cases := []struct {
		a    Amount
		want string
	}{
		{New(-50, eur), "-0.50"},
		{New(-5, eur), "-0.05"},
		{New(-1234, eur), "-12.34"},
		{New(-7, jpy), "-7"},
		{New(-1, kwd), "-0.001"},
		{New(math.MinInt64, eur), "-92233720368547758.08"},
		{New(0, kwd), "0.000"},
		{New(1234, kwd), "1.234"},
	}
	for _, tc := range cases {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("%d minor units of %s = %q, want %q", tc.a.Units(), tc.a.Currency(), got, tc.want)
		}
	}
}

// TestBudgetMeetsCurrency: a budget written "2500.00" is 2500 yen and
// 2500 dinars (2,500,000 fils), never 250,000 yen or 250 dinars; one that
// cannot be counted in the currency is refused, never rounded.
func TestBudgetMeetsCurrency(t *testing.T) {
	cases := map[string]struct {
		budget  string
		cur     Currency
		units   int64
		str     string
		wantErr error
	}{
		"EUR":                   {budget: "2500.00", cur: eur, units: 250000, str: "2500.00"},
		"JPY":                   {budget: "2500.00", cur: jpy, units: 2500, str: "2500"},
		"KWD":                   {budget: "2500.00", cur: kwd, units: 2500000, str: "2500.000"},
		"KWD fils":              {budget: "1.234", cur: kwd, units: 1234, str: "1.234"},
		"yen with cents":        {budget: "2500.50", cur: jpy, wantErr: ErrPrecision},
		"euro with fils":        {budget: "1.234", cur: eur, wantErr: ErrPrecision},
		"overflow on the scale": {budget: "92233720368547758.07", cur: kwd, wantErr: ErrOverflow},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := MustParse(tc.budget).In(tc.cur)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.Units() != tc.units || got.String() != tc.str || got.Currency() != tc.cur {
				t.Fatalf("got %d %s (%q), %v; want %d", got.Units(), got.Currency(), got, err, tc.units)
			}
		})
	}
	if _, err := New(100, eur).In(jpy); !errors.Is(err, ErrCurrency) {
		t.Errorf("EUR as JPY: %v", err)
	}
}

func TestArithmetic(t *testing.T) {
	a, err := New(150, eur).Add(New(-200, eur))
	if err != nil || a != New(-50, eur) {
		t.Errorf("1.50 + -2.00 = %v, %v", a, err)
	}
	if z, err := (Amount{}).Add(New(5, jpy)); err != nil || z != New(5, jpy) {
		t.Errorf("zero + 5 JPY = %v, %v", z, err)
	}
	if _, err := New(1, eur).Add(New(1, jpy)); !errors.Is(err, ErrCurrency) {
		t.Errorf("EUR + JPY: %v", err)
	}
	if _, err := New(math.MaxInt64, eur).Add(New(1, eur)); !errors.Is(err, ErrOverflow) {
		t.Errorf("max + 1: %v", err)
	}
	if _, err := New(math.MinInt64, eur).Add(New(-1, eur)); !errors.Is(err, ErrOverflow) {
		t.Errorf("min - 1: %v", err)
	}
	if _, err := New(0, eur).Sub(New(math.MinInt64, eur)); !errors.Is(err, ErrOverflow) {
		t.Errorf("0 - min: %v", err)
	}
	if d, err := New(100, eur).Sub(New(250, eur)); err != nil || d.String() != "-1.50" {
		t.Errorf("1.00 - 2.50 = %v, %v", d, err)
	}
	if s, err := MustParse("1.5").Add(MustParse("0.001")); err != nil || s.String() != "1.501" {
		t.Errorf("currency-less 1.5 + 0.001 = %v, %v", s, err)
	}
	for _, tc := range []struct {
		a, b Amount
		want int
	}{
		{New(1, eur), New(2, eur), -1},
		{New(2, eur), New(2, eur), 0},
		{MustParse("2500.5"), MustParse("2500.499"), 1},
		{MustParse("1000000000"), MustParse("999999999.999999"), 1},
	} {
		if got, err := tc.a.Cmp(tc.b); err != nil || got != tc.want {
			t.Errorf("Cmp(%s, %s) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := New(1, eur).Cmp(MustParse("1")); !errors.Is(err, ErrCurrency) {
		t.Errorf("EUR vs a currency-less amount: %v", err)
	}
}

func TestJSON(t *testing.T) {
	var a Amount
	for in, want := range map[string]string{`"2500.50"`: "2500.50", `2500.5`: "2500.50", `"1.234"`: "1.234"} {
		if err := a.UnmarshalJSON([]byte(in)); err != nil || a.String() != want {
			t.Errorf("UnmarshalJSON(%s) = %s, %v", in, a, err)
		}
	}
	b, _ := MustParse("-0.5").MarshalJSON()
	if string(b) != `"-0.50"` {
		t.Errorf("MarshalJSON = %s", b)
	}
	if err := a.UnmarshalJSON([]byte(`"1e3"`)); err == nil {
		t.Error("1e3 accepted")
	}
}
