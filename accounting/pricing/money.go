package pricing

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/internal/money"
)

// PriceScale is the number of fractional digits a Price holds.
const PriceScale = 9

const priceUnit = 1_000_000_000 // 10^PriceScale

// MaxPriceWhole bounds a price (per GPU-hour) at a billion of the
// currency: far above any real rate, and low enough that a price times a
// MIG weight's numerator (at most 8) fits 64 bits.
const MaxPriceWhole = 1_000_000_000

// MaxPrice is MaxPriceWhole as a Price.
const MaxPrice = Price(MaxPriceWhole * priceUnit)

// Price is an amount of currency per unit, in billionths of the currency
// (2.50 EUR = 2_500_000_000). It reads and writes as a decimal string.
type Price int64

// ParsePrice reads a non-negative decimal such as "2.50", "0.357142857" or "4".
func ParsePrice(s string) (Price, error) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || strings.HasPrefix(whole, "+") || strings.HasPrefix(whole, "-") {
		return 0, fmt.Errorf("price %q: want a non-negative decimal such as 2.50", s)
	}
	if len(frac) > PriceScale {
		return 0, fmt.Errorf("price %q: at most %d digits after the decimal point", s, PriceScale)
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, fmt.Errorf("price %q: want a non-negative decimal such as 2.50", s)
			}
		}
	}
	var w, f int64
	var err error
	if whole != "" {
		if w, err = strconv.ParseInt(whole, 10, 64); err != nil || w > MaxPriceWhole || (w == MaxPriceWhole && strings.Trim(frac, "0") != "") {
			return 0, fmt.Errorf("price %q: too large; at most %d per GPU-hour", s, MaxPriceWhole)
		}
	}
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", PriceScale-len(frac)), 10, 64)
	}
	return Price(w*priceUnit + f), nil
}

// String writes the price with at least two and at most nine fractional
// digits, without trailing zeros beyond the second: "2.50", "0.357142857".
func (p Price) String() string {
	var buf [32]byte
	return string(p.AppendText(buf[:0]))
}

// AppendText appends p.String() to b.
func (p Price) AppendText(b []byte) []byte {
	v := int64(p)
	if v == math.MinInt64 { // no positive counterpart: as fmt writes it
		return append(b, "-"+fmt.Sprintf("%d.%s", v/priceUnit, strings.TrimRight(fmt.Sprintf("%09d", v%priceUnit), "0"))...)
	}
	if v < 0 {
		b, v = append(b, '-'), -v
	}
	b = strconv.AppendInt(b, v/priceUnit, 10)
	b = append(b, '.')
	f := v % priceUnit
	var d [PriceScale]byte
	for i := PriceScale - 1; i >= 0; i-- {
		d[i] = byte('0' + f%10)
		f /= 10
	}
	n := PriceScale
	for n > 2 && d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// MarshalJSON writes the price as a JSON string, so no reader turns it into
// a float.
func (p Price) MarshalJSON() ([]byte, error) { return []byte(`"` + p.String() + `"`), nil }

// UnmarshalJSON accepts a string ("2.50") or a number (2.5). A YAML number
// reaches here through a float64 and is exact up to 15 significant digits;
// quote prices with more.
func (p *Price) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := ParsePrice(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// errOverflow is returned when an amount does not fit 64 bits (more than
// 92 quadrillion minor units: a ledger bug, not a bill).
var errOverflow = money.ErrOverflow

// mulDivRound returns round(a × b × c / d), half away from zero, for a, c ≥ 0
// (b may be negative: corrections), d > 0.
func mulDivRound(b int64, a, c uint64, d uint64, minor int) (int64, error) {
	neg := b < 0
	ub := uint64(b)
	if neg {
		ub = uint64(-b)
	}
	// n = |b| × a × c × 10^minor; try 128-bit, fall back to big.Int.
	hi1, lo1 := bits.Mul64(ub, a)
	if hi1 == 0 {
		m := c * uint64(pow10(minor))
		if c == 0 || m/c == uint64(pow10(minor)) {
			hi, lo := bits.Mul64(lo1, m)
			if hi < d {
				q, r := bits.Div64(hi, lo, d)
				if r >= d-r { // 2r >= d without overflow
					q++
				}
				if q <= 1<<63-1 {
					if neg {
						return -int64(q), nil
					}
					return int64(q), nil
				}
			}
		}
	}
	n := new(big.Int).SetUint64(ub)
	n.Mul(n, new(big.Int).SetUint64(a))
	n.Mul(n, new(big.Int).SetUint64(c))
	n.Mul(n, big.NewInt(pow10(minor)))
	q, r := new(big.Int).QuoRem(n, new(big.Int).SetUint64(d), new(big.Int))
	if r.Lsh(r, 1).Cmp(new(big.Int).SetUint64(d)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, errOverflow
	}
	if neg {
		return -q.Int64(), nil
	}
	return q.Int64(), nil
}

// Times returns p × q exactly, where q is a decimal of scale fractional
// digits held as an integer (2.5 with scale 1 is 25): the product has the
// price's nine fractional digits plus q's, written without trailing zeros
// beyond minDigits fractional digits ("0.14875", "4.20"). Nothing is
// rounded, so the result times nothing else is the product of the two
// decimals as written (FOCUS: ListCost = ListUnitPrice × PricingQuantity).
func (p Price) Times(q int64, scale, minDigits int) string {
	neg := (p < 0) != (q < 0) && p != 0 && q != 0
	up, uq := absU(int64(p)), absU(q)
	hi, lo := bits.Mul64(up, uq)
	var digits string
	if hi == 0 {
		digits = strconv.FormatUint(lo, 10)
	} else {
		n := new(big.Int).SetUint64(hi)
		n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(lo))
		digits = n.String()
	}
	frac := PriceScale + scale
	if len(digits) <= frac {
		digits = strings.Repeat("0", frac-len(digits)+1) + digits
	}
	whole, fr := digits[:len(digits)-frac], strings.TrimRight(digits[len(digits)-frac:], "0")
	for len(fr) < minDigits {
		fr += "0"
	}
	s := whole
	if fr != "" {
		s += "." + fr
	}
	if neg {
		s = "-" + s
	}
	return s
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1 // MinInt64 too
	}
	return uint64(v)
}
