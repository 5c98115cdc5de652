//go:build integration

package slurmadapter

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// TestAdapterOnTestbed walks the adapter through what the service does to
// a held node: fence, drain, a check job inside the reservation that
// starts once the node is resumed, its output read back, a plain job that
// the reservation keeps off the node, then unfence.
func TestAdapterOnTestbed(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	if err := b.a.Fence(ctx, node); err != nil {
		t.Fatal(err)
	}
	fences, err := b.a.Fences(ctx)
	if err != nil || !fences[node] {
		t.Fatalf("Fences = %v, %v", fences, err)
	}
	r, err := b.cl.GetReservation(ctx, health.FenceName(node))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Flags, "MAINT") || !slices.Contains(r.Flags, "IGNORE_JOBS") || r.Nodes != node || !slices.Contains(r.Users, "root") {
		t.Errorf("reservation %+v", r)
	}
	if err := b.a.Fence(ctx, node); err != nil { // extends, idempotent
		t.Fatalf("second Fence: %v", err)
	}
	const reason = "gpubridge: adapter test"
	if err := b.a.Drain(ctx, node, reason); err != nil {
		t.Fatal(err)
	}
	if sn := b.slurmNode(); !sn.Drain || sn.Reason != reason || sn.Model() != "h100" || sn.GPUCount() != 4 {
		t.Fatalf("after drain: %+v", sn)
	}
	cat := b.catalog()
	key := b.tag + "-k1"
	script := check.Script{Key: key, Checks: []check.Check{cat["probe"]}, Model: "h100", GPUs: 4}
	text, err := script.Render()
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.a.Submit(ctx, health.JobRequest{Name: "gpubridge-health", Comment: "gpubridge-health run=" + key, Account: b.account,
		User: "root", Partition: "pool", Reservation: health.FenceName(node), Nodes: []string{node}, Script: text,
		TimeLimit: script.TimeLimit(), StdOut: b.files.Path(key)})
	if err != nil {
		t.Fatal(err)
	}
	b.jobs = append(b.jobs, id)
	time.Sleep(2 * time.Second)
	if st, _ := b.a.States(ctx, []int64{id}); st[id].State != "PENDING" {
		t.Fatalf("check job on a drained node: %+v", st[id])
	}
	if found, ok, err := b.a.Find(ctx, key); err != nil || !ok || found != id {
		t.Errorf("Find(%s) = %d %v %v, want %d", key, found, ok, err, id)
	}
	plain := b.sbatch("root", b.account)
	if err := b.a.Resume(ctx, node); err != nil {
		t.Fatal(err)
	}
	b.waitJob(id, 30*time.Second, "COMPLETED")
	out, err := b.files.Read(ctx, key, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got := script.Evaluate(out)
	if len(got) != 1 || got[0].Result.Verdict != check.Pass || got[0].Result.Values[0] != (check.Value{Name: "temp_c", Value: 41}) {
		t.Fatalf("outcome %+v\n%s", got, out)
	}
	if s := b.jobState(plain); !strings.HasPrefix(s, "PENDING") {
		t.Errorf("a job outside the reservation on the fenced node: %s", s)
	}
	if err := b.files.Remove(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.files.Read(ctx, key, 10); err == nil {
		t.Error("output still readable after Remove")
	}
	if err := b.a.Unfence(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := b.a.Unfence(ctx, node); err != nil {
		t.Fatalf("second Unfence: %v", err)
	}
	if fences, _ := b.a.Fences(ctx); fences[node] {
		t.Error("still fenced")
	}
	b.waitJob(plain, 30*time.Second, "RUNNING")
	nodes, err := b.a.TenantNodes(ctx, b.account)
	if err != nil || !slices.Equal(nodes, []string{node}) {
		t.Errorf("TenantNodes(%s) = %v, %v", b.account, nodes, err)
	}
	states, err := b.a.States(ctx, []int64{id, plain, 999999})
	if err != nil || states[plain].State != "RUNNING" || states[id].State != "COMPLETED" {
		t.Errorf("States = %+v, %v", states, err)
	}
}

// TestFenceOverABookingOnTestbed: the health reservation (MAINT) is created
// on a node that a booking's reservation holds, and the booking's tenant
// sees the node as booked.
func TestFenceOverABookingOnTestbed(t *testing.T) {
	b := newBed(t)
	ctx := context.Background()
	tenant := b.tag + "ten"
	b.addAccount(tenant, "alice")
	booking := "gpubridge-9" + b.tag[3:]
	now := time.Now().UTC().Truncate(time.Second)
	if _, err := b.cl.CreateReservation(ctx, slurmrest.ReservationSpec{Name: booking, Accounts: []string{tenant}, Nodes: []string{node},
		Start: now, Duration: 30 * time.Minute, Flags: []string{"IGNORE_JOBS"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.cl.DeleteReservation(context.Background(), booking) })
	if nodes, err := b.a.BookedNodes(ctx, tenant, now.Add(time.Minute)); err != nil || !slices.Equal(nodes, []string{node}) {
		t.Errorf("BookedNodes = %v, %v", nodes, err)
	}
	if nodes, _ := b.a.BookedNodes(ctx, tenant, now.Add(time.Hour)); len(nodes) != 0 {
		t.Errorf("booked after the booking ended: %v", nodes)
	}
	if err := b.a.Fence(ctx, node); err != nil {
		t.Fatalf("fence over a booking: %v", err)
	}
	if fences, _ := b.a.Fences(ctx); !fences[node] {
		t.Fatal("not fenced")
	}
}
