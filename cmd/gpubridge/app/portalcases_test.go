package app

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
)

// TestDailyUse: a line over midnight is split between its two days (GPUs ×
// seconds of each), lines of a type and day add up, booking charges are
// left out.
func TestDailyUse(t *testing.T) {
	day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	at := func(h int) int64 { return day.Add(time.Duration(h) * time.Hour).Unix() }
	ls := []meter.Line{
		{Usage: meter.Usage{Type: "h100", Count: 2, Start: at(22), End: at(25)}},              // 2 h on the 3rd, 1 h on the 4th
		{Usage: meter.Usage{Type: "h100", Count: 1, Start: at(1), End: at(2)}},                // 1 h on the 3rd
		{Usage: meter.Usage{Type: "a100", Count: 4, Start: at(30), End: at(31)}},              // the 4th
		{Usage: meter.Usage{Type: "h100", Count: 8, Start: at(0), End: at(24)}, Charge: true}, // a booking charge
	}
	lines := func(ctx context.Context, _ bool, fn func(meter.Line) error) error {
		for _, l := range ls {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
	got, err := dailyUse(context.Background(), lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.DayUse{
		{Day: day, Type: "h100", GPUSeconds: 2*2*3600 + 3600},
		{Day: day.AddDate(0, 0, 1), Type: "h100", GPUSeconds: 2 * 3600},
		{Day: day.AddDate(0, 0, 1), Type: "a100", GPUSeconds: 4 * 3600},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("daily use (-want +got):\n%s", d)
	}
}
