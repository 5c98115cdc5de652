package view

import (
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestPolicy(t *testing.T) {
	day := reserve.Span(24 * time.Hour)
	got := Policy("bdacme", reserve.Policy{MaxGPUs: map[string]int{"h100": 1, "1g.10gb": 2}, MaxWindow: 14 * day, MaxHorizon: 90 * day})
	want := `Booking policy of tenant bdacme:
  maxGPUs:           1g.10gb=2,h100=1   (GPUs of a type booked at once)
  maxWindow:         14d   (the longest booking)
  minLead:           0s   (how far ahead a booking must start)
  maxHorizon:        90d   (how far ahead a booking may end)
  monthlySpendLimit: none
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := Policy("x", reserve.Policy{}); got != `Booking policy of tenant x:
  maxGPUs:           no limit (the pool)   (GPUs of a type booked at once)
  maxWindow:         no limit   (the longest booking)
  minLead:           0s   (how far ahead a booking must start)
  maxHorizon:        no limit   (how far ahead a booking may end)
  monthlySpendLimit: none
` {
		t.Errorf("zero policy:\n%s", got)
	}
}
