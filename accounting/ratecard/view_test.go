package ratecard

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/table"
)

func TestMessages(t *testing.T) {
	from, _ := pricing.ParseDate("2026-01-01")
	price, _ := pricing.ParsePrice("2.10")
	card := pricing.Card{Currency: "EUR", Rates: []pricing.Rate{{Type: "h100", PerGPUHour: price, From: from}}}
	for got, want := range map[string]string{
		RateAdded(pricing.Rate{Type: "h100", PerGPUHour: price, From: from}, "EUR"):                     "rate h100 (reserved and ondemand): 2.10 EUR per GPU-hour from 2026-01-01\n",
		RateAdded(pricing.Rate{Type: "h100", Tier: meter.Booked, PerGPUHour: price, From: from}, "EUR"): "rate h100 (booked): 2.10 EUR per GPU-hour from 2026-01-01\n",
		Loaded(card, true):                         "rate card loaded: EUR, 1 rates, 0 GPU types\n",
		Loaded(card, false):                        "rate card unchanged\n",
		LoadPrompt(card):                           " Replacing the rate card: EUR, 1 rates, 0 GPU types.",
		DeletePrompt("h100", meter.OnDemand, from): ` Removing the rate of h100 (tier "ondemand") from 2026-01-01.`,
		GPUTypeAdded(pricing.GPUType{Name: "1g.10gb", Parent: "h100"}): "GPU type 1g.10gb: a MIG profile of h100\n",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestViews(t *testing.T) {
	card := pricing.Card{Currency: "EUR"}
	if ts, note := Views(card, time.Now(), table.Options{}); ts != nil || note != "" {
		t.Errorf("text: %v %q, want the YAML document", ts, note)
	}
	if ts, note := Views(card, time.Now(), table.Options{JSON: true}); len(ts) != 1 || ts[0].Raw == nil || note != "" {
		t.Errorf("--json: %v %q, want the card", ts, note)
	}
	if ts, note := Views(card, time.Now(), table.Options{Parsable: true}); len(ts) != 1 || ts[0].Raw != nil || !strings.Contains(note, "the rates table") {
		t.Errorf("-P: %v %q, want the rates table and a note", ts, note)
	}
}
