package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/internal/money"
)

func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.Moved("acme", 2, 3*time.Second)
	r.Moved("acme", 1, 4*time.Second)
	r.Refused("acme", burst.Cap)
	r.MoveFailed("acme")
	b := money.New(1000, money.Currency{Code: "EUR", Minor: 2})
	r.Observe(burst.Plan{
		Tenants:  []burst.TenantState{{Tenant: "acme", OnDemandGPUs: 1, MovedGPUs: 3, Spent: 100, InFlight: 50, Budget: &b}},
		Refusals: []burst.Refusal{{JobID: 1, Reason: burst.Cap}, {JobID: 2, Reason: burst.Cap}},
		Ignored:  map[burst.Reason]int{burst.NotOurs: 7},
	})
	want := `
# HELP gpubridge_burst_moved_total Jobs moved to the on-demand tier, by tenant.
# TYPE gpubridge_burst_moved_total counter
gpubridge_burst_moved_total{tenant="acme"} 2
# HELP gpubridge_burst_moved_gpus_total GPUs of the jobs moved to the on-demand tier, by tenant.
# TYPE gpubridge_burst_moved_gpus_total counter
gpubridge_burst_moved_gpus_total{tenant="acme"} 3
# HELP gpubridge_burst_ondemand_gpus GPUs a tenant holds or waits for in the on-demand tier, after the last cycle.
# TYPE gpubridge_burst_ondemand_gpus gauge
gpubridge_burst_ondemand_gpus{tenant="acme"} 4
# HELP gpubridge_burst_committed_minor_units A tenant's on-demand spend this month, booked plus estimated in flight (minor currency units).
# TYPE gpubridge_burst_committed_minor_units gauge
gpubridge_burst_committed_minor_units{tenant="acme"} 150
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gpubridge_burst_moved_total", "gpubridge_burst_moved_gpus_total",
		"gpubridge_burst_ondemand_gpus", "gpubridge_burst_committed_minor_units"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(r.refusing.WithLabelValues("cap")); got != 2 {
		t.Errorf("refused jobs (cap) = %v, want 2", got)
	}
	if got := testutil.ToFloat64(r.refused.WithLabelValues("acme", "cap")); got != 1 {
		t.Errorf("refused total = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(r.reaction); n != 1 {
		t.Errorf("reaction histogram series = %d", n)
	}
	// A tenant that disappears loses its gauges.
	r.Observe(burst.Plan{})
	if n := testutil.CollectAndCount(r.onDemand); n != 0 {
		t.Errorf("on-demand gauges left: %d", n)
	}
}
