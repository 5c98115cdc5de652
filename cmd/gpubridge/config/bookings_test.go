package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBookingsDefaultsAndFile(t *testing.T) {
	d := Default().Bookings
	if d.ReservationPrefix != "gpubridge-" || d.LeadTime.Duration != 24*time.Hour || d.UnbookablePercent != 0 || d.DefaultPolicy.MaxHorizon.Duration != 90*24*time.Hour || d.DefaultPolicy.MaxWindow.Duration != 14*24*time.Hour || d.DefaultPolicy.MaxGPUs != nil {
		t.Errorf("defaults: %+v", d)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte(`version: 1
bookings:
  leadTime: 2d
  unbookablePercent: 10
  nodeClasses:
    dgx: [gpu-a]
  defaultPolicy:
    maxGPUs: {h100: 2}
    maxWindow: 2w
    minLead: 90m
`), 0o600)
	c, err := Load(path, false, func(k string) (string, bool) {
		if k == "GPUBRIDGE_BOOKINGS_PREFIX" {
			return "gpubridge-bk1-", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Bookings{ReservationPrefix: "gpubridge-bk1-", ReservationQOSSuffix: "-resv", LeadTime: Span{48 * time.Hour}, UnbookablePercent: 10, NodeClasses: map[string][]string{"dgx": {"gpu-a"}},
		DefaultPolicy: BookingPolicy{MaxGPUs: map[string]int{"h100": 2}, MaxWindow: Span{14 * 24 * time.Hour}, MinLead: Span{90 * time.Minute}, MaxHorizon: Span{90 * 24 * time.Hour}},
		Cancellation:  Cancellation{FreeBefore: Span{24 * time.Hour}}}
	if diff := cmp.Diff(want, c.Bookings); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if b, _ := (Span{14 * 24 * time.Hour}).MarshalJSON(); string(b) != `"14d"` {
		t.Errorf("marshal: %s", b)
	}
}

func TestBookingsValidate(t *testing.T) {
	c := Default()
	c.Bookings = Bookings{ReservationPrefix: "gpu bridge", LeadTime: Span{-time.Hour}, UnbookablePercent: 101,
		NodeClasses:   map[string][]string{"dgx": nil, "a b": {"n1"}},
		DefaultPolicy: BookingPolicy{MaxGPUs: map[string]int{"h100": -1}, MaxWindow: Span{30 * 24 * time.Hour}, MaxHorizon: Span{7 * 24 * time.Hour}}}
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, f := range []string{"bookings.reservationPrefix", "bookings.reservationQOSSuffix", "bookings.leadTime", "bookings.unbookablePercent", "bookings.nodeClasses: class name \"a b\"",
		"bookings.nodeClasses.dgx", "bookings.defaultPolicy.maxGPUs.h100", "bookings.defaultPolicy.maxWindow"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%v\nwant %q", err, f)
		}
	}
	c = Default()
	c.Bookings.ReservationQOSSuffix, c.Schedules.Bookings = "+resv", "every minute"
	err = c.Validate()
	for _, f := range []string{`bookings.reservationQOSSuffix: "+resv" must be 1 to 16 letters`, `schedules.bookings: "every minute" is not a cron spec`} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%v\nwant %q", err, f)
		}
	}
	if d := Default(); d.Schedules.Bookings != "@every 1m" || d.Bookings.ReservationQOSSuffix != "-resv" {
		t.Errorf("defaults: schedules.bookings %q, bookings.reservationQOSSuffix %q", d.Schedules.Bookings, d.Bookings.ReservationQOSSuffix)
	}
	var s Span
	if err := s.UnmarshalJSON([]byte(`"1.5d"`)); err == nil {
		t.Error("1.5d accepted")
	}
}
