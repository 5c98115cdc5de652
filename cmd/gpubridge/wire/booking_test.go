package wire

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
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

// Invalid booking settings are refused before anything connects.
func TestOpenRefusesBadSettingsFirst(t *testing.T) {
	c := config.Default()
	c.Bookings.UnbookablePercent = 150
	conn := BookingConnections{
		DB: func(context.Context) (*sqlx.DB, error) { t.Error("connected to the database"); return nil, nil },
		Slurm: func(context.Context) (*slurmrest.Client, error) {
			t.Error("connected to slurmrestd")
			return nil, nil
		},
	}
	if _, err := OpenBookings(context.Background(), c, conn, true); err == nil {
		t.Error("unbookablePercent 150: no error")
	}
}
