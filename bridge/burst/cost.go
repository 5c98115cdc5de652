package burst

import (
	"math"
	"math/big"
	"time"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Rates are the on-demand prices per GPU-hour per GPU type (a MIG profile
// has its own, weighted, rate), as the rate card's pricing.Price (in
// billionths of the currency, so that a weighted rate such as h100 x 1/7
// loses nothing), the currency (the rate card's ISO code) and the number
// of digits of its minor unit, in which budgets, spend and estimates are
// counted.
type Rates struct {
	PerGPUHour map[string]pricing.Price
	Currency   string
	Minor      int
}

// Unit is the currency the rates' amounts are counted in.
func (r Rates) Unit() money.Currency { return money.Currency{Code: r.Currency, Minor: r.Minor} }

// Cost is what count GPUs at perHour (a pricing.Price: billionths of the
// currency per GPU-hour) cost for d, in minor units with minor digits,
// rounded up: ceil(count x seconds x perHour x 10^minor / (3600 x
// 10^pricing.PriceScale)). A started
// second counts as a second. A result beyond int64 saturates at
// math.MaxInt64, which no budget can hold.
func Cost(count int64, d time.Duration, perHour pricing.Price, minor int) int64 {
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++
	}
	if count <= 0 || secs <= 0 || perHour <= 0 {
		return 0
	}
	n := new(big.Int).Mul(big.NewInt(count), big.NewInt(secs))
	n.Mul(n, big.NewInt(int64(perHour)))
	n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(minor)), nil))
	den := new(big.Int).Mul(big.NewInt(3600), new(big.Int).Exp(big.NewInt(10), big.NewInt(pricing.PriceScale), nil))
	q, r := new(big.Int).QuoRem(n, den, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// Estimate is the cost of r for d at rates; ok is false when a type of r has
// no rate (the caller refuses rather than price it at zero; missing names
// it). Untyped GPUs have no rate.
func Estimate(r Request, d time.Duration, rates Rates) (cost int64, missing string, ok bool) {
	for _, t := range r.Types() {
		rate, found := rates.PerGPUHour[t]
		if !found {
			return 0, t, false
		}
		cost = addSat(cost, Cost(r[t], d, rate, rates.Minor))
	}
	if r[""] > 0 {
		return 0, "gpu (untyped)", false
	}
	return cost, "", true
}

// addSat adds non-negative amounts, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
