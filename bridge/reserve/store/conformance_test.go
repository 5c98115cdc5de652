package store

// The conformance tests every Store passes: Memory in unit tests, DB in
// integration tests against the testbed's MariaDB (a scratch database).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// backend opens stores on one shared backing: each call is another
// process's view (its own connection pool, for DB).
type backend struct {
	open   func(t *testing.T) reserve.Store
	audits func(t *testing.T, kind string, id int64) []string // actions, oldest first
}

func conformance(t *testing.T, newBackend func(t *testing.T) backend) {
	t.Run("round trip", func(t *testing.T) { testRoundTrip(t, newBackend(t)) })
	t.Run("filters", func(t *testing.T) { testFilters(t, newBackend(t)) })
	t.Run("update and project", func(t *testing.T) { testUpdateProject(t, newBackend(t)) })
	t.Run("GPUs per node", func(t *testing.T) { testPerNode(t, newBackend(t)) })
	t.Run("placements", func(t *testing.T) { testPlacements(t, newBackend(t)) })
	t.Run("rollback", func(t *testing.T) { testRollback(t, newBackend(t)) })
	t.Run("maintenance", func(t *testing.T) { testMaintenance(t, newBackend(t)) })
	t.Run("concurrent admission", func(t *testing.T) { testConcurrentAdmission(t, newBackend(t)) })
	t.Run("conditional update", func(t *testing.T) { testConditionalUpdate(t, newBackend(t)) })
	t.Run("new locks at once", func(t *testing.T) { testNewLocks(t, newBackend(t)) })
	t.Run("concurrent changes of one booking", func(t *testing.T) { testConcurrentChanges(t, newBackend(t)) })
}

var c0 = time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)

func hr(n int) time.Time { return c0.Add(time.Duration(n) * time.Hour) }

func sample(tenant string, n int, from, to time.Time) reserve.Booking {
	return reserve.Booking{Tenant: tenant, Kind: reserve.KindGPU, GPUType: "h100", Count: n, Start: from, End: to, Purpose: "pre-training",
		State: reserve.StateRequested, CreatedBy: "alice", CreatedAt: c0.Add(-time.Hour), UpdatedAt: c0.Add(-time.Hour)}
}

