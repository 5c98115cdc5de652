package reserve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/internal/money"
)

type fakeSource struct{ inv reserve.Inventory }

func (f *fakeSource) Inventory(context.Context) (reserve.Inventory, error) { return f.inv, nil }

type fakeTenants map[string]*reserve.Policy

func (f fakeTenants) BookingTenant(_ context.Context, name string) (reserve.TenantInfo, error) {
	p, ok := f[name]
	if !ok {
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q: %w", name, reserve.ErrUnknownTenant)
	}
	if p == nil {
		return reserve.TenantInfo{}, nil
	}
	return reserve.TenantInfo{Policy: *p, Own: true}, nil
}

var now0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

type harness struct {
	svc   *reserve.Service
	st    *store.Memory
	src   *fakeSource
	clock time.Time
}

func newHarness() *harness {
	h := &harness{st: store.NewMemory(), clock: now0}
	h.src = &fakeSource{inv: reserve.Inventory{Nodes: []reserve.Node{
		{Name: "gpu-a", GPUs: map[string]int{"h100": 4}},
		{Name: "gpu-b", GPUs: map[string]int{"1g.10gb": 7, "3g.40gb": 2}},
	}}}
	strict := &reserve.Policy{MaxWindow: reserve.Span(14 * 24 * time.Hour), MaxHorizon: reserve.Span(180 * 24 * time.Hour)}
	h.svc = &reserve.Service{
		Store: h.st, Source: h.src,
		Tenants: fakeTenants{"acme": nil, "globex": nil, "initech": strict},
		Settings: reserve.Settings{Prefix: "gpubridge-", LeadTime: time.Hour, NodeClasses: map[string][]string{"dgx": {"gpu-a"}},
			DefaultPolicy: reserve.Policy{MaxHorizon: reserve.Span(365 * 24 * time.Hour)}},
		Now: func() time.Time { return h.clock },
	}
	return h
}

func (h *harness) add(t *testing.T, kv map[string]string, zone reserve.Zone) (reserve.Booking, error) {
	t.Helper()
	r, ps := reserve.ParseAdd(kv, h.clock, zone)
	if len(ps) > 0 {
		return reserve.Booking{}, ps
	}
	return h.svc.Add(context.Background(), "alice", r)
}

func (h *harness) mustAdd(t *testing.T, kv map[string]string) reserve.Booking {
	t.Helper()
	b, err := h.add(t, kv, reserve.Zone{})
	if err != nil {
		t.Fatalf("add %v: %v", kv, err)
	}
	return b
}

func kv(pairs ...string) map[string]string {
	m := map[string]string{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		m[k] = v
	}
	return m
}

// TestNextAvailableFarAhead: a tenant without a booking horizon asks for
// a window beyond the search horizon (2 years from now) that does not fit;
// the next window is looked for from the asked start, not from now (which
// left nothing to search and named a time before the asked start).
func TestNextAvailableFarAhead(t *testing.T) {
	h := newHarness()
	h.svc.Tenants = fakeTenants{"acme": &reserve.Policy{}}
	h.mustAdd(t, kv("tenant=acme", "gpus=h100:4", "start=2099-12-02T00:00Z", "duration=14d"))
	_, err := h.add(t, kv("tenant=acme", "gpus=h100:1", "start=2099-12-15T23:59:59Z", "duration=1d"), reserve.Zone{})
	if err == nil || !strings.Contains(err.Error(), "next available: 2099-12-16T00:00:00Z (h100:1 for 1d, until 2099-12-17T00:00:00Z)") {
		t.Errorf("refusal: %v\nwant the next window right after the booking in the way", err)
	}
}

