package burst

import (
	"math"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/pricing"
)

const unit = 1_000_000_000 // one currency unit in rate scale

func TestCost(t *testing.T) {
	cases := map[string]struct {
		count   int64
		d       time.Duration
		perHour pricing.Price
		minor   int
		want    int64
	}{
		"one GPU-hour at 2.50":    {1, time.Hour, 2_500_000_000, 2, 250},
		"two GPUs half an hour":   {2, 30 * time.Minute, 2_500_000_000, 2, 250},
		"rounds up":               {1, time.Second, 2_500_000_000, 2, 1},
		"exact":                   {1, 36 * time.Second, 1 * unit, 2, 1},
		"started second counts":   {1, 1500 * time.Millisecond, 36 * unit, 2, 2},
		"MIG weight h100/7":       {7, time.Hour, 4 * unit / 7, 2, 400}, // 571428571 x 7 = 3.999999997 -> 400
		"zero minor digits (JPY)": {1, time.Hour, 500 * unit, 0, 500},
		"three minor digits":      {1, time.Hour, 1_234_500_000, 3, 1235},
		"zero rate":               {4, time.Hour, 0, 2, 0},
		"zero count":              {0, time.Hour, unit, 2, 0},
		"zero time":               {1, 0, unit, 2, 0},
		"large but exact":         {1_000_000, 1000 * time.Hour, 1_000_000 * unit, 2, 100_000_000_000_000_000},
		"saturates":               {1_000_000, 100_000 * time.Hour, math.MaxInt64, 2, math.MaxInt64},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Cost(tc.count, tc.d, tc.perHour, tc.minor); got != tc.want {
				t.Errorf("Cost(%d, %s, %d, %d) = %d, want %d", tc.count, tc.d, tc.perHour, tc.minor, got, tc.want)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	rates := Rates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit, "1g.10gb": 570_000_000}, Minor: 2}
	cases := map[string]struct {
		r       Request
		d       time.Duration
		want    int64
		missing string
		ok      bool
	}{
		"one type":     {Request{"h100": 2}, time.Hour, 800, "", true},
		"two types":    {Request{"h100": 1, "1g.10gb": 2}, time.Hour, 514, "", true},
		"missing rate": {Request{"a100": 1}, time.Hour, 0, "a100", false},
		"untyped":      {Request{"": 1}, time.Hour, 0, "gpu (untyped)", false},
		"nothing":      {Request{}, time.Hour, 0, "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, missing, ok := Estimate(tc.r, tc.d, rates)
			if got != tc.want || missing != tc.missing || ok != tc.ok {
				t.Errorf("Estimate = (%d, %q, %v), want (%d, %q, %v)", got, missing, ok, tc.want, tc.missing, tc.ok)
			}
		})
	}
}

func TestFormatMoney(t *testing.T) {
	cases := map[string]struct {
		m     int64
		minor int
		want  string
	}{
		"cents":    {1234, 2, "12.34"},
		"small":    {5, 2, "0.05"},
		"zero":     {0, 2, "0.00"},
		"negative": {-1234, 2, "-12.34"},
		"yen":      {500, 0, "500"},
		"dinar":    {1234, 3, "1.234"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := FormatMoney(tc.m, tc.minor); got != tc.want {
				t.Errorf("FormatMoney(%d, %d) = %q, want %q", tc.m, tc.minor, got, tc.want)
			}
		})
	}
}