func insert(t *testing.T, s reserve.Store, bs ...reserve.Booking) []reserve.Booking {
	t.Helper()
	out := make([]reserve.Booking, len(bs))
	err := s.Atomic(context.Background(), []reserve.Resource{"gpu:h100"}, func(tx reserve.Tx) error {
		for i, b := range bs {
			var err error
			if out[i], err = tx.Insert(context.Background(), "alice", b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testRoundTrip(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	node := reserve.Booking{Tenant: "bkacme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 2, Start: hr(1), End: hr(5), State: reserve.StateRequested,
		CreatedBy: "root", CreatedAt: c0.Add(123456 * time.Microsecond), UpdatedAt: c0}
	got := insert(t, s, sample("bkacme", 3, hr(0), hr(10)), node)
	if got[0].ID == 0 || got[1].ID <= got[0].ID {
		t.Fatalf("ids %d, %d", got[0].ID, got[1].ID)
	}
	for _, want := range got {
		b, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, b); diff != "" {
			t.Errorf("Get(%d) (-want +got)\n%s", want.ID, diff)
		}
	}
	if _, err := s.Get(ctx, got[1].ID+1000); !errors.Is(err, reserve.ErrNotFound) {
		t.Errorf("missing booking: %v", err)
	}
	if n, err := s.Stored(ctx); err != nil || n != 2 {
		t.Errorf("Stored = %d, %v", n, err)
	}
	if acts := be.audits(t, AuditBooking, got[0].ID); !cmp.Equal(acts, []string{"create"}) {
		t.Errorf("audit = %v", acts)
	}
}

func testFilters(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	bs := insert(t, s,
		sample("bka", 1, hr(0), hr(10)),
		sample("bkb", 1, hr(10), hr(20)),
		sample("bka", 1, hr(20), hr(30)),
	)
	mig := sample("bkb", 2, hr(0), hr(30))
	mig.GPUType = "1g.10gb"
	bs = append(bs, insert(t, s, mig)...)
	ids := func(bs []reserve.Booking) []int64 {
		var out []int64
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	cases := map[string]struct {
		f    reserve.Filter
		want []int64
	}{
		"all":                 {reserve.Filter{}, []int64{bs[0].ID, bs[3].ID, bs[1].ID, bs[2].ID}},
		"resource":            {reserve.Filter{Resources: []reserve.Resource{"gpu:h100"}}, []int64{bs[0].ID, bs[1].ID, bs[2].ID}},
		"tenant":              {reserve.Filter{Tenant: "bka"}, []int64{bs[0].ID, bs[2].ID}},
		"half-open: end":      {reserve.Filter{Resources: []reserve.Resource{"gpu:h100"}, From: hr(10), To: hr(20)}, []int64{bs[1].ID}},
		"one second overlap":  {reserve.Filter{Resources: []reserve.Resource{"gpu:h100"}, From: hr(10).Add(-time.Second), To: hr(10)}, []int64{bs[0].ID}},
		"from only":           {reserve.Filter{From: hr(25)}, []int64{bs[3].ID, bs[2].ID}},
		"to only":             {reserve.Filter{To: hr(1)}, []int64{bs[0].ID, bs[3].ID}},
		"ids":                 {reserve.Filter{IDs: []int64{bs[2].ID, bs[0].ID}}, []int64{bs[0].ID, bs[2].ID}},
		"tenant and resource": {reserve.Filter{Tenant: "bkb", Resources: []reserve.Resource{"gpu:1g.10gb"}}, []int64{bs[3].ID}},
	}
	for name, c := range cases {
		got, err := s.List(ctx, c.f)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, ids(got)); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
	}
	// A cancelled booking without a Slurm reservation has an empty span;
	// with one, it spans what Slurm holds.
	err := s.Atomic(ctx, nil, func(tx reserve.Tx) error {
		b, _ := tx.Get(ctx, bs[1].ID)
		b.State, b.CancelledAt, b.CancelledBy = reserve.StateCancelled, c0, "bob"
		return tx.Update(ctx, "bob", "cancel", b)
	})
	if err != nil {
		t.Fatal(err)
	}
	win := reserve.Filter{Resources: []reserve.Resource{"gpu:h100"}, From: hr(12), To: hr(13)}
	if got, _ := s.List(ctx, win); len(got) != 0 {
		t.Errorf("released cancelled booking overlaps: %+v", got)
	}
	if err := s.Project(ctx, "gpubridge", bs[1].ID, reserve.StateCancelled, reserve.Held{Reservation: "gpubridge-x", Start: hr(11), End: hr(14), Count: 1}, "delete refused"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.List(ctx, win); len(got) != 1 || got[0].ID != bs[1].ID {
		t.Errorf("cancelled booking still held in Slurm does not overlap: %+v", got)
	}
	if got, _ := s.List(ctx, reserve.Filter{From: hr(14), To: hr(15), Resources: []reserve.Resource{"gpu:h100"}}); len(got) != 0 {
		t.Errorf("cancelled booking spans beyond what Slurm holds: %+v", got)
	}
	// What Slurm holds widens a live booking's span.
	if err := s.Project(ctx, "gpubridge", bs[0].ID, reserve.StateScheduled, reserve.Held{Reservation: "gpubridge-y", Start: hr(0), End: hr(12), Count: 1}, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.List(ctx, reserve.Filter{From: hr(11), To: hr(12), Tenant: "bka"}); len(got) != 1 || got[0].ID != bs[0].ID {
		t.Errorf("held part not in the span: %+v", got)
	}
}

// testPlacements: each move to other nodes that Project records starts a
// placement, in order; the same nodes again, an empty node list (a drained
// node taken out of the reservation), a node that holds none of the
// booked GPUs (Slurm moved the reservation off a drained node to one
// without them free), the same nodes after it, or a
// reservation gone with its nodes kept, start none; the kept nodes read
// back without a reservation; a booking never placed has no history.
func testPlacements(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	bs := insert(t, s, sample("bkacme", 2, hr(0), hr(10)), sample("bkacme", 1, hr(0), hr(10)))
	id := bs[0].ID
	t0 := time.Now().Add(-time.Second)
	steps := []reserve.Held{
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-a"}},
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-a"}}, // the same: no placement
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10)},                                     // Slurm took the drained node out: none
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-a"}}, // back: still where it was
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Nodes: []string{"gpu-d"}},           // moved without its GPUs: none
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-a"}}, // back: still where it was
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Nodes: []string{"gpu-d"}},           // moved without them again
		{Reservation: "gpubridge-1", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-d"}}, // gpu-d has them now: placed there
		{Reservation: "gpubridge-2", Start: hr(0), End: hr(10), Count: 2, Nodes: []string{"gpu-b", "gpu-c"}},
		{Nodes: []string{"gpu-b", "gpu-c"}}, // the reservation is gone, where it was stays
	}
	for _, h := range steps {
		if err := s.Project(ctx, "gpubridge", id, reserve.StateScheduled, h, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t1 := time.Now().Add(time.Second)
	ps, err := s.Placements(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ps[bs[1].ID]; ok || len(ps) != 1 {
		t.Errorf("placements of %d bookings, of the unplaced one %v; want only the placed one's", len(ps), ps[bs[1].ID])
	}
	got := ps[id]
	var nodes []string
	for i, p := range got {
		nodes = append(nodes, fmt.Sprint(p.Nodes))
		if p.Since.Before(t0) || p.Since.After(t1) || i > 0 && !p.Since.After(got[i-1].Since) {
			t.Errorf("placement %d since %v: not in order within the test's time", i, p.Since)
		}
	}
	if want := []string{"[gpu-a]", "[gpu-d]", "[gpu-b gpu-c]"}; !cmp.Equal(nodes, want) {
		t.Errorf("placements %v; want %v", nodes, want)
	}
	b, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Held.IsZero() || !cmp.Equal(b.Held.Nodes, []string{"gpu-b", "gpu-c"}) {
		t.Errorf("held after the reservation went: %+v; want no reservation and its last nodes", b.Held)
	}
}

func testUpdateProject(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	b := insert(t, s, sample("bkacme", 2, hr(0), hr(10)))[0]
	mod := b
	mod.Count, mod.End, mod.Purpose, mod.UpdatedAt = 3, hr(12), "fine-tuning", c0
	mod.Held = reserve.Held{Reservation: "ignored", Start: hr(0), End: hr(1), Count: 9} // Update never writes Held
	if err := s.Atomic(ctx, []reserve.Resource{"gpu:h100"}, func(tx reserve.Tx) error { return tx.Update(ctx, "bob", "modify", mod) }); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, b.ID)
	want := mod
	want.Held, want.Version = reserve.Held{}, 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after modify (-want +got)\n%s", diff)
	}
	held := reserve.Held{Reservation: "gpubridge-1", Start: hr(0), End: hr(12), Count: 3, Nodes: []string{"gpu-a"}}
	if err := s.Project(ctx, "gpubridge", b.ID, reserve.StateScheduled, held, ""); err != nil {
		t.Fatal(err)
	}
	// The same again is no change (no audit row); a note alone is not
	// audited either.
	if err := s.Project(ctx, "gpubridge", b.ID, reserve.StateScheduled, held, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Project(ctx, "gpubridge", b.ID, reserve.StateScheduled, held, "waiting"); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, b.ID)
	if got.State != reserve.StateScheduled || !cmp.Equal(got.Held, held) || got.Note != "waiting" {
		t.Errorf("after project: %+v", got)
	}
	// A cancel made meanwhile is never undone by the projector.
	if err := s.Atomic(ctx, nil, func(tx reserve.Tx) error {
		c := got
		c.State, c.CancelledAt, c.CancelledBy = reserve.StateCancelled, c0, "bob"
		return tx.Update(ctx, "bob", "cancel", c)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Project(ctx, "gpubridge", b.ID, reserve.StateActive, reserve.Held{}, ""); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Get(ctx, b.ID)
	if got.State != reserve.StateCancelled || !got.Held.IsZero() || got.CancelledBy != "bob" || !got.CancelledAt.Equal(c0) {
		t.Errorf("after project of a cancelled booking: %+v", got)
	}
	if err := s.Project(ctx, "gpubridge", b.ID+1000, reserve.StateActive, reserve.Held{}, ""); !errors.Is(err, reserve.ErrNotFound) {
		t.Errorf("project missing: %v", err)
	}
	want2 := []string{"create", "modify", "project", "cancel", "project"}
	if acts := be.audits(t, AuditBooking, b.ID); !cmp.Equal(acts, want2) {
		t.Errorf("audit = %v; want %v", acts, want2)
	}
}

// testPerNode: a node booking's recorded GPUs per node round-trips, and
// the three cases stay apart: GPUs of two types, a class without GPUs
// (empty, not nil), and a booking stored without the figure (nil).
func testPerNode(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	node := func(per map[string]int) reserve.Booking {
		return reserve.Booking{Tenant: "bkacme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 2, Start: hr(1), End: hr(5), State: reserve.StateRequested,
			CreatedBy: "root", CreatedAt: c0, UpdatedAt: c0, PerNode: per}
	}
	got := insert(t, s, node(map[string]int{"h100": 4, "1g.10gb": 7}), node(map[string]int{}), node(nil))
	for _, want := range got {
		b, err := s.Get(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.PerNode, b.PerNode); diff != "" {
			t.Errorf("Get(%d).PerNode (-want +got)\n%s", want.ID, diff)
		}
	}
	// Update writes it (a modify that re-admits records the pool's figure
	// again); a cancel keeps what it read.
	mod := got[2]
	mod.Count, mod.PerNode = 1, map[string]int{"h100": 8}
	if err := s.Atomic(ctx, nil, func(tx reserve.Tx) error { return tx.Update(ctx, "bob", "modify", mod) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Atomic(ctx, nil, func(tx reserve.Tx) error {
		c, err := tx.Get(ctx, got[0].ID)
		if err != nil {
			return err
		}
		c.State, c.CancelledAt, c.CancelledBy = reserve.StateCancelled, c0, "bob"
		return tx.Update(ctx, "bob", "cancel", c)
	}); err != nil {
		t.Fatal(err)
	}
	all, err := s.List(ctx, reserve.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	wants := map[int64]map[string]int{got[0].ID: {"1g.10gb": 7, "h100": 4}, got[1].ID: {}, got[2].ID: {"h100": 8}}
	for _, b := range all {
		if diff := cmp.Diff(wants[b.ID], b.PerNode); diff != "" {
			t.Errorf("List: booking %d PerNode (-want +got)\n%s", b.ID, diff)
		}
	}
}

func testRollback(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	boom := errors.New("boom")
	var id int64
	err := s.Atomic(ctx, []reserve.Resource{"gpu:h100"}, func(tx reserve.Tx) error {
		b, err := tx.Insert(ctx, "alice", sample("bkacme", 1, hr(0), hr(1)))
		id = b.ID
		if err != nil {
			return err
		}
		if _, err := tx.InsertMaintenance(ctx, "alice", reserve.Maintenance{Nodes: []string{"gpu-a"}, Start: hr(0), End: hr(1), CreatedBy: "alice", CreatedAt: c0}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Atomic = %v; want boom", err)
	}
	if bs, _ := s.List(ctx, reserve.Filter{}); len(bs) != 0 {
		t.Errorf("rolled back booking stored: %+v", bs)
	}
	if ms, _ := s.Maintenance(ctx); len(ms) != 0 {
		t.Errorf("rolled back maintenance stored: %+v", ms)
	}
	if acts := be.audits(t, AuditBooking, id); len(acts) != 0 {
		t.Errorf("rolled back audit rows: %v", acts)
	}
}

func testMaintenance(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	var ms []reserve.Maintenance
	err := s.Atomic(ctx, []reserve.Resource{"gpu:h100", "node:dgx"}, func(tx reserve.Tx) error {
		for _, m := range []reserve.Maintenance{
			{Nodes: []string{"gpu-a", "gpu-b"}, Start: hr(5), End: hr(6), Reason: "firmware", CreatedBy: "root", CreatedAt: c0},
			{Nodes: []string{"gpu-a"}, Start: hr(1), End: hr(2), CreatedBy: "root", CreatedAt: c0},
		} {
			m, err := tx.InsertMaintenance(ctx, "root", m)
			if err != nil {
				return err
			}
			ms = append(ms, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Maintenance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]reserve.Maintenance{ms[1], ms[0]}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if err := s.Atomic(ctx, nil, func(tx reserve.Tx) error {
		m, err := tx.DeleteMaintenance(ctx, "root", ms[0].ID)
		if err == nil && m.Reason != "firmware" {
			return fmt.Errorf("deleted %+v", m)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Atomic(ctx, nil, func(tx reserve.Tx) error { _, err := tx.DeleteMaintenance(ctx, "root", ms[0].ID); return err }); !errors.Is(err, reserve.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if got, _ := s.Maintenance(ctx); len(got) != 1 || got[0].ID != ms[1].ID {
		t.Errorf("after delete: %+v", got)
	}
	if acts := be.audits(t, AuditMaintenance, ms[0].ID); !cmp.Equal(acts, []string{"create", "delete"}) {
		t.Errorf("audit = %v", acts)
	}
}

// testConcurrentAdmission: clients on several store handles (processes)
// race to book a 4-GPU resource over overlapping windows, each reading the
// overlapping bookings and inserting only what fits; the sum of what was
// stored never exceeds 4 at any instant, and every refused request indeed
// did not fit what was stored.
func testConcurrentAdmission(t *testing.T, be backend) {
	ctx := context.Background()
	const clients, capacity = 24, 4
	stores := []reserve.Store{be.open(t), be.open(t), be.open(t)}
	type req struct {
		n        int
		from, to time.Time
	}
	var reqs []req
	for i := range clients {
		reqs = append(reqs, req{n: 1 + i%3, from: hr(i % 5), to: hr(i%5 + 3)})
	}
	adm := reserve.Admission{Settings: reserve.Settings{Prefix: "gpubridge-"}, Inventory: reserve.Inventory{Nodes: []reserve.Node{{Name: "gpu-a", GPUs: map[string]int{"h100": capacity}}}}, Now: c0.Add(-time.Hour)}
	var wg sync.WaitGroup
	refused := make([]bool, clients)
	errs := make([]error, clients)
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i%len(stores)]
			errs[i] = s.Atomic(ctx, []reserve.Resource{"gpu:h100"}, func(tx reserve.Tx) error {
				others, err := tx.Bookings(ctx, reserve.Filter{Resources: []reserve.Resource{"gpu:h100"}, From: r.from, To: r.to})
				if err != nil {
					return err
				}
				b := sample("bkrace", r.n, r.from, r.to)
				if adm.Check(b, others) != nil {
					refused[i] = true
					return nil
				}
				_, err = tx.Insert(ctx, "race", b)
				return err
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	stored, err := stores[0].List(ctx, reserve.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var cs []reserve.Commitment
	for _, b := range stored {
		cs = append(cs, adm.Settings.Commitments(b, adm.Inventory)...)
	}
	cal := reserve.NewCalendar(reserve.Capacity{Resource: "gpu:h100", Total: capacity}, cs)
	for _, seg := range cal.Segments(hr(-1), hr(10)) {
		if seg.Committed > capacity {
			t.Fatalf("overbooked: %d of %d from %v to %v", seg.Committed, capacity, seg.From, seg.To)
		}
	}
	admitted := 0
	for i, r := range reqs {
		if !refused[i] {
			admitted++
			continue
		}
		if adm.Check(sample("bkrace", r.n, r.from, r.to), stored) == nil {
			t.Errorf("request %d (%d GPUs %v..%v) was refused but fits what was stored", i, r.n, r.from, r.to)
		}
	}
	if admitted != len(stored) || admitted == 0 || admitted == clients {
		t.Errorf("admitted %d, stored %d of %d", admitted, len(stored), clients)
	}
}

// testConditionalUpdate: Update writes only over the version it was
// computed from; every stored change (Update, Project) makes a new version,
// and a write from an older one is refused with ErrChanged, writing
// nothing and auditing nothing.
func testConditionalUpdate(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t)
	b := insert(t, s, sample("bkacme", 2, hr(0), hr(10)))[0]
	update := func(b reserve.Booking, action string) error {
		return s.Atomic(ctx, nil, func(tx reserve.Tx) error { return tx.Update(ctx, "bob", action, b) })
	}
	read, err := s.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if read.Version != 0 {
		t.Fatalf("a new booking's version is %d; want 0", read.Version)
	}
	mod := read
	mod.End = hr(12)
	if err := update(mod, "modify"); err != nil {
		t.Fatal(err)
	}
	// A cancel computed from the first read is refused: the modify came
	// between.
	stale := read
	stale.State, stale.CancelledAt, stale.CancelledBy = reserve.StateCancelled, c0, "carol"
	if err := update(stale, "cancel"); !errors.Is(err, reserve.ErrChanged) {
		t.Fatalf("update from version 0 after a modify: %v; want ErrChanged", err)
	}
	got, _ := s.Get(ctx, b.ID)
	if got.State != reserve.StateRequested || !got.End.Equal(hr(12)) || got.Version != 1 {
		t.Fatalf("after the refused cancel: state %s end %v version %d; want requested, %v, 1", got.State, got.End, got.Version, hr(12))
	}
	// The projector's record is a change too.
	if err := s.Project(ctx, "gpubridge", b.ID, reserve.StateScheduled, reserve.Held{Reservation: "gpubridge-1", Start: hr(0), End: hr(12), Count: 2}, ""); err != nil {
		t.Fatal(err)
	}
	got.Purpose = "stale"
	if err := update(got, "modify"); !errors.Is(err, reserve.ErrChanged) {
		t.Fatalf("update from the version before a projection: %v; want ErrChanged", err)
	}
	now, _ := s.Get(ctx, b.ID)
	if now.Version != 2 || now.Purpose == "stale" {
		t.Fatalf("after project and a refused modify: version %d purpose %q; want 2, unchanged", now.Version, now.Purpose)
	}
	now.State, now.CancelledAt, now.CancelledBy = reserve.StateCancelled, c0, "carol"
	if err := update(now, "cancel"); err != nil {
		t.Fatalf("update from the stored version: %v", err)
	}
	want := []string{"create", "modify", "project", "cancel"}
	if acts := be.audits(t, AuditBooking, b.ID); !cmp.Equal(acts, want) {
		t.Errorf("audit = %v; want %v (nothing for the refused writes)", acts, want)
	}
}

// testConcurrentChanges: clients of several processes each read one
// booking in a transaction and cancel it when it is not cancelled yet; the
// read holds the row, so exactly one cancel is stored and audited, and
// every other client sees the cancel (or, with a snapshot read, is
// refused with ErrChanged), never overwrites it.
func testConcurrentChanges(t *testing.T, be backend) {
	ctx := context.Background()
	const clients = 16
	stores := []reserve.Store{be.open(t), be.open(t), be.open(t)}
	b := insert(t, stores[0], sample("bkacme", 1, hr(0), hr(10)))[0]
	errAlready := errors.New("cancelled already")
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = stores[i%len(stores)].Atomic(ctx, nil, func(tx reserve.Tx) error {
				cur, err := tx.Get(ctx, b.ID)
				if err != nil {
					return err
				}
				if cur.Cancelled() {
					return errAlready
				}
				cur.State, cur.CancelledAt, cur.CancelledBy = reserve.StateCancelled, c0, fmt.Sprintf("client%d", i)
				return tx.Update(ctx, cur.CancelledBy, "cancel", cur)
			})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, errAlready), errors.Is(err, reserve.ErrChanged):
		default:
			t.Fatalf("client %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d cancels stored; want exactly 1", won)
	}
	want := []string{"create", "cancel"}
	if acts := be.audits(t, AuditBooking, b.ID); !cmp.Equal(acts, want) {
		t.Errorf("audit = %v; want %v", acts, want)
	}
}

// testNewLocks: many processes taking lock rows that do not exist yet (a
// new tenant's or type's) at once all get them: creating the rows never
// fails a transaction (it deadlocked before: one INSERT of several rows
// each, not retried).
func testNewLocks(t *testing.T, be backend) {
	ctx := context.Background()
	const clients = 24
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		s := be.open(t) // a process each: none knows the rows exist
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks := []reserve.Resource{"gpu:new1", "gpu:new2", "tenant:new3", reserve.Resource(fmt.Sprintf("tenant:own%d", i%5))}
			errs[i] = s.Atomic(ctx, locks, func(reserve.Tx) error { return nil })
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
}
