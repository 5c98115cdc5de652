package api

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/money"
)

func (h *harness) scrape() string {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			h.t.Fatal(err)
		}
	}
	return b.String()
}

func TestMetricsFollowTheSnapshot(t *testing.T) {
	h := newHarness(t)
	h.do("GET", "/api/v1/tenants/acme", h.acmeRead, "") // takes the snapshot
	text := h.scrape()
	for _, want := range []string{
		`gpubridge_tenant_quota_gpus{gpu_type="h100",tenant="acme"} 2`,
		`gpubridge_tenant_quota_gpus{gpu_type="1g.10gb",tenant="acme"} 2`,
		`gpubridge_tenant_allocated_gpus{gpu_type="h100",tenant="acme"} 2`,
		`gpubridge_tenant_in_quota_gpus{gpu_type="h100",tenant="acme"} 2`,
		`gpubridge_tenant_pending_gpus{gpu_type="h100",tenant="acme"} 1`,
		`gpubridge_tenant_booked_gpus{gpu_type="h100",tenant="beta"} 2`,
		`gpubridge_tenant_usage_gpu_seconds{gpu_type="h100",tenant="acme"} 7200`,
		`gpubridge_tenant_spend_minor_units{currency="EUR",gpu_type="h100",tenant="acme"} 500`,
		`gpubridge_tenant_burst_budget_minor_units{currency="EUR",tenant="acme"} 10000`,
		`gpubridge_tenant_burst_committed_minor_units{currency="EUR",tenant="acme"} 1001`, // booked 10.00 + the estimate of the move it plans
		`gpubridge_tenant_burst_budget_left_minor_units{currency="EUR",tenant="acme"} 8999`,
		`gpubridge_pool_capacity_gpus{gpu_type="h100"} 4`,
		`gpubridge_pool_bookable_gpus{gpu_type="h100"} 4`,
		`gpubridge_pool_booked_gpus{gpu_type="h100"} 2`,
		`gpubridge_pool_allocated_gpus{gpu_type="h100"} 3`,
		`gpubridge_pool_free_gpus{gpu_type="h100"} 1`,
		`gpubridge_tenant_bookings_at_risk{tenant="beta"} 1`,
		`gpubridge_tenant_bookings_at_risk{tenant="acme"} 0`,
		`gpubridge_ingest_lag_seconds 600`,
		`gpubridge_snapshot_part_up{part="jobs"} 1`,
		`gpubridge_api_requests_total{code="200",method="GET",route="/api/v1/tenants/{tenant}"} 1`,
		`gpubridge_reconcile_drift_changes 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape misses %s", want)
		}
	}
	// Zero gauges other than the quota's use are left out.
	for _, absent := range []string{`gpubridge_tenant_bursting_gpus{gpu_type="h100",tenant="acme"}`, `gpubridge_tenant_allocated_gpus{gpu_type="1g.10gb",tenant="acme"}`} {
		if strings.Contains(text, absent) {
			t.Errorf("the scrape holds the zero series %s", absent)
		}
	}
	if !strings.Contains(text, `gpubridge_tenant_in_quota_gpus{gpu_type="1g.10gb",tenant="acme"} 0`) {
		t.Error("the scrape misses the quota use 0 of acme's 1g.10gb")
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	h.srv.o.Metrics.ObserveReconcile(3)
	if v := testutil.ToFloat64(h.srv.o.Metrics.drift); v != 3 {
		t.Errorf("drift %v; want 3", v)
	}
}

// TestMetricsLowCardinality: no series is labelled by anything but a
// tenant, a GPU type, a currency, a route, a method, a status code, a
// reason or a snapshot part: never a job, booking or token.
func TestMetricsLowCardinality(t *testing.T) {
	h := newHarness(t)
	h.do("GET", "/api/v1/tenants/acme/bookings/1", h.acmeRead, "")
	h.do("GET", "/api/v1/tenants/acme/bookings/999999", h.acmeRead, "")
	allowed := []string{"tenant", "gpu_type", "currency", "route", "method", "code", "reason", "part"}
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(allowed, l.GetName()) {
					t.Errorf("%s has label %s", mf.GetName(), l.GetName())
				}
				if strings.Contains(l.GetValue(), "999999") {
					t.Errorf("%s{%s=%q}: an id in a label", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestPromtoolCheckMetrics: promtool (Debian's prometheus package,
// installed by test/install-deps.sh) finds nothing to complain about.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run test/install-deps.sh (Debian package prometheus)")
	}
	h := newHarness(t)
	h.do("GET", "/api/v1/tenants/acme", h.acmeRead, "")
	h.do("GET", "/api/v1/tenants/acme", "", "")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(h.scrape())
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestCreditsAreSpendNotUsage: a health credit row (an amount given back,
// no GPU type, no rate) lowers the tenant's spend under gpu_type
// "(credit)", adds no GPU-seconds, and its usage row carries no rate.
func TestCreditsAreSpendNotUsage(t *testing.T) {
	h := newHarness(t)
	eur := money.Currency{Code: "EUR", Minor: 2}
	h.usage.rows["acme"] = append(h.usage.rows["acme"], export.Row{Key: export.Key{Tenant: "acme", Account: "acme", Kind: meter.KindCredit},
		HasTenant: true, Amount: money.New(-2, eur)})
	code, body := h.do("GET", "/api/v1/tenants/acme/usage", h.acmeRead, "")
	if code != 200 {
		t.Fatalf("usage: %d %s", code, body)
	}
	var v struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	var credit map[string]any
	for _, r := range v.Rows {
		if r["kind"] == string(meter.KindCredit) {
			credit = r
		}
	}
	if credit == nil || credit["amount"] != "-0.02" || credit["rate"] != nil {
		t.Errorf("credit row %v in %s; want amount -0.02 and no rate", credit, body)
	}
	text := h.scrape()
	for _, want := range []string{
		`gpubridge_tenant_spend_minor_units{currency="EUR",gpu_type="(credit)",tenant="acme"} -2`,
		`gpubridge_tenant_spend_minor_units{currency="EUR",gpu_type="h100",tenant="acme"} 500`,
		`gpubridge_tenant_usage_gpu_seconds{gpu_type="h100",tenant="acme"} 7200`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the scrape misses %s", want)
		}
	}
	if strings.Contains(text, `gpu_type=""`) {
		t.Errorf("a series with an empty gpu_type:\n%s", text)
	}
}
