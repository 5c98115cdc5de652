package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// The settings are the configuration's bookings.*.
func TestSettings(t *testing.T) {
	c := config.Default()
	c.Bookings.ReservationPrefix = "gb-"
	c.Bookings.LeadTime.Duration = 10 * time.Minute
	c.Bookings.DefaultPolicy.MaxGPUs = map[string]int{"h100": 8}
	s := BookingSettings(c)
	if s.Prefix != "gb-" || s.LeadTime != 10*time.Minute || s.DefaultPolicy.MaxGPUs["h100"] != 8 || s.ReservationName(3) != "gb-3" {
		t.Errorf("BookingSettings = %+v", s)
	}
}

// Invalid booking settings are refused, naming the setting.
func TestOpenRefusesBadSettings(t *testing.T) {
	c := config.Default()
	c.Bookings.UnbookablePercent = 150
	if _, err := OpenBookings(BookingParams{Config: c}); err == nil || !strings.Contains(err.Error(), "unbookablePercent") {
		t.Errorf("unbookablePercent 150: %v; want an error naming it", err)
	}
	if _, err := OpenBookings(BookingParams{Config: config.Default(), Cluster: "tb"}); err != nil {
		t.Errorf("default settings: %v", err)
	}
}
