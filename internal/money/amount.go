package money

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Amount is an exact amount of money: a whole number of minor units of
// its currency (cents for EUR, yen for JPY, fils for KWD). An Amount
// without a currency (a budget written in a tenants file) is a decimal
// with the decimals it was written with (at least two, at most MaxMinor).
//
// The zero value is zero of no currency; it adds to an amount of any
// currency. Amounts compare equal with == when equal in value and
// currency (a currency-less amount is kept in its shortest form).
type Amount struct {
	units int64
	cur   Currency
}

var (
	// ErrOverflow is returned when a result does not fit 64 bits of minor
	// units (92 quadrillion EUR): a bug or a typo, never a bill.
	ErrOverflow = errors.New("amount overflows 64 bits")
	// ErrCurrency is returned when amounts of different currencies meet.
	ErrCurrency = errors.New("different currencies")
	// ErrPrecision is returned when an amount has more decimals than the
	// currency it must be counted in.
	ErrPrecision = errors.New("more decimals than the currency has")
)

// New returns units minor units of c.
func New(units int64, c Currency) Amount { return Amount{units: units, cur: c} }

// Zero returns nothing of c.
func Zero(c Currency) Amount { return Amount{cur: c} }

// Units returns the amount in minor units of its currency (for an amount
// without a currency: in units of its last decimal).
func (a Amount) Units() int64 { return a.units }

// Currency returns the amount's currency.
func (a Amount) Currency() Currency { return a.cur }

// Sign returns -1, 0 or +1.
func (a Amount) Sign() int {
	switch {
	case a.units < 0:
		return -1
	case a.units > 0:
		return 1
	}
	return 0
}

// Equal reports whether a and b are the same amount of the same currency.
func (a Amount) Equal(b Amount) bool { return a == b }

// Parse reads a decimal without a currency: "2500", "2500.5", "-0.25",
// "1.234" (at most MaxMinor decimals; no exponent, no sign but '-', no
// thousands separators).
func Parse(s string) (Amount, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(body, ".")
	if whole == "" || (hasDot && frac == "") || !digits(whole) || !digits(frac) {
		return Amount{}, fmt.Errorf("%q is not an amount such as 2500.00", s)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > MaxMinor {
		return Amount{}, fmt.Errorf("%q has more than %d decimals", s, MaxMinor)
	}
	scale := max(len(frac), 2)
	frac += strings.Repeat("0", scale-len(frac))
	w, err := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	if err != nil || w > (math.MaxInt64-f)/pow10(scale) {
		return Amount{}, fmt.Errorf("%q: %w", s, ErrOverflow)
	}
	u := w*pow10(scale) + f
	if neg {
		u = -u
	}
	return Amount{units: u, cur: Currency{Minor: scale}}, nil
}

// MustParse is Parse for constants; it panics on an error.
func MustParse(s string) Amount {
	a, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return a
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// String writes the amount as a decimal with its currency's minor digits:
// "-0.50", "2500", "1.234". A currency-less amount is written with its
// decimals (at least two). The code is not written.
func (a Amount) String() string {
	u := uint64(a.units)
	sign := ""
	if a.units < 0 {
		sign, u = "-", uint64(-(a.units+1))+1 // MinInt64 too
	}
	s := strconv.FormatUint(u, 10)
	m := a.cur.Minor
	if m <= 0 {
		return sign + s
	}
	if len(s) <= m {
		s = strings.Repeat("0", m-len(s)+1) + s
	}
	return sign + s[:len(s)-m] + "." + s[len(s)-m:]
}

// In returns a counted in c. An amount without a currency is converted
// exactly: 2500.00 is 2500 in JPY, 2500.000 in KWD; one with more
// decimals than c has (2500.50 in JPY) is refused with ErrPrecision, never
// rounded. An amount already in c is returned as it is; one in another
// currency is refused with ErrCurrency.
func (a Amount) In(c Currency) (Amount, error) {
	if a.cur == c {
		return a, nil
	}
	if a.cur.Code != "" && a.cur.Code != c.Code {
		return Amount{}, fmt.Errorf("%s %s as %s: %w", a, a.cur, c, ErrCurrency)
	}
	d := c.Minor - a.cur.Minor
	switch {
	case d >= 0:
		p := pow10(d)
		if a.units > math.MaxInt64/p || a.units < math.MinInt64/p {
			return Amount{}, fmt.Errorf("%s in %s: %w", a, c, ErrOverflow)
		}
		return Amount{units: a.units * p, cur: c}, nil
	default:
		p := pow10(-d)
		if a.units%p != 0 {
			fix := fmt.Sprintf("with at most %d decimals", c.Minor)
			if c.Minor == 0 {
				fix = "as a whole number"
			}
			return Amount{}, fmt.Errorf("%s in %s: %w (%d); write it %s", a, c, ErrPrecision, c.Minor, fix)
		}
		return Amount{units: a.units / p, cur: c}, nil
	}
}

// same brings a and b to one currency for arithmetic: the zero value takes
// the other's currency; currency-less amounts take the larger scale.
func same(a, b Amount) (Amount, Amount, error) {
	switch {
	case a.cur == b.cur:
		return a, b, nil
	case a == Amount{}:
		return Amount{cur: b.cur}, b, nil
	case b == Amount{}:
		return a, Amount{cur: a.cur}, nil
	case a.cur.Code == "" && b.cur.Code == "":
		if a.cur.Minor < b.cur.Minor {
			x, err := a.In(b.cur)
			return x, b, err
		}
		y, err := b.In(a.cur)
		return a, y, err
	}
	return a, b, fmt.Errorf("%s %s and %s %s: %w", a, a.cur, b, b.cur, ErrCurrency)
}

// Add returns a + b; both must be in one currency (or either the zero
// value).
func (a Amount) Add(b Amount) (Amount, error) {
	a, b, err := same(a, b)
	if err != nil {
		return Amount{}, err
	}
	s := a.units + b.units
	if (b.units > 0 && s < a.units) || (b.units < 0 && s > a.units) {
		return Amount{}, fmt.Errorf("%s + %s: %w", a, b, ErrOverflow)
	}
	return Amount{units: s, cur: a.cur}, nil
}

// Sub returns a - b; both must be in one currency.
func (a Amount) Sub(b Amount) (Amount, error) {
	if b.units == math.MinInt64 {
		return Amount{}, fmt.Errorf("%s - %s: %w", a, b, ErrOverflow)
	}
	return a.Add(Amount{units: -b.units, cur: b.cur})
}

// Cmp compares a and b (-1, 0, +1); both must be in one currency.
func (a Amount) Cmp(b Amount) (int, error) {
	if a.cur.Code == "" && b.cur.Code == "" && a.cur.Minor != b.cur.Minor {
		// Compare exactly, whatever the scales.
		x := new(big.Int).Mul(big.NewInt(a.units), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.cur.Minor)), nil))
		y := new(big.Int).Mul(big.NewInt(b.units), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(a.cur.Minor)), nil))
		return x.Cmp(y), nil
	}
	a, b, err := same(a, b)
	if err != nil {
		return 0, err
	}
	switch {
	case a.units < b.units:
		return -1, nil
	case a.units > b.units:
		return 1, nil
	}
	return 0, nil
}

// MarshalJSON writes the decimal as a JSON string ("2500.00"), so no
// reader turns it into a float.
func (a Amount) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// UnmarshalJSON reads a decimal string or a bare JSON number into an
// amount without a currency.
func (a *Amount) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}
