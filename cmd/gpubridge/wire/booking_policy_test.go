package wire

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

type quotaTenant map[string]int

func (q quotaTenant) BookingTenant(context.Context, string) (reserve.TenantInfo, error) {
	return reserve.TenantInfo{GPUTypes: []string{"h100"}, Quota: q}, nil
}

type pool struct{}

func (pool) Inventory(context.Context) (reserve.Inventory, error) {
	return reserve.Inventory{Nodes: []reserve.Node{{Name: "gpu-a", GPUs: map[string]int{"h100": 8}}}}, nil
}

// TestDefaultPolicyIsBounded: with the shipped configuration, a tenant
// without a booking policy of its own may book at most its quota of each
// type at once, for at most 14 days, ending within 90 days (issue 25 item
// 4: the whole pool for a year before), and Service.Policy shows it so.
func TestDefaultPolicyIsBounded(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	svc := &reserve.Service{Store: store.NewMemory(), Source: pool{}, Tenants: quotaTenant{"h100": 2},
		Settings: BookingSettings(config.Default()), Now: func() time.Time { return now }}
	ctx := context.Background()
	p, err := svc.Policy(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want := reserve.Policy{MaxGPUsFromQuota: true, MaxGPUs: map[string]int{"h100": 2}, MaxWindow: reserve.Span(14 * 24 * time.Hour), MaxHorizon: reserve.Span(90 * 24 * time.Hour)}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("policy (-want +got)\n%s", d)
	}
	book := func(n int, start time.Time, d time.Duration) error {
		_, err := svc.Add(ctx, "alice", reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: n, Start: start, End: start.Add(d)})
		return err
	}
	day := 24 * time.Hour
	refused := map[string]struct {
		err  error
		want string
	}{
		"the whole pool":  {book(8, now.Add(day), day), "maxGPUs h100=2: its quota, as its policy sets no maxGPUs; an admin allows more with `gpubridge modify tenant acme set booking.maxgpus=h100:N`"},
		"a year ahead":    {book(1, now.Add(364*day), day), "beyond the booking horizon of 90d"},
		"a 15-day window": {book(1, now.Add(day), 15*day), "policy maxWindow 14d"},
	}
	for name, c := range refused {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v; want a refusal saying %q", name, c.err, c.want)
		}
	}
	if err := book(2, now.Add(day), 14*day); err != nil {
		t.Errorf("the quota for 14 days: %v", err)
	}
}