// TestAddBadInput: every kind of bad input is refused with the field it
// concerns, and nothing is stored.
func TestAddBadInput(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	cases := map[string]struct {
		args  map[string]string
		zone  reserve.Zone
		field string
		msg   string
	}{
		"end before start": {args: kv("tenant=acme", "gpus=h100:1", "start=2026-12-02T00:00Z", "end=2026-12-01T00:00Z"), field: "end", msg: "is not after start"},
		"end equals start": {args: kv("tenant=acme", "gpus=h100:1", "start=2026-12-02T00:00Z", "end=2026-12-02T00:00Z"), field: "end", msg: "is not after start"},
		"zero count":       {args: kv("tenant=acme", "gpus=h100:0", "start=now+1d", "duration=1d"), field: "gpus", msg: "count is 0"},
		"negative count":   {args: kv("tenant=acme", "gpus=h100:-2", "start=now+1d", "duration=1d"), field: "gpus", msg: "count -2 is negative"},
		"no count":         {args: kv("tenant=acme", "gpus=h100", "start=now+1d", "duration=1d"), field: "gpus", msg: "want NAME:COUNT"},
		"unknown type":     {args: kv("tenant=acme", "gpus=a100:1", "start=now+1d", "duration=1d"), field: "gpus", msg: `the pool has no GPUs of type "a100" (types: 1g.10gb, 3g.40gb, h100)`},
		"more than pool":   {args: kv("tenant=acme", "gpus=h100:5", "start=now+1d", "duration=1d"), field: "gpus", msg: "5 h100 is more than the pool holds (4)"},
		"unknown class":    {args: kv("tenant=acme", "nodes=hgx:1", "start=now+1d", "duration=1d"), field: "nodes", msg: `no node class "hgx"`},
		"too many nodes":   {args: kv("tenant=acme", "nodes=dgx:2", "start=now+1d", "duration=1d"), field: "nodes", msg: "more than the pool holds (1)"},
		"past start":       {args: kv("tenant=acme", "gpus=h100:1", "start=now-2h", "duration=1d"), field: "start", msg: "is in the past"},
		"beyond horizon":   {args: kv("tenant=acme", "gpus=h100:1", "start=now+364d", "duration=2d"), field: "duration", msg: "beyond the booking horizon of 365d"},
		"window limit":     {args: kv("tenant=initech", "gpus=h100:1", "start=now+1d", "duration=15d"), field: "duration", msg: "longer than tenant initech may book at once (policy maxWindow 14d)"},
		"unknown tenant":   {args: kv("tenant=hooli", "gpus=h100:1", "start=now+1d", "duration=1d"), field: "tenant", msg: `tenant "hooli": unknown tenant`},
		"no tenant":        {args: kv("gpus=h100:1", "start=now+1d", "duration=1d"), field: "tenant", msg: "required"},
		"no zone":          {args: kv("tenant=acme", "gpus=h100:1", "start=2026-12-14T09:00", "duration=1d"), field: "start", msg: "has no offset and TZ is not set"},
		"dst gap":          {args: kv("tenant=acme", "gpus=h100:1", "start=2027-03-14T02:30", "duration=1d"), zone: reserve.Zone{Name: "America/New_York", Location: ny}, field: "start", msg: "does not exist in America/New_York"},
		"dst ambiguous":    {args: kv("tenant=acme", "gpus=h100:1", "start=now+1d", "end=2026-11-01T01:30"), zone: reserve.Zone{Name: "America/New_York", Location: ny}, field: "end", msg: "is ambiguous"},
		"both end and dur": {args: kv("tenant=acme", "gpus=h100:1", "start=now+1d", "end=now+2d", "duration=1d"), field: "end", msg: "not both"},
		"no what":          {args: kv("tenant=acme", "start=now+1d", "duration=1d"), field: "gpus", msg: "required"},
		"gpus and nodes":   {args: kv("tenant=acme", "gpus=h100:1", "nodes=dgx:1", "start=now+1d", "duration=1d"), field: "gpus", msg: "not both"},
		"bad duration":     {args: kv("tenant=acme", "gpus=h100:1", "start=now+1d", "duration=1y"), field: "duration", msg: "units w, d, h, m or s"},
		"purpose control":  {args: kv("tenant=acme", "gpus=h100:1", "start=now+1d", "duration=1d", "purpose=a\x07b"), field: "purpose", msg: "control character"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness()
			_, err := h.add(t, c.args, c.zone)
			var ps reserve.Problems
			if !errors.As(err, &ps) || !errors.Is(err, reserve.ErrInvalid) {
				t.Fatalf("err = %v; want Problems", err)
			}
			found := false
			for _, p := range ps {
				if p.Field == c.field && strings.Contains(p.Msg, c.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("problems:\n%v\nwant field %q with %q", ps, c.field, c.msg)
			}
			if !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("message does not say nothing was changed: %v", err)
			}
			if bs, _ := h.st.List(context.Background(), reserve.Filter{}); len(bs) != 0 {
				t.Errorf("stored %+v", bs)
			}
		})
	}
}

