//go:build integration

package slurmadapter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestPinnedGPUReservationOnTestbed: a GPU reservation with a node list
// (what the projection sends to place a booking on the model's node when
// its type is on several nodes) stays a GPU reservation on that node: the
// inventory reads its typed GPUs and its node, not a whole node.
func TestPinnedGPUReservationOnTestbed(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	c, err := slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := New(c, "pool")
	name := fmt.Sprintf("gpubridge-pin%d-1", rand.IntN(1_000_000))
	start := time.Now().UTC().Truncate(time.Minute).Add(5 * time.Hour)
	spec := reserve.ReservationSpec{Name: name, Accounts: []string{"root"}, Start: start, End: start.Add(time.Hour),
		GPUType: "h100", Count: 2, Nodes: []string{"gpu-a"}, Flags: []string{"IGNORE_JOBS"}}
	if err := a.CreateReservation(ctx, spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteReservation(ctx, name) })
	inv, err := a.Inventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range inv.Reservations {
		if r.Name != name {
			continue
		}
		if r.WholeNodes || r.GPUs["h100"] != 2 || len(r.Nodes) != 1 || r.Nodes[0] != "gpu-a" || !r.Start.Equal(start) {
			t.Errorf("pinned reservation read as %+v", r)
		}
		t.Logf("flags %v", r.Flags)
		return
	}
	t.Fatalf("reservation %s not in the inventory", name)
}
