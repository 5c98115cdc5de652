package config

import (
	"strings"
	"testing"
	"time"
)

func TestAPIDefaultsAndValidation(t *testing.T) {
	c := Default()
	if c.API.RefreshInterval.Duration != 15*time.Second || c.API.AuthFailuresPerMinute != 10 || c.API.AuthFailureBurst != 20 || c.Schedules.Bookings != "@every 1m" {
		t.Fatalf("defaults: %+v %q", c.API, c.Schedules.Bookings)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if a := c.API; a.TokenRequestsPerSecond != 20 || a.TokenRequestBurst != 40 || a.AddressRequestsPerSecond != 100 || a.AddressRequestBurst != 200 {
		t.Errorf("request rate defaults: %+v", a)
	}
	c.API = API{RefreshInterval: Duration{time.Millisecond}, AuthFailuresPerMinute: 0, AuthFailureBurst: -1, TokenRequestBurst: 1}
	c.Schedules.Bookings = "sometimes"
	err := c.Validate()
	for _, f := range []string{"api.refreshInterval", "api.authFailuresPerMinute", "api.authFailureBurst", "schedules.bookings",
		"api.tokenRequestsPerSecond", "api.addressRequestsPerSecond", "api.addressRequestBurst"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("Validate() = %v; want a problem with %s", err, f)
		}
	}
}

// TestMetricsListenIsItsOwn: /metrics has its own loopback address by
// default, and may not share the tenant API's.
func TestMetricsListenIsItsOwn(t *testing.T) {
	c := Default()
	if c.Server.MetricsListen != "127.0.0.1:9181" || c.Server.MetricsListen == c.Server.Listen {
		t.Fatalf("default metricsListen %q (listen %q)", c.Server.MetricsListen, c.Server.Listen)
	}
	for name, v := range map[string]string{"same as listen": c.Server.Listen, "not an address": "9181"} {
		c.Server.MetricsListen = v
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "server.metricsListen") {
			t.Errorf("%s: Validate() = %v; want a problem with server.metricsListen", name, err)
		}
	}
	c.Server.Listen, c.Server.MetricsListen = "127.0.0.1:0", "127.0.0.1:0" // two free ports
	if err := c.Validate(); err != nil {
		t.Errorf("both on port 0: %v", err)
	}
}