func TestAddBackToBackAndOverlap(t *testing.T) {
	h := newHarness()
	a := h.mustAdd(t, kv("tenant=acme", "gpus=h100:4", "start=2026-12-01T00:00Z", "end=2026-12-08T00:00Z", "purpose=pre-training"))
	if a.ID == 0 || a.State != reserve.StateRequested || a.CreatedBy != "alice" || !a.CreatedAt.Equal(now0) {
		t.Errorf("added %+v", a)
	}
	h.mustAdd(t, kv("tenant=globex", "gpus=h100:4", "start=2026-12-08T00:00Z", "duration=7d"))
	_, err := h.add(t, kv("tenant=acme", "gpus=h100:2", "start=2026-12-14T23:59:59Z", "duration=1d"), reserve.Zone{})
	var ref *reserve.Refusal
	if !errors.As(err, &ref) || !errors.Is(err, reserve.ErrNoCapacity) {
		t.Fatalf("err = %v; want a Refusal", err)
	}
	msg := err.Error()
	for _, w := range []string{
		"short 2 h100 from 2026-12-14T23:59:59Z to 2026-12-15T00:00:00Z: 0 free of 4 (booked 4; asked 2)",
		"conflicts with 1 booking(s) of other tenants (holding up to 4 h100 at once there)",
		"next available: 2026-12-15T00:00:00Z (h100:2 for 1d, until 2026-12-16T00:00:00Z)",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal:\n%s\nwant %q", msg, w)
		}
	}
	if strings.Contains(msg, "globex") {
		t.Errorf("refusal names the other tenant:\n%s", msg)
	}
	if bs, _ := h.st.List(context.Background(), reserve.Filter{}); len(bs) != 2 {
		t.Errorf("stored %d bookings; want 2", len(bs))
	}
	// The own tenant's conflicting booking is shown in full.
	_, err = h.add(t, kv("tenant=acme", "gpus=h100:1", "start=2026-12-07T23:59:59Z", "duration=1h"), reserve.Zone{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`conflicts with booking %d (acme, h100:4, 2026-12-01T00:00:00Z..2026-12-08T00:00:00Z, "pre-training")`, a.ID)) {
		t.Errorf("own conflict not in full: %v", err)
	}
}

