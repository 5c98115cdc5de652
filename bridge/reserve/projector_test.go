package reserve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/reservetest"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
)

type projHarness struct {
	*harness
	slurm *reservetest.FakeSlurm
	proj  *reserve.Projector
}

func newProjHarness(t *testing.T) *projHarness {
	h := newHarness()
	fs := reservetest.NewFakeSlurm(h.src.inv.Nodes...)
	h.svc.Source = fs
	p := &projHarness{harness: h, slurm: fs}
	p.proj = &reserve.Projector{Store: h.st, Slurm: fs, Settings: h.svc.Settings, Now: func() time.Time { return h.clock }}
	return p
}

func (p *projHarness) project(t *testing.T) reserve.Report {
	t.Helper()
	rep, err := p.proj.Project(context.Background())
	if err != nil {
		t.Fatalf("project: %v", err)
	}
	return rep
}

func (p *projHarness) booking(t *testing.T, id int64) reserve.Booking {
	t.Helper()
	b, err := p.st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func outcomes(rep reserve.Report) []string {
	var out []string
	for _, a := range rep.Actions {
		out = append(out, string(a.Kind)+" "+a.Name+" "+a.Outcome)
	}
	return out
}

// TestProjectCreatesAheadAndRepairs: a booking's reservation appears
// LeadTime before its start, with the tenant's account, its TRES, its
// times and IGNORE_JOBS, and the node Slurm picked is recorded by the same
// run; deleting or changing it out of band is repaired by the next run; a
// run with nothing to do changes nothing.
func TestProjectCreatesAheadAndRepairs(t *testing.T) {
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now+3h", "duration=1d"))
	name := "gpubridge-1"
	if rep := p.project(t); len(rep.Actions) != 0 {
		t.Fatalf("created before the lead time: %v", outcomes(rep))
	}
	p.clock = p.clock.Add(2*time.Hour + time.Second) // within the 1h lead time
	rep := p.project(t)
	if diff := cmp.Diff([]string{"create gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	inv, _ := p.slurm.Inventory(context.Background())
	want := reserve.Reservation{Name: name, Accounts: []string{"acme"}, Start: b.Start, End: b.End, Flags: []string{"IGNORE_JOBS"}, GPUs: map[string]int{"h100": 2}, Nodes: []string{"gpu-a"}}
	if diff := cmp.Diff([]reserve.Reservation{want}, inv.Reservations); diff != "" {
		t.Fatalf("reservation (-want +got)\n%s", diff)
	}
	got := p.booking(t, b.ID)
	if got.State != reserve.StateScheduled || got.Held.Reservation != name || got.Held.Count != 2 || !cmp.Equal(got.Held.Nodes, []string{"gpu-a"}) {
		t.Errorf("after create (the node Slurm picked read back at once): %+v", got)
	}
	if rep := p.project(t); len(rep.Actions) != 0 || len(rep.Changed) != 0 {
		t.Errorf("second run is not a no-op: %v %+v", outcomes(rep), rep.Changed)
	}
	// Deleted out of band: recreated.
	p.slurm.Drop(name)
	if diff := cmp.Diff([]string{"create gpubridge-1 done"}, outcomes(p.project(t))); diff != "" {
		t.Errorf("after scontrol delete (-want +got)\n%s", diff)
	}
	// Changed out of band: end, accounts, MAGNETIC fixed in place.
	r := want
	r.End, r.Accounts, r.Flags = b.End.Add(time.Hour), []string{"acme", "globex"}, []string{"MAGNETIC"}
	p.slurm.Set(r)
	rep = p.project(t)
	if len(rep.Actions) != 1 || rep.Actions[0].Kind != reserve.ActUpdate {
		t.Fatalf("drift: %v", outcomes(rep))
	}
	for _, w := range []string{"accounts acme,globex -> acme", "end 2026-11-21T13:00:00Z -> 2026-11-21T12:00:00Z", "IGNORE_JOBS missing", "MAGNETIC set"} {
		if !strings.Contains(rep.Actions[0].Why, w) {
			t.Errorf("why %q lacks %q", rep.Actions[0].Why, w)
		}
	}
	inv, _ = p.slurm.Inventory(context.Background())
	if diff := cmp.Diff([]reserve.Reservation{want}, inv.Reservations); diff != "" {
		t.Errorf("after repair (-want +got)\n%s", diff)
	}
	// OVERLAP or a different count: recreated.
	r = want
	r.Flags = []string{"IGNORE_JOBS", "OVERLAP"}
	p.slurm.Set(r)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(p.project(t))); diff != "" {
		t.Errorf("OVERLAP (-want +got)\n%s", diff)
	}
	r = want
	r.GPUs = map[string]int{"h100": 3}
	p.slurm.Set(r)
	rep = p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(rep)); diff != "" || !strings.Contains(rep.Actions[0].Why, "TRES gres/gpu:h100=3 -> h100=2") {
		t.Errorf("TRES (-want +got)\n%s\n%v", diff, rep.Actions)
	}
	inv, _ = p.slurm.Inventory(context.Background())
	if diff := cmp.Diff([]reserve.Reservation{want}, inv.Reservations); diff != "" {
		t.Errorf("after recreate (-want +got)\n%s", diff)
	}
	p.clock = b.Start
	p.project(t)
	if got := p.booking(t, b.ID); got.State != reserve.StateActive {
		t.Errorf("at start: %s", got.State)
	}
}

// TestProjectCancelWaitsForJobs: a cancelled booking's reservation is
// deleted; while jobs run inside, Slurm refuses, the booking says why, its
// GPUs stay counted, and the next run after the jobs end deletes it.
func TestProjectCancelWaitsForJobs(t *testing.T) {
	ctx := context.Background()
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:4", "start=now", "duration=1d"))
	p.project(t)
	if _, err := p.svc.Cancel(ctx, "root", b.ID); err != nil {
		t.Fatal(err)
	}
	p.slurm.InUse["gpubridge-1"] = true
	rep := p.project(t)
	if diff := cmp.Diff([]string{"delete gpubridge-1 waiting"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	got := p.booking(t, b.ID)
	if got.State != reserve.StateCancelled || got.Held.IsZero() || !strings.Contains(got.Note, "while jobs run inside it (error 2055)") {
		t.Errorf("while jobs run: %+v", got)
	}
	// Its GPUs are still held: nothing else fits until Slurm lets go.
	if _, err := p.add(t, kv("tenant=globex", "gpus=h100:1", "start=now", "duration=1h"), reserve.Zone{}); err == nil {
		t.Error("admitted into GPUs a cancelled booking's reservation still holds")
	}
	delete(p.slurm.InUse, "gpubridge-1")
	if diff := cmp.Diff([]string{"delete gpubridge-1 done"}, outcomes(p.project(t))); diff != "" {
		t.Errorf("after jobs end (-want +got)\n%s", diff)
	}
	got = p.booking(t, b.ID)
	if !got.Held.IsZero() || got.Note != "" {
		t.Errorf("after delete: %+v", got)
	}
	p.mustAdd(t, kv("tenant=globex", "gpus=h100:4", "start=now", "duration=1h"))
}

// TestProjectResize: a count change is delete + create; while jobs run
// inside it waits and the tenant keeps what it holds, and admission still
// counts the larger of the two.
func TestProjectResize(t *testing.T) {
	ctx := context.Background()
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:4", "start=now", "duration=1d"))
	p.project(t)
	p.slurm.InUse["gpubridge-1"] = true
	two := 2
	if _, _, err := p.svc.Modify(ctx, "root", b.ID, reserve.Change{Count: &two}); err != nil {
		t.Fatal(err)
	}
	rep := p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 waiting"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	got := p.booking(t, b.ID)
	if got.Held.Count != 4 || !strings.Contains(got.Note, "the tenant keeps the 4 it holds") {
		t.Errorf("waiting resize: %+v", got)
	}
	if _, err := p.add(t, kv("tenant=globex", "gpus=h100:1", "start=now", "duration=1h"), reserve.Zone{}); err == nil {
		t.Error("admitted into GPUs the old reservation still holds")
	}
	delete(p.slurm.InUse, "gpubridge-1")
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(p.project(t))); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got := p.booking(t, b.ID); got.Held.Count != 2 || got.Note != "" {
		t.Errorf("after resize: %+v", got)
	}
	p.mustAdd(t, kv("tenant=globex", "gpus=h100:2", "start=now", "duration=1h"))
}

func TestProjectOrphans(t *testing.T) {
	p := newProjHarness(t)
	orphan := reserve.Reservation{Name: "gpubridge-77", Accounts: []string{"x"}, Start: now0, End: now0.Add(time.Hour), GPUs: map[string]int{"h100": 1}, Nodes: []string{"gpu-a"}}
	p.slurm.Set(orphan)
	p.slurm.Set(reserve.Reservation{Name: "site-maint", Start: now0, End: now0.Add(time.Hour), Nodes: []string{"gpu-b"}, WholeNodes: true})
	// An empty store removes nothing.
	rep := p.project(t)
	if len(rep.Actions) != 0 || !cmp.Equal(rep.KeptOrphans, []string{"gpubridge-77"}) || !strings.Contains(rep.KeptWhy, "holds no booking") {
		t.Fatalf("empty store: %v %v %q", outcomes(rep), rep.KeptOrphans, rep.KeptWhy)
	}
	// The orphan takes capacity like anybody's reservation meanwhile.
	if _, err := p.add(t, kv("tenant=acme", "gpus=h100:4", "start=now", "duration=30m"), reserve.Zone{}); err == nil || !strings.Contains(err.Error(), "reservation gpubridge-77") {
		t.Errorf("admitted over an orphan: %v", err)
	}
	p.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2h", "duration=1h"))
	rep = p.project(t)
	if diff := cmp.Diff([]string{"remove-orphan gpubridge-77 done"}, outcomes(rep)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	inv, _ := p.slurm.Inventory(context.Background())
	if len(inv.Reservations) != 1 || inv.Reservations[0].Name != "site-maint" {
		t.Errorf("left: %+v", inv.Reservations)
	}
	// Many orphans and few bookings: kept, unless allowed.
	for _, n := range []string{"gpubridge-90", "gpubridge-91"} {
		o := orphan
		o.Name = n
		p.slurm.Set(o)
	}
	rep = p.project(t)
	if len(rep.Actions) != 0 || len(rep.KeptOrphans) != 2 || !strings.Contains(rep.KeptWhy, "2 of 2 gpubridge reservations have no booking") {
		t.Errorf("mass removal: %v %v %q", outcomes(rep), rep.KeptOrphans, rep.KeptWhy)
	}
	p.proj.AllowMassRemoval = true
	if got := outcomes(p.project(t)); len(got) != 2 {
		t.Errorf("allowed: %v", got)
	}
}

func TestProjectAtRisk(t *testing.T) {
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now", "duration=1d"))
	p.project(t)
	p.project(t) // learns the node
	p.slurm.Nodes[0].Down = "DOWN+NOT_RESPONDING"
	rep := p.project(t)
	if len(rep.AtRisk) != 1 || rep.AtRisk[0].ID != b.ID || rep.States[reserve.StateAtRisk] != 1 {
		t.Fatalf("at risk: %+v", rep)
	}
	got := p.booking(t, b.ID)
	if got.State != reserve.StateAtRisk || !strings.Contains(got.Note, "gpu-a is DOWN+NOT_RESPONDING") {
		t.Errorf("booking: %+v", got)
	}
	if bs, _ := p.svc.List(context.Background(), reserve.ListFilter{States: []reserve.State{reserve.StateAtRisk}}); len(bs) != 1 {
		t.Errorf("show bookings state=at-risk: %+v", bs)
	}
	p.slurm.Nodes[0].Down = ""
	p.project(t)
	if got := p.booking(t, b.ID); got.State != reserve.StateActive || got.Note != "" {
		t.Errorf("after the node is back: %+v", got)
	}
}

// TestProjectNoRoom: Slurm refusing a creation (another reservation took
// the GPUs) and no placement holding it puts the booking at risk at once
// (not only at its start), with why, and the report lists it.
func TestProjectNoRoom(t *testing.T) {
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:3", "start=now+30m", "duration=1h"))
	p.slurm.Set(reserve.Reservation{Name: "vip", Accounts: []string{"root"}, Start: now0, End: now0.Add(3 * time.Hour), GPUs: map[string]int{"h100": 2}, Nodes: []string{"gpu-a"}})
	rep := p.project(t)
	if diff := cmp.Diff([]string{"create gpubridge-1 waiting"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	got := p.booking(t, b.ID)
	if got.State != reserve.StateAtRisk || !strings.Contains(got.Note, "Slurm has no room") || !strings.Contains(got.Note, "no placement") {
		t.Errorf("before start: %+v", got)
	}
	if !cmp.Equal(rep.Unprojected, []int64{b.ID}) || len(rep.AtRisk) != 1 {
		t.Errorf("report: unprojected %v, at risk %v", rep.Unprojected, rep.AtRisk)
	}
	p.clock = b.Start
	p.project(t)
	if got := p.booking(t, b.ID); got.State != reserve.StateAtRisk {
		t.Errorf("at start: %+v", got)
	}
}

func TestProjectNodeBooking(t *testing.T) {
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=now", "duration=1h"))
	rep := p.project(t)
	if diff := cmp.Diff([]string{"create gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	inv, _ := p.slurm.Inventory(context.Background())
	if r := inv.Reservations[0]; !r.WholeNodes || !cmp.Equal(r.Nodes, []string{"gpu-a"}) || !cmp.Equal(r.Accounts, []string{"acme"}) {
		t.Errorf("node reservation: %+v", r)
	}
	if got := p.booking(t, b.ID); got.Held.Count != 1 || !cmp.Equal(got.Held.Nodes, []string{"gpu-a"}) {
		t.Errorf("held: %+v", got.Held)
	}
	// Replaced out of band by a GPU reservation: recreated whole.
	p.slurm.Set(reserve.Reservation{Name: "gpubridge-1", Accounts: []string{"acme"}, Start: b.Start, End: b.End, Flags: []string{"IGNORE_JOBS"}, GPUs: map[string]int{"h100": 1}, Nodes: []string{"gpu-a"}})
	if rep := p.project(t); len(rep.Actions) != 1 || rep.Actions[0].Kind != reserve.ActRecreate || rep.Actions[0].Outcome != reserve.OutcomeDone {
		t.Errorf("recreate: %v", outcomes(rep))
	}
}

func TestProjectDryRun(t *testing.T) {
	p := newProjHarness(t)
	p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now", "duration=1h"))
	p.proj.DryRun = true
	rep := p.project(t)
	if diff := cmp.Diff([]string{"create gpubridge-1 planned"}, outcomes(rep)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if calls := p.slurm.TakeCalls(); len(calls) != 0 {
		t.Errorf("dry run called Slurm: %v", calls)
	}
	if got := p.booking(t, 1); !got.Held.IsZero() {
		t.Errorf("dry run recorded: %+v", got)
	}
}

var _ reserve.Store = (*store.Memory)(nil)

// newMoveHarness is a pool of two h100 nodes (a node class of both) and
// gpu-b's MIG slices.
func newMoveHarness(t *testing.T) *projHarness {
	h := newHarness()
	h.src.inv.Nodes = []reserve.Node{
		{Name: "gpu-a", GPUs: map[string]int{"h100": 4}},
		{Name: "gpu-c", GPUs: map[string]int{"h100": 4}},
		{Name: "gpu-b", GPUs: map[string]int{"1g.10gb": 7, "3g.40gb": 2}},
	}
	h.svc.Settings.NodeClasses = map[string][]string{"dgx": {"gpu-a", "gpu-c"}}
	p := newProjHarness(t)
	p.harness = h
	fs := reservetest.NewFakeSlurm(h.src.inv.Nodes...)
	h.svc.Source = fs
	p.slurm = fs
	p.proj = &reserve.Projector{Store: h.st, Slurm: fs, Settings: h.svc.Settings, Now: func() time.Time { return h.clock }}
	return p
}

func (p *projHarness) reservation(t *testing.T, name string) reserve.Reservation {
	t.Helper()
	inv, _ := p.slurm.Inventory(context.Background())
	for _, r := range inv.Reservations {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no reservation %s", name)
	return reserve.Reservation{}
}

func nowOf(rep reserve.Report, r reserve.Resource) reserve.ResourceNow {
	for _, n := range rep.Now {
		if n.Resource == r {
			return n
		}
	}
	return reserve.ResourceNow{}
}

// TestProjectMovesOffDownNode: an active booking whose node drains is at
// risk and moved (delete + create) to healthy GPUs of its type where the
// ledger has room; while jobs run inside it waits, at risk, and the tenant
// keeps what it holds; with no healthy room it stays, at risk, and says so.
func TestProjectMovesOffDownNode(t *testing.T) {
	p := newMoveHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now", "duration=1d"))
	p.project(t)
	if r := p.reservation(t, "gpubridge-1"); fmt.Sprint(r.Nodes) != "[gpu-a]" {
		t.Fatalf("placed on %v", r.Nodes)
	}
	rep := p.project(t)
	if n := nowOf(rep, "gpu:h100"); n != (reserve.ResourceNow{Resource: "gpu:h100", Type: "h100", Capacity: 8, Booked: 2, Free: 6}) {
		t.Errorf("h100 now: %+v", n)
	}

	// Jobs inside: the move waits, the booking is at risk and says why.
	p.slurm.SetDown("gpu-a", "DRAIN")
	p.slurm.InUse["gpubridge-1"] = true
	rep = p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 waiting"}, outcomes(rep)); diff != "" || rep.Actions[0].Why != "move off gpu-a (gpu-a is DRAIN)" {
		t.Fatalf("(-want +got)\n%s\n%+v", diff, rep.Actions)
	}
	got := p.booking(t, b.ID)
	if got.StateAt(p.clock) != reserve.StateAtRisk || !strings.Contains(got.Note, "node under the reservation is down: gpu-a is DRAIN") ||
		!strings.Contains(got.Note, "the tenant keeps the 2 it holds") {
		t.Errorf("while jobs run: %s %q", got.StateAt(p.clock), got.Note)
	}
	if n := nowOf(rep, "gpu:h100"); n.AtRisk != 1 || n.Capacity != 4 || n.Booked != 2 {
		t.Errorf("h100 now: %+v", n)
	}

	// The jobs end: moved to gpu-c, active again.
	delete(p.slurm.InUse, "gpubridge-1")
	rep = p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if r := p.reservation(t, "gpubridge-1"); fmt.Sprint(r.Nodes) != "[gpu-c]" || r.GPUs["h100"] != 2 || !r.End.Equal(b.End) {
		t.Errorf("after the move: %+v", r)
	}
	got = p.booking(t, b.ID)
	if got.StateAt(p.clock) != reserve.StateActive || got.Note != "" {
		t.Errorf("after the move: %s %q", got.StateAt(p.clock), got.Note)
	}
	if n := nowOf(rep, "gpu:h100"); n.AtRisk != 0 {
		t.Errorf("h100 now: %+v", n)
	}

	// No healthy room: gpu-c drains too; nothing moves.
	p.mustAdd(t, kv("tenant=globex", "gpus=1g.10gb:1", "start=now", "duration=1h"))
	p.slurm.SetDown("gpu-c", "DOWN")
	rep = p.project(t)
	for _, a := range rep.Actions {
		if a.Booking == b.ID {
			t.Errorf("moved with no room: %v", outcomes(rep))
		}
	}
	got = p.booking(t, b.ID)
	if got.StateAt(p.clock) != reserve.StateAtRisk || !strings.Contains(got.Note, "gpu-c is DOWN; cannot move: 0 healthy h100 free from 2026-11-20T09:00:00Z, it needs 2; it stays where it is") {
		t.Errorf("no room: %s %q", got.StateAt(p.clock), got.Note)
	}
	if len(rep.AtRisk) != 1 || rep.AtRisk[0].ID != b.ID {
		t.Errorf("report at risk: %+v", rep.AtRisk)
	}
	// Back up: no longer at risk.
	p.slurm.SetDown("gpu-c", "")
	p.project(t)
	if got := p.booking(t, b.ID); got.StateAt(p.clock) != reserve.StateActive || got.Note != "" {
		t.Errorf("node back: %s %q", got.StateAt(p.clock), got.Note)
	}
}

// TestProjectMoveRespectsTheLedger: healthy GPUs that other bookings are
// promised (even before their reservations exist) are not taken by a move.
func TestProjectMoveRespectsTheLedger(t *testing.T) {
	p := newMoveHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:3", "start=now", "duration=1d"))
	p.project(t)
	// globex books gpu-c's worth from in 3h (its reservation is not made yet).
	p.mustAdd(t, kv("tenant=globex", "gpus=h100:4", "start=now+3h", "duration=1h"))
	p.slurm.SetDown("gpu-a", "DRAIN")
	rep := p.project(t)
	if len(rep.Actions) != 0 {
		t.Fatalf("moved into promised GPUs: %v", outcomes(rep))
	}
	if got := p.booking(t, b.ID); !strings.Contains(got.Note, "cannot move: 0 healthy h100 free from 2026-11-20T12:00:00Z, it needs 3") {
		t.Errorf("note %q", got.Note)
	}
}

// TestProjectMovesWholeNodes: a whole-node booking keeps its healthy nodes
// and swaps the down one for a free node of its class.
func TestProjectMovesWholeNodes(t *testing.T) {
	p := newMoveHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=now", "duration=1d"))
	p.project(t)
	first := p.reservation(t, "gpubridge-1").Nodes
	if len(first) != 1 {
		t.Fatalf("nodes %v", first)
	}
	p.slurm.SetDown(first[0], "DRAIN")
	rep := p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	r := p.reservation(t, "gpubridge-1")
	if len(r.Nodes) != 1 || r.Nodes[0] == first[0] || !r.WholeNodes {
		t.Errorf("moved to %v (was %v)", r.Nodes, first)
	}
	if got := p.booking(t, b.ID); got.StateAt(p.clock) != reserve.StateActive {
		t.Errorf("state %s %q", got.StateAt(p.clock), got.Note)
	}
}

// TestProjectAfterSlurmReplacedTheNode: as measured on 26.05, a drained
// node's GPU reservation is moved by slurmctld to another node without its
// GPUs. The booking is at risk (Slurm holds 0 of 2), and with no healthy
// room nothing is deleted (recreating would fail); once the node is back
// it is recreated with its GPUs.
func TestProjectAfterSlurmReplacedTheNode(t *testing.T) {
	p := newProjHarness(t)
	p.slurm.ReplaceDown = true
	b := p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now", "duration=1d"))
	p.project(t)
	p.slurm.SetDown("gpu-a", "DRAIN")
	if r := p.reservation(t, "gpubridge-1"); fmt.Sprint(r.Nodes) != "[gpu-b]" || r.GPUs["h100"] != 0 {
		t.Fatalf("the fake did not move it: %+v", r)
	}
	for range 2 {
		rep := p.project(t)
		if len(rep.Actions) != 0 {
			t.Fatalf("acted with no healthy room: %v", outcomes(rep))
		}
	}
	got := p.booking(t, b.ID)
	if got.StateAt(p.clock) != reserve.StateAtRisk || got.Note != "Slurm holds 0 of its 2 h100 (a node under it went down or drained, or it was changed); cannot move: 0 healthy h100 free from 2026-11-20T09:00:00Z, it needs 2; it stays where it is" {
		t.Errorf("at risk: %s %q", got.StateAt(p.clock), got.Note)
	}
	p.slurm.SetDown("gpu-a", "")
	rep := p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("node back (-want +got)\n%s", diff)
	}
	if r := p.reservation(t, "gpubridge-1"); fmt.Sprint(r.Nodes) != "[gpu-a]" || r.GPUs["h100"] != 2 {
		t.Errorf("recreated as %+v", r)
	}
	if got := p.booking(t, b.ID); got.StateAt(p.clock) != reserve.StateActive || got.Note != "" {
		t.Errorf("after: %s %q", got.StateAt(p.clock), got.Note)
	}
	// Its GPUs never left gpu-a: the node health credits of gpu-a's drain
	// count the booking there all along, not on gpu-b from the move.
	p.project(t)
	if ps := p.placements(t, b.ID); ps != "[gpu-a]" {
		t.Errorf("placement history %s; want [gpu-a] only", ps)
	}
}

// placements is a booking's placement history as its node lists.
func (p *projHarness) placements(t *testing.T, id int64) string {
	t.Helper()
	ps, err := p.st.Placements(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range ps[id] {
		out = append(out, fmt.Sprint(x.Nodes))
	}
	return strings.Join(out, " ")
}

// TestProjectReplacedWithRoom: slurmctld moved the reservation without
// its GPUs, but another node has them free: it is recreated there.
func TestProjectReplacedWithRoom(t *testing.T) {
	p := newMoveHarness(t)
	p.slurm.ReplaceDown = true
	p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=now", "duration=1d"))
	p.project(t)
	// gpu-b (no h100) first: the fake moves it there without GPUs.
	p.slurm.Nodes = []reserve.Node{p.slurm.Nodes[2], p.slurm.Nodes[0], p.slurm.Nodes[1]}
	p.slurm.SetDown("gpu-a", "DOWN")
	rep := p.project(t)
	if diff := cmp.Diff([]string{"recreate gpubridge-1 done"}, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if r := p.reservation(t, "gpubridge-1"); fmt.Sprint(r.Nodes) != "[gpu-c]" || r.GPUs["h100"] != 2 {
		t.Errorf("recreated as %+v", r)
	}
	p.project(t)
	if ps := p.placements(t, 1); ps != "[gpu-a] [gpu-c]" {
		t.Errorf("placement history %s; want [gpu-a] [gpu-c] (never gpu-b, where it held none)", ps)
	}
}

// TestProjectKeepsWhereACancelledBookingWas: once the projector has
// deleted a cancelled booking's reservation, the booking still says where
// it was (Held.Nodes, with no reservation: Slurm holds nothing), for the
// node health credits of a drain before the cancel; it commits nothing
// any more. (A booking that ended is not visited again once Slurm has
// removed its reservation, so it keeps its last Held as it was.)
func TestProjectKeepsWhereACancelledBookingWas(t *testing.T) {
	ctx := context.Background()
	p := newProjHarness(t)
	b := p.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=now", "duration=1h"))
	p.project(t)
	if _, err := p.svc.Cancel(ctx, "root", b.ID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"delete gpubridge-1 done"}, outcomes(p.project(t))); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	got := p.booking(t, b.ID)
	if got.State != reserve.StateCancelled || !got.Held.IsZero() || !cmp.Equal(got.Held.Nodes, []string{"gpu-a"}) {
		t.Errorf("cancelled: %+v; want cancelled, no reservation, nodes [gpu-a]", got)
	}
	if changed := len(p.project(t).Changed); changed != 0 {
		t.Errorf("a later projection recorded %d change(s); want none", changed)
	}
	p.mustAdd(t, kv("tenant=globex", "nodes=dgx:1", "start=now", "duration=1h"))
}

// TestProjectFragmentedGPUs is issue 25's fragment sequence on gpu-a's 4
// h100 (Slurm keeps particular GPUs per reservation, lowest free first):
// v = 2 [T+1h, T+2h) takes GPUs 0-1, q = 2 in the same window 2-3; v is
// cancelled; u = 2 [T, T+30m) takes 0-1; s = 2 [T, T+2h) is admitted (2 of
// 4 free at every instant) but no 2 GPUs are free for its whole window.
// The projector moves q (not started) onto 0-1 and s gets 2-3; every
// booking holds its reservation before its start.
func TestProjectFragmentedGPUs(t *testing.T) {
	p := newProjHarness(t)
	p.proj.Settings.LeadTime = 3 * time.Hour // every reservation at once
	T := p.clock.Add(10 * time.Minute)
	add := func(start time.Time, d string) reserve.Booking {
		return p.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start="+start.Format(time.RFC3339), "duration="+d))
	}
	v := add(T.Add(time.Hour), "1h")
	p.project(t)
	q := add(T.Add(time.Hour), "1h")
	p.project(t)
	if _, err := p.svc.Cancel(context.Background(), "alice", v.ID); err != nil {
		t.Fatal(err)
	}
	p.project(t)
	u := add(T, "30m")
	p.project(t)
	if got := p.slurm.GPUIndices("gpubridge-2"); !cmp.Equal(got, []int{2, 3}) {
		t.Fatalf("q holds GPUs %v; want 2,3 (the setup of the fragment)", got)
	}
	s := add(T, "2h")
	rep := p.project(t)
	// u, s and q by start: u (not started either, and overlapping s) is
	// re-created too, and lands where it was.
	want := []string{"create gpubridge-4 waiting", "recreate gpubridge-3 done", "create gpubridge-4 done", "recreate gpubridge-2 done"}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	for _, c := range []struct {
		b   reserve.Booking
		gpu []int
	}{{q, []int{0, 1}}, {u, []int{0, 1}}, {s, []int{2, 3}}} {
		got := p.booking(t, c.b.ID)
		if got.Held.Count != 2 || got.State != reserve.StateScheduled || got.Note != "" {
			t.Errorf("booking %d: %s held %d, note %q", c.b.ID, got.State, got.Held.Count, got.Note)
		}
		if idx := p.slurm.GPUIndices(got.Held.Reservation); !cmp.Equal(idx, c.gpu) {
			t.Errorf("booking %d holds GPUs %v; want %v", c.b.ID, idx, c.gpu)
		}
	}
	if len(rep.Unprojected) != 0 || len(rep.AtRisk) != 0 {
		t.Errorf("unprojected %v, at risk %v", rep.Unprojected, rep.AtRisk)
	}
	if rep := p.project(t); len(rep.Actions) != 0 {
		t.Errorf("second run: %v", outcomes(rep))
	}
}

// TestProjectFragmentsRandom: random books and cancels of h100 (gpu-a) and
// MIG profiles (gpu-b) over two hours on a 15-minute grid, projected after
// each; every booking admitted and not cancelled ends with its reservation
// (FakeSlurm keeps GPU indices as Slurm does). The seed is printed.
func TestProjectFragmentsRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	moves := 0
	for round := range 40 {
		p := newProjHarness(t)
		p.proj.Settings.LeadTime = 6 * time.Hour
		T := p.clock.Add(30 * time.Minute)
		var live []int64
		for range 24 {
			if len(live) > 2 && rng.IntN(3) == 0 {
				k := rng.IntN(len(live))
				if _, err := p.svc.Cancel(context.Background(), "alice", live[k]); err != nil {
					t.Fatal(err)
				}
				live = append(live[:k], live[k+1:]...)
			} else {
				typ, most := fragType(rng)
				start := T.Add(time.Duration(rng.IntN(8)) * 15 * time.Minute)
				d := time.Duration(1+rng.IntN(6)) * 15 * time.Minute
				b, err := p.add(t, kv("tenant=acme", fmt.Sprintf("gpus=%s:%d", typ, 1+rng.IntN(most)), "start="+start.Format(time.RFC3339), "duration="+reserve.FormatDuration(d)), reserve.Zone{})
				if err == nil {
					live = append(live, b.ID)
				}
			}
			for _, a := range p.project(t).Actions {
				if strings.Contains(a.Why, "GPUs fragmented") {
					moves++
				}
			}
		}
		for _, id := range live {
			if b := p.booking(t, id); b.Held.Count != b.Count || b.State != reserve.StateScheduled {
				t.Fatalf("round %d: booking %d (%s %v..%v) %s, held %+v, note %q", round, id, b.What(), b.Start, b.End, b.State, b.Held, b.Note)
			}
		}
	}
	t.Logf("%d reservation(s) moved to make room", moves)
}

// fragType draws a GPU type of the testbed and the most to book of it.
func fragType(rng *rand.Rand) (string, int) {
	switch rng.IntN(4) {
	case 0:
		return "1g.10gb", 4
	case 1:
		return "3g.40gb", 1
	}
	return "h100", 2
}

// TestProjectMakesRoomAcrossNodes: h100 on two nodes of 4. Slurm (here the
// fake: the first node with room) puts A and B (1 each) both on gpu-a and
// C (3) on gpu-c; D (3, admitted: a placement holds it) finds no node.
// The projector re-creates A, B and C (none started) in order of start,
// each pinned to the model's node, and D lands.
func TestProjectMakesRoomAcrossNodes(t *testing.T) {
	h := newHarness()
	h.src.inv.Nodes = append(h.src.inv.Nodes, reserve.Node{Name: "gpu-c", GPUs: map[string]int{"h100": 4}})
	fs := reservetest.NewFakeSlurm(h.src.inv.Nodes...)
	h.svc.Source = fs
	p := &projHarness{harness: h, slurm: fs}
	p.proj = &reserve.Projector{Store: h.st, Slurm: fs, Settings: h.svc.Settings, Now: func() time.Time { return h.clock }}
	p.proj.Settings.LeadTime = 6 * time.Hour
	add := func(n int, start string) reserve.Booking {
		b := p.mustAdd(t, kv("tenant=acme", fmt.Sprintf("gpus=h100:%d", n), "start="+start, "duration=5h"))
		p.project(t)
		return b
	}
	a, b := add(1, "now+10m"), add(1, "now+10m")
	c := add(3, "now+1h")
	if got := p.reservation(t, "gpubridge-3").Nodes; !cmp.Equal(got, []string{"gpu-c"}) {
		t.Fatalf("C on %v; want gpu-c", got)
	}
	d := p.mustAdd(t, kv("tenant=acme", "gpus=h100:3", "start=now+1h", "duration=5h"))
	rep := p.project(t)
	want := []string{"create gpubridge-4 waiting", "recreate gpubridge-1 done", "recreate gpubridge-2 done", "recreate gpubridge-3 done", "create gpubridge-4 done"}
	if diff := cmp.Diff(want, outcomes(rep)); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	on := map[string]int{}
	for _, x := range []reserve.Booking{a, b, c, d} {
		got := p.booking(t, x.ID)
		if got.Held.Count != x.Count || got.State != reserve.StateScheduled || len(got.Held.Nodes) != 1 {
			t.Errorf("booking %d: %s, held %+v, note %q", x.ID, got.State, got.Held, got.Note)
			continue
		}
		on[got.Held.Nodes[0]] += x.Count
	}
	if on["gpu-a"] != 4 || on["gpu-c"] != 4 {
		t.Errorf("GPUs per node %v; want 4 and 4", on)
	}
}
