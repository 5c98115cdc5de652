package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
)

type oneTenant struct{}

func (oneTenant) BookingTenant(context.Context, string) (reserve.TenantInfo, error) {
	return reserve.TenantInfo{GPUTypes: []string{"h100"}, Quota: map[string]int{"h100": 64}}, nil
}

type onePool struct{}

func (onePool) Inventory(context.Context) (reserve.Inventory, error) {
	return reserve.Inventory{Nodes: []reserve.Node{{Name: "gpu-a", GPUs: map[string]int{"h100": 8}}}}, nil
}

// TestBookingCasesErrors: the booking use cases mark what the user gave
// wrong as ErrInput (the CLI exits 2) and keep the domain's errors
// reachable (errors.Is, errors.As), which the API answers from: a
// missing booking is reserve.ErrNotFound (404), an invalid request
// reserve.Problems (400), a refusal a *reserve.Refusal (409, not input).
func TestBookingCasesErrors(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	c := BookingCases{Service: &reserve.Service{Store: store.NewMemory(), Source: onePool{}, Tenants: oneTenant{},
		Now: func() time.Time { return now }}}
	ctx := context.Background()
	_, err := c.Get(ctx, 7)
	if !errors.Is(err, reserve.ErrNotFound) || !errors.Is(err, ErrInput) {
		t.Errorf("Get of a missing booking: %v; want reserve.ErrNotFound marked as input", err)
	}
	req := reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 2, Start: now.Add(time.Hour), End: now.Add(2 * time.Hour)}
	b, err := c.Add(ctx, "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, b.ID); err != nil || got.ID != b.ID {
		t.Errorf("Get(%d) = %+v, %v", b.ID, got, err)
	}
	bad := req
	bad.End = bad.Start
	var ps reserve.Problems
	if _, err := c.Add(ctx, "alice", bad); !errors.As(err, &ps) || !errors.Is(err, ErrInput) {
		t.Errorf("Add of an empty window: %v; want reserve.Problems marked as input", err)
	}
	big := req
	big.Count = 7 // 2 + 7 > the pool's 8
	var ref *reserve.Refusal
	if _, err := c.Add(ctx, "alice", big); !errors.As(err, &ref) || errors.Is(err, ErrInput) {
		t.Errorf("Add past the pool: %v; want a *reserve.Refusal, not input", err)
	}
}