func TestModifyCancel(t *testing.T) {
	ctx := context.Background()
	h := newHarness()
	a := h.mustAdd(t, kv("tenant=acme", "gpus=h100:2", "start=2026-12-01T00:00Z", "duration=2d"))
	g := h.mustAdd(t, kv("tenant=globex", "gpus=h100:2", "start=2026-12-02T00:00Z", "duration=2d"))
	three := 3
	if _, _, err := h.svc.Modify(ctx, "bob", a.ID, reserve.Change{Count: &three}); !errors.Is(err, reserve.ErrNoCapacity) {
		t.Errorf("growing into globex's GPUs: %v", err)
	}
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	before, after, err := h.svc.Modify(ctx, "bob", a.ID, reserve.Change{End: &end})
	if err != nil || !after.End.Equal(end) || !before.End.Equal(a.End) {
		t.Fatalf("shrink: %v %+v", err, after)
	}
	if _, after, err = h.svc.Modify(ctx, "bob", a.ID, reserve.Change{Count: &three}); err != nil || after.Count != 3 {
		t.Errorf("grow after shrink (back-to-back with globex): %v", err)
	}
	other := "h200"
	if _, _, err := h.svc.Modify(ctx, "bob", a.ID, reserve.Change{Type: &other, Count: &three}); !errors.Is(err, reserve.ErrInvalid) || !strings.Contains(err.Error(), "type or class cannot change") {
		t.Errorf("type change: %v", err)
	}
	// Once active, the start cannot move; the end can (the clock has
	// fractions of a second, the times none).
	h.clock = time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)
	st := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	if _, _, err := h.svc.Modify(ctx, "bob", a.ID, reserve.Change{Start: &st}); err == nil || !strings.Contains(err.Error(), "an active booking's start cannot move") {
		t.Errorf("move active start: %v", err)
	}
	d := 20 * time.Hour
	if _, after, err := h.svc.Modify(ctx, "bob", a.ID, reserve.Change{Duration: &d}); err != nil || !after.End.Equal(a.Start.Add(d)) {
		t.Errorf("duration: %v %+v", err, after)
	}
	c, err := h.svc.Cancel(ctx, "carol", g.ID)
	if err != nil || c.State != reserve.StateCancelled || c.CancelledBy != "carol" {
		t.Fatalf("cancel: %v %+v", err, c)
	}
	if _, err := h.svc.Cancel(ctx, "carol", g.ID); !errors.Is(err, reserve.ErrInvalid) {
		t.Errorf("second cancel: %v", err)
	}
	if _, err := h.svc.Cancel(ctx, "carol", 999); !errors.Is(err, reserve.ErrNotFound) {
		t.Errorf("cancel missing: %v", err)
	}
	// Its GPUs are free again.
	h.mustAdd(t, kv("tenant=initech", "gpus=h100:1", "start=2026-12-02T00:00Z", "duration=1d"))
	bs, _ := h.svc.List(ctx, reserve.ListFilter{States: []reserve.State{reserve.StateCancelled}})
	if len(bs) != 1 || bs[0].ID != g.ID {
		t.Errorf("cancelled list: %+v", bs)
	}
	// Active without a Slurm reservation: at risk.
	bs, _ = h.svc.List(ctx, reserve.ListFilter{Tenant: "acme"})
	if len(bs) != 1 || bs[0].State != reserve.StateAtRisk {
		t.Errorf("acme list: %+v", bs)
	}
	var acts []string
	for _, e := range h.st.Audit() {
		acts = append(acts, e.Action+" "+e.ObjectName+" "+e.Actor)
	}
	want := []string{"create 1 alice", "create 2 alice", "modify 1 bob", "modify 1 bob", "modify 1 bob", "cancel 2 carol", "create 3 alice"}
	if diff := cmp.Diff(want, acts); diff != "" {
		t.Errorf("audit (-want +got)\n%s", diff)
	}
}

