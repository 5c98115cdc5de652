package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

func TestParseRate(t *testing.T) {
	r, err := ParseRate(map[string]string{"type": "h100", "price": "2.10", "from": "2026-01-01", "tier": "ondemand"})
	if err != nil || r.Type != "h100" || r.Tier != meter.OnDemand || r.PerGPUHour.String() != "2.10" || r.From.String() != "2026-01-01" {
		t.Fatalf("ParseRate = %+v, %v", r, err)
	}
	for name, tc := range map[string]struct {
		in  map[string]string
		msg string
	}{
		"no type":   {map[string]string{"price": "1", "from": "2026-01-01"}, "add rate needs type=, price= and from="},
		"no from":   {map[string]string{"type": "h100", "price": "1"}, "add rate needs type=, price= and from="},
		"bad price": {map[string]string{"type": "h100", "price": "-1", "from": "2026-01-01"}, `price "-1"`},
		"bad date":  {map[string]string{"type": "h100", "price": "1", "from": "2026-1-1"}, `date "2026-1-1"`},
	} {
		if _, err := ParseRate(tc.in); err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, ErrInput) {
			t.Errorf("%s: err = %v, want an input error saying %q", name, err, tc.msg)
		}
	}
}

func TestParseRateKey(t *testing.T) {
	k, err := ParseRateKey(map[string]string{"type": "h100", "from": "2026-01-01", "tier": "reserved"})
	if err != nil || k.Type != "h100" || k.Tier != meter.Reserved || k.From.String() != "2026-01-01" {
		t.Fatalf("ParseRateKey = %+v, %v", k, err)
	}
	for _, in := range []map[string]string{{"type": "h100"}, {"from": "2026-01-01"}, {"type": "h100", "from": "Jan"}} {
		if _, err := ParseRateKey(in); err == nil || err.Error() != "delete rate needs type= and from=YYYY-MM-DD" || !errors.Is(err, ErrInput) {
			t.Errorf("%v: err = %v", in, err)
		}
	}
}

func TestParseGPUType(t *testing.T) {
	got, err := ParseGPUType(map[string]string{"name": "1g.10gb", "parent": "h100", "slices": "1", "parentslices": "7"})
	if want := (pricing.GPUType{Name: "1g.10gb", Parent: "h100", Slices: 1, ParentSlices: 7}); err != nil || got != want {
		t.Fatalf("ParseGPUType = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		in  map[string]string
		msg string
	}{
		{map[string]string{"name": "1g.10gb"}, "add gputype needs name= and parent="},
		{map[string]string{"name": "1g.10gb", "parent": "h100", "slices": "one"}, "slices=one: want a number"},
	} {
		if _, err := ParseGPUType(tc.in); err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, ErrInput) {
			t.Errorf("%v: err = %v, want an input error saying %q", tc.in, err, tc.msg)
		}
	}
}
