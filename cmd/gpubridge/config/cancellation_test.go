package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCancellationPolicy(t *testing.T) {
	d := Default()
	if d.Bookings.Cancellation.FreeBefore.Duration != 24*time.Hour || d.Schedules.BookingCharges != "@every 5m" {
		t.Errorf("defaults: %+v, %q", d.Bookings.Cancellation, d.Schedules.BookingCharges)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("version: 1\nbookings:\n  cancellation:\n    freeBefore: 2d\nschedules:\n  bookingCharges: \"@every 1m\"\n"), 0o600)
	c, err := Load(path, false, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if c.Bookings.Cancellation.FreeBefore.Duration != 48*time.Hour || c.Schedules.BookingCharges != "@every 1m" {
		t.Errorf("read: %+v %q", c.Bookings.Cancellation, c.Schedules.BookingCharges)
	}
	for _, bad := range []struct {
		span  time.Duration
		sched string
		field string
	}{{-time.Hour, "", "bookings.cancellation.freeBefore"}, {1500 * time.Millisecond, "", "bookings.cancellation.freeBefore"}, {0, "every five", "schedules.bookingCharges"}} {
		c := Default()
		c.Cluster = "testbed"
		c.Bookings.Cancellation.FreeBefore = Span{bad.span}
		c.Schedules.BookingCharges = bad.sched
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), bad.field) {
			t.Errorf("%v %q: %v, want an error naming %s", bad.span, bad.sched, err, bad.field)
		}
	}
}