func TestAvailabilityFindSlotsMaintenance(t *testing.T) {
	ctx := context.Background()
	h := newHarness()
	day := func(d int) time.Time { return time.Date(2026, 12, d, 0, 0, 0, 0, time.UTC) }
	h.mustAdd(t, kv("tenant=acme", "gpus=h100:3", "start=2026-12-01T00:00Z", "end=2026-12-03T00:00Z"))
	h.mustAdd(t, kv("tenant=globex", "nodes=dgx:1", "start=2026-12-04T00:00Z", "end=2026-12-05T00:00Z"))
	m, hit, err := h.svc.AddMaintenance(ctx, "root", reserve.Maintenance{Nodes: []string{"gpu-b"}, Start: day(2), End: day(3), Reason: "firmware"})
	if err != nil || len(hit) != 0 || m.ID == 0 {
		t.Fatalf("maintenance: %v %v %+v", err, hit, m)
	}
	av, err := h.svc.Availability(ctx, reserve.AvailabilityQuery{Types: []string{"h100", "1g.10gb", "node:dgx"}, From: day(1), To: day(6), Step: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	free := map[reserve.Resource][]int{}
	for _, r := range av.Resources {
		for _, b := range r.Buckets {
			free[r.Resource] = append(free[r.Resource], b.Free)
		}
	}
	want := map[reserve.Resource][]int{
		"gpu:h100":    {1, 1, 4, 0, 4},
		"gpu:1g.10gb": {7, 0, 7, 7, 7},
		"node:dgx":    {0, 0, 1, 0, 1},
	}
	if diff := cmp.Diff(want, free); diff != "" {
		t.Errorf("free per day (-want +got)\n%s", diff)
	}
	slots, err := h.svc.FindSlots(ctx, reserve.SlotQuery{Type: "h100", Count: 4, Duration: 24 * time.Hour, After: day(1)})
	if err != nil {
		t.Fatal(err)
	}
	wantSlots := []reserve.Slot{{Start: day(3), End: day(4), Latest: day(3)}, {Start: day(5), End: day(6)}}
	if diff := cmp.Diff(wantSlots, slots); diff != "" {
		t.Errorf("slots (-want +got)\n%s", diff)
	}
	if _, err := h.svc.FindSlots(ctx, reserve.SlotQuery{Type: "a100", Count: 1, Duration: time.Hour}); !errors.Is(err, reserve.ErrInvalid) {
		t.Errorf("unknown type: %v", err)
	}
	// A maintenance window over acme's booking is recorded and reports it.
	_, hit, err = h.svc.AddMaintenance(ctx, "root", reserve.Maintenance{Nodes: []string{"gpu-a"}, Start: day(2), End: day(2).Add(time.Hour)})
	if err != nil || len(hit) != 1 || hit[0].Tenant != "acme" {
		t.Errorf("maintenance over a booking: %v %+v", err, hit)
	}
	if _, _, err := h.svc.AddMaintenance(ctx, "root", reserve.Maintenance{Nodes: []string{"gpu-z"}, Start: day(2), End: day(3)}); err == nil || !strings.Contains(err.Error(), `nodes: "gpu-z" is not a node of the pool`) {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := h.svc.DeleteMaintenance(ctx, "root", m.ID); err != nil {
		t.Fatal(err)
	}
	if ms, _ := h.svc.Maintenance(ctx); len(ms) != 1 {
		t.Errorf("maintenance left: %+v", ms)
	}
}

type typedTenants map[string][]string

func (f typedTenants) BookingTenant(_ context.Context, name string) (reserve.TenantInfo, error) {
	types, ok := f[name]
	if !ok {
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q: %w", name, reserve.ErrUnknownTenant)
	}
	return reserve.TenantInfo{GPUTypes: types}, nil
}

// TestAddRefusesTypesOutsideQuota: a booking of a type the tenant's jobs
// may not request (not in its quota) is refused, naming the fix; whole
// nodes need every type of their class; unknown types are not checked.
func TestAddRefusesTypesOutsideQuota(t *testing.T) {
	h := newHarness()
	h.svc.Tenants = typedTenants{"acme": {"1g.10gb"}, "globex": {"h100"}, "hooli": nil, "empty": {}}
	_, err := h.add(t, kv("tenant=acme", "gpus=h100:1", "start=now+1d", "duration=1h"), reserve.Zone{})
	var ps reserve.Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Field != "gpus" ||
		ps[0].Msg != "tenant acme's jobs may request only the GPU types of its quota (1g.10gb), so they could not use booked h100; add h100 to its quota first (`gpubridge modify tenant acme set gpus=h100:0` is enough: jobs inside a booking do not count against the quota)" {
		t.Fatalf("add h100 for acme: %v", err)
	}
	if _, err := h.add(t, kv("tenant=empty", "nodes=dgx:1", "start=now+1d", "duration=1h"), reserve.Zone{}); err == nil || !strings.Contains(err.Error(), "its quota (none), so they could not use booked h100") {
		t.Errorf("node booking without the class's types: %v", err)
	}
	for _, tn := range []string{"globex", "hooli"} {
		if _, err := h.add(t, kv("tenant="+tn, "gpus=h100:1", "start=now+1d", "duration=1h"), reserve.Zone{}); err != nil {
			t.Errorf("add for %s: %v", tn, err)
		}
	}
	if bs, _ := h.svc.List(context.Background(), reserve.ListFilter{}); len(bs) != 2 {
		t.Errorf("stored %d bookings; want the 2 admitted", len(bs))
	}
}

// TestNodeBookingRecordsPerNode: admission records the GPUs per node of the
// class it counted; they stay when the pool changes; a modify that shrinks
// keeps them, one that grows re-admits and records the pool's figure then;
// a node booking stored without the figure gets it on its next change.
func TestNodeBookingRecordsPerNode(t *testing.T) {
	ctx := context.Background()
	h := newHarness()
	h.svc.Settings.NodeClasses["cpu"] = []string{"cpu-a"}
	h.src.inv.Nodes = append(h.src.inv.Nodes, reserve.Node{Name: "cpu-a"}, reserve.Node{Name: "gpu-c", GPUs: map[string]int{"h100": 4, "1g.10gb": 0}})
	h.svc.Settings.NodeClasses["dgx"] = []string{"gpu-a", "gpu-c"}
	b := h.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=2026-12-01T00:00Z", "duration=1d"))
	if d := cmp.Diff(map[string]int{"h100": 4}, b.PerNode); d != "" {
		t.Errorf("admitted PerNode (-want +got)\n%s", d)
	}
	c := h.mustAdd(t, kv("tenant=acme", "nodes=cpu:1", "start=2026-12-01T00:00Z", "duration=1d"))
	if c.PerNode == nil || len(c.PerNode) != 0 {
		t.Errorf("CPU class PerNode = %#v, want empty, not nil", c.PerNode)
	}
	// The pool changes: the booking keeps what admission counted, also
	// through a change that does not re-admit (a shorter window).
	h.src.inv.Nodes[0].GPUs = map[string]int{"h100": 8}
	h.src.inv.Nodes[3].GPUs = map[string]int{"h100": 8}
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if _, after, err := h.svc.Modify(ctx, "bob", b.ID, reserve.Change{End: &end}); err != nil || after.PerNode["h100"] != 4 {
		t.Fatalf("shrink: %v %+v", err, after.PerNode)
	}
	got, _ := h.st.Get(ctx, b.ID)
	if got.PerNode["h100"] != 4 {
		t.Errorf("stored after shrink: %v", got.PerNode)
	}
	// Growing re-admits against the pool as it is: 8 per node now.
	two := 2
	if _, after, err := h.svc.Modify(ctx, "bob", b.ID, reserve.Change{Count: &two}); err != nil || after.PerNode["h100"] != 8 {
		t.Fatalf("grow: %v %+v", err, after.PerNode)
	}
	if got, _ := h.st.Get(ctx, b.ID); got.PerNode["h100"] != 8 || got.Count != 2 {
		t.Errorf("stored after grow: %+v", got)
	}
	// A booking stored without the figure (before it was recorded).
	var old reserve.Booking
	if err := h.st.Atomic(ctx, nil, func(tx reserve.Tx) error {
		var err error
		old, err = tx.Insert(ctx, "alice", reserve.Booking{Tenant: "globex", Kind: reserve.KindNode, NodeClass: "cpu", Count: 1,
			Start: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), State: reserve.StateRequested})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	purpose := "recorded"
	if _, after, err := h.svc.Modify(ctx, "bob", old.ID, reserve.Change{Purpose: &purpose}); err != nil || after.PerNode == nil {
		t.Errorf("modify of a booking without the figure: %v %#v", err, after.PerNode)
	}
}

// TestNodeBookingMixedClass: a node booking of a class whose nodes differ
// in their GPUs is refused (it would be counted and charged per node as
// the largest); one admitted before the class became mixed keeps what it
// holds and may shrink, but may not grow.
func TestNodeBookingMixedClass(t *testing.T) {
	ctx := context.Background()
	h := newHarness()
	h.src.inv.Nodes = append(h.src.inv.Nodes, reserve.Node{Name: "gpu-c", GPUs: map[string]int{"h100": 4, "1g.10gb": 0}})
	h.svc.Settings.NodeClasses["dgx"] = []string{"gpu-a", "gpu-c"}
	b := h.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=2026-12-01T00:00Z", "duration=2d")) // alike: a zero count is no GPU

	h.src.inv.Nodes[2].GPUs = map[string]int{"h100": 8}
	_, err := h.add(t, kv("tenant=acme", "nodes=dgx:1", "start=2026-12-05T00:00Z", "duration=1d"), reserve.Zone{})
	if err == nil || !strings.Contains(err.Error(), "node class dgx mixes nodes of different GPUs (gpu-a h100:4; gpu-c h100:8)") ||
		!strings.Contains(err.Error(), "split the class in bookings.nodeClasses") {
		t.Fatalf("add on a mixed class: %v; want the refusal naming both nodes and the fix", err)
	}
	end := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if _, after, err := h.svc.Modify(ctx, "bob", b.ID, reserve.Change{End: &end}); err != nil || !after.End.Equal(end) {
		t.Fatalf("shrink on a mixed class: %v %v; want it to succeed", err, after.End)
	}
	two := 2
	if _, _, err := h.svc.Modify(ctx, "bob", b.ID, reserve.Change{Count: &two}); err == nil || !strings.Contains(err.Error(), "mixes nodes") {
		t.Fatalf("grow on a mixed class: %v; want the refusal", err)
	}
	if bs, _ := h.svc.List(ctx, reserve.ListFilter{}); len(bs) != 1 || bs[0].Count != 1 {
		t.Errorf("stored %+v; want the one booking, count 1", bs)
	}
	// A class of nodes without GPUs is alike.
	h.svc.Settings.NodeClasses["cpu"] = []string{"cpu-a", "cpu-b"}
	h.src.inv.Nodes = append(h.src.inv.Nodes, reserve.Node{Name: "cpu-a"}, reserve.Node{Name: "cpu-b", GPUs: map[string]int{}})
	h.mustAdd(t, kv("tenant=acme", "nodes=cpu:2", "start=2026-12-05T00:00Z", "duration=1d"))
}

// perHour prices booked GPU time at rate EUR cents per GPU-hour.
type perHour struct{ cents int64 }

func (c perHour) BookedCost(_ string, gpuSeconds int64, _ time.Time) (money.Amount, error) {
	eur, _ := money.ISO("EUR")
	return money.New(gpuSeconds*c.cents/3600, eur), nil
}

// Under a monthly spend limit, each admission is priced with the rates
// Pricing gives at that moment (a rate card changed since the service was
// built counts); without a rate it refuses, and a failing price source
// fails the admission without storing anything.
func TestAddPricesEachAdmission(t *testing.T) {
	h := newHarness()
	limit := money.MustParse("100.00")
	h.svc.Tenants = fakeTenants{"acme": &reserve.Policy{MonthlySpendLimit: &limit, MaxHorizon: reserve.Span(365 * 24 * time.Hour)}}
	var rate reserve.Coster = perHour{100} // 1.00 EUR per GPU-hour
	var priceErr error
	calls := 0
	h.svc.Pricing = func(context.Context) (reserve.Coster, error) { calls++; return rate, priceErr }
	ask := kv("tenant=acme", "gpus=h100:2", "start=2026-12-01T00:00Z", "duration=1d") // 48 GPU-hours
	h.mustAdd(t, ask)
	rate = perHour{300} // 3.00: the same 48 GPU-hours now cost 144.00 (and the first booking 144.00)
	if _, err := h.add(t, kv("tenant=acme", "gpus=h100:2", "start=2026-12-03T00:00Z", "duration=1d"), reserve.Zone{}); err == nil || !strings.Contains(err.Error(), "over its monthly spend limit") {
		t.Fatalf("admission at the new rate = %v; want over the spend limit", err)
	}
	rate = nil
	if _, err := h.add(t, kv("tenant=acme", "gpus=h100:1", "start=2026-12-05T00:00Z", "duration=1h"), reserve.Zone{}); err == nil || !strings.Contains(err.Error(), "no booked rate is configured") {
		t.Fatalf("admission without a rate = %v; want a refusal", err)
	}
	rate, priceErr = perHour{100}, errors.New("ratecards: connection refused")
	if _, err := h.add(t, kv("tenant=acme", "gpus=h100:1", "start=2026-12-05T00:00Z", "duration=1h"), reserve.Zone{}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("admission with the prices unreadable = %v; want their error", err)
	}
	if bs, _ := h.st.List(context.Background(), reserve.Filter{}); len(bs) != 1 {
		t.Fatalf("stored %d bookings; want only the first", len(bs))
	}
	if calls != 4 {
		t.Fatalf("priced %d times; want once per admission (4)", calls)
	}
}
