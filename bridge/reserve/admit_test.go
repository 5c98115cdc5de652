package reserve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/money"
)

// testbedLike is the testbed's pool: gpu-a with 4 h100, gpu-b with 7
// 1g.10gb and 2 3g.40gb; class dgx = gpu-a.
func testbedLike() (Settings, Inventory) {
	s := Settings{Prefix: "gpubridge-", LeadTime: time.Hour, NodeClasses: map[string][]string{"dgx": {"gpu-a"}}}
	inv := Inventory{Nodes: []Node{
		{Name: "gpu-a", GPUs: map[string]int{"h100": 4}},
		{Name: "gpu-b", GPUs: map[string]int{"1g.10gb": 7, "3g.40gb": 2}},
	}}
	return s, inv
}

var t0 = utc("2026-12-01T00:00:00Z")

func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

func gpuBooking(id int64, tenant string, typ string, n int, from, to time.Time) Booking {
	return Booking{ID: id, Tenant: tenant, Kind: KindGPU, GPUType: typ, Count: n, Start: from, End: to, State: StateRequested, Purpose: "p" + tenant}
}

func admission() Admission {
	s, inv := testbedLike()
	return Admission{Settings: s, Inventory: inv, Now: t0.Add(-24 * time.Hour)}
}

func TestBackToBackFitsOneSecondOverlapDoesNot(t *testing.T) {
	a := admission()
	first := gpuBooking(1, "acme", "h100", 4, at(10), at(12))
	next := gpuBooking(0, "acme", "h100", 4, at(12), at(14))
	if r := a.Check(next, []Booking{first}); r != nil {
		t.Fatalf("back-to-back refused: %v", r)
	}
	overlap := next
	overlap.Start = at(12).Add(-time.Second)
	r := a.Check(overlap, []Booking{first})
	if r == nil {
		t.Fatal("one second of overlap admitted")
	}
	want := []Shortfall{{Resource: "gpu:h100", From: at(12).Add(-time.Second), To: at(12), Capacity: 4, Committed: 4, Asked: 4, Short: 4, OwnCommitted: 4}}
	if diff := cmp.Diff(want, r.Shortfalls); diff != "" {
		t.Errorf("shortfalls (-want +got)\n%s", diff)
	}
	r.Next = a.NextWindows(overlap, []Booking{first}, overlap.Start, time.Time{}, 1)
	msg := r.Error()
	for _, w := range []string{
		"h100:4 for tenant acme over 2026-12-01T11:59:59Z..2026-12-01T14:00:00Z does not fit",
		"short 4 h100 from 2026-12-01T11:59:59Z to 2026-12-01T12:00:00Z: 0 free of 4 (booked 4, 4 of them by acme; asked 4)",
		`conflicts with booking 1 (acme, h100:4, 2026-12-01T10:00:00Z..2026-12-01T12:00:00Z, "pacme")`,
		"next available: 2026-12-01T12:00:00Z (h100:4 for 2h1s, until 2026-12-01T14:00:01Z)",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("message:\n%s\nwant %q", msg, w)
		}
	}
	if !errors.Is(r, ErrNoCapacity) {
		t.Error("a refusal is not ErrNoCapacity")
	}
}

func TestRefusalNamesOwnInFullOthersAsCounts(t *testing.T) {
	a := admission()
	others := []Booking{
		gpuBooking(1, "acme", "h100", 2, at(0), at(48)),
		gpuBooking(2, "globex", "h100", 1, at(10), at(20)),
		gpuBooking(3, "initech", "h100", 1, at(15), at(30)),
		gpuBooking(4, "globex", "h100", 4, at(100), at(200)), // not in the way
		gpuBooking(5, "acme", "1g.10gb", 7, at(0), at(48)),   // another type
	}
	req := gpuBooking(0, "acme", "h100", 2, at(12), at(24))
	r := a.Check(req, others)
	if r == nil {
		t.Fatal("admitted")
	}
	wantSf := []Shortfall{
		{Resource: "gpu:h100", From: at(12), To: at(15), Capacity: 4, Committed: 3, Asked: 2, Short: 1, OwnCommitted: 2},
		{Resource: "gpu:h100", From: at(15), To: at(20), Capacity: 4, Committed: 4, Asked: 2, Short: 2, OwnCommitted: 2},
		{Resource: "gpu:h100", From: at(20), To: at(24), Capacity: 4, Committed: 3, Asked: 2, Short: 1, OwnCommitted: 2},
	}
	if diff := cmp.Diff(wantSf, r.Shortfalls); diff != "" {
		t.Errorf("shortfalls (-want +got)\n%s", diff)
	}
	if len(r.Own) != 1 || r.Own[0].ID != 1 {
		t.Errorf("own conflicts = %+v; want booking 1", r.Own)
	}
	if diff := cmp.Diff([]OtherTenants{{Resource: "gpu:h100", Bookings: 2, Most: 2}}, r.Others); diff != "" {
		t.Errorf("others (-want +got)\n%s", diff)
	}
	msg := r.Error()
	for _, bad := range []string{"globex", "initech", "booking 2", "booking 3", "pglobex"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message names another tenant's booking (%q):\n%s", bad, msg)
		}
	}
	if !strings.Contains(msg, "conflicts with 2 booking(s) of other tenants (holding up to 2 h100 at once there)") {
		t.Errorf("message:\n%s", msg)
	}
	if !strings.Contains(msg, `booking 1 (acme, h100:2, 2026-12-01T00:00:00Z..2026-12-03T00:00:00Z, "pacme")`) {
		t.Errorf("own booking not in full:\n%s", msg)
	}
}

func TestNextAvailable(t *testing.T) {
	a := admission()
	// h100 is fully booked until 2026-12-14, then free.
	others := []Booking{
		gpuBooking(1, "globex", "h100", 3, t0, utc("2026-12-14T00:00:00Z")),
		gpuBooking(2, "initech", "h100", 1, utc("2026-12-05T00:00:00Z"), utc("2026-12-10T00:00:00Z")),
	}
	req := gpuBooking(0, "acme", "h100", 2, utc("2026-12-02T00:00:00Z"), utc("2026-12-16T00:00:00Z"))
	r := a.Check(req, others)
	if r == nil {
		t.Fatal("admitted")
	}
	r.Next = a.NextWindows(req, others, req.Start, time.Time{}, 3)
	want := []Slot{{Start: utc("2026-12-14T00:00:00Z"), End: utc("2026-12-28T00:00:00Z")}}
	if diff := cmp.Diff(want, r.Next); diff != "" {
		t.Errorf("next (-want +got)\n%s", diff)
	}
	if !strings.Contains(r.Error(), "next available: 2026-12-14T00:00:00Z (h100:2 for 14d, until 2026-12-28T00:00:00Z)") {
		t.Errorf("message:\n%s", r.Error())
	}
	// 1 GPU for 3 days fits between the two others' bookings.
	small := gpuBooking(0, "acme", "h100", 1, t0, t0.Add(72*time.Hour))
	got := a.NextWindows(small, others, t0, time.Time{}, 3)
	want = []Slot{
		{Start: t0, End: utc("2026-12-04T00:00:00Z"), Latest: utc("2026-12-02T00:00:00Z")},
		{Start: utc("2026-12-10T00:00:00Z"), End: utc("2026-12-13T00:00:00Z")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("small (-want +got)\n%s", diff)
	}
	// Bounded search: nothing starts before 2026-12-09.
	if got := a.NextWindows(req, others, req.Start, utc("2026-12-09T00:00:00Z"), 3); len(got) != 0 {
		t.Errorf("bounded search found %+v", got)
	}
}

func TestCapacityReductions(t *testing.T) {
	s, inv := testbedLike()
	now := at(0)
	inv.Nodes[1].Down = "DOWN+DRAIN"
	inv.Reservations = []Reservation{
		{Name: "site-maint", Start: at(50), End: at(60), Nodes: []string{"gpu-a"}, WholeNodes: true},
		{Name: "vip", Start: at(5), End: at(8), GPUs: map[string]int{"h100": 1}, Nodes: []string{"gpu-a"}},
		{Name: "gpubridge-7", Start: at(0), End: at(100), GPUs: map[string]int{"h100": 4}, Nodes: []string{"gpu-a"}}, // ours: counted through booking 7
		{Name: "untyped", Start: at(9), End: at(10), UntypedGPUs: 2, Nodes: []string{"gpu-a"}},
	}
	maint := []Maintenance{{ID: 3, Nodes: []string{"gpu-a"}, Start: at(55), End: at(70), Reason: "firmware"}}
	s.UnbookablePercent = 25
	caps := s.Capacities(inv, maint, now, nil)
	h := NewCalendar(caps["gpu:h100"], nil)
	for _, c := range []struct {
		h    int
		want int
	}{{-1, 3}, {0, 3}, {5, 2}, {8, 3}, {9, 1}, {10, 3}, {50, 0}, {59, 0}, {60, 0}, {69, 0}, {70, 3}} {
		if got, _ := h.At(at(c.h)); got != c.want {
			t.Errorf("h100 capacity at +%dh = %d; want %d", c.h, got, c.want)
		}
	}
	mig := NewCalendar(caps["gpu:1g.10gb"], nil)
	if got, _ := mig.At(at(-1)); got != 5 { // 7 less 2 unbookable; down only from now
		t.Errorf("1g.10gb before now = %d; want 5", got)
	}
	if got, _ := mig.At(at(1)); got != 0 {
		t.Errorf("1g.10gb with gpu-b down = %d; want 0", got)
	}
	dgx := NewCalendar(caps["node:dgx"], nil)
	for _, c := range []struct{ h, want int }{{0, 1}, {5, 0}, {8, 1}, {9, 0}, {55, 0}, {70, 1}} {
		if got, _ := dgx.At(at(c.h)); got != c.want {
			t.Errorf("dgx nodes at +%dh = %d; want %d", c.h, got, c.want)
		}
	}
	// The refusal says why capacity is low.
	a := Admission{Settings: s, Inventory: inv, Maintenance: maint, Now: now}
	r := a.Check(gpuBooking(0, "acme", "h100", 3, at(54), at(56)), nil)
	if r == nil || !strings.Contains(r.Error(), "maintenance 3 on gpu-a (firmware)") || !strings.Contains(r.Error(), "reservation site-maint holds gpu-a") {
		t.Errorf("refusal = %v", r)
	}
}

func TestNodeBookingsAndGPUBookingsShareCapacity(t *testing.T) {
	a := admission()
	node := Booking{ID: 1, Tenant: "acme", Kind: KindNode, NodeClass: "dgx", Count: 1, Start: at(0), End: at(10), State: StateRequested}
	if cs := a.Settings.Commitments(node, a.Inventory); len(cs) != 2 || cs[0].Resource != "gpu:h100" || cs[0].Count != 4 || cs[1].Resource != "node:dgx" || cs[1].Count != 1 {
		t.Fatalf("node booking commitments = %+v", cs)
	}
	if r := a.Check(gpuBooking(0, "globex", "h100", 1, at(5), at(6)), []Booking{node}); r == nil {
		t.Error("a GPU booking on a wholly booked node was admitted")
	}
	if r := a.Check(gpuBooking(0, "globex", "1g.10gb", 7, at(5), at(6)), []Booking{node}); r != nil {
		t.Errorf("another node's GPUs refused: %v", r)
	}
	gpu := gpuBooking(2, "globex", "h100", 1, at(8), at(12))
	second := node
	second.ID, second.Start, second.End = 0, at(10), at(20)
	r := a.Check(second, []Booking{gpu})
	if r == nil {
		t.Fatal("a node booking over a booked GPU was admitted")
	}
	if !strings.Contains(r.Error(), "short 1 h100 from 2026-12-01T10:00:00Z to 2026-12-01T12:00:00Z") {
		t.Errorf("refusal:\n%v", r)
	}
	if got := a.Settings.Resources(second, a.Inventory); !cmp.Equal(got, []Resource{"gpu:h100", "node:dgx"}) {
		t.Errorf("resources = %v", got)
	}
	if got := a.Settings.Related([]Resource{"gpu:h100"}, a.Inventory); !cmp.Equal(got, []Resource{"gpu:h100", "node:dgx"}) {
		t.Errorf("related = %v", got)
	}
}

// What Slurm still holds counts: a booking shrunk in the ledger while its
// reservation (4 GPUs) waits for jobs to end commits 4 until then; a
// cancelled booking whose reservation could not be deleted commits it too.
func TestHeldCountsUntilSlurmCatchesUp(t *testing.T) {
	a := admission()
	shrunk := gpuBooking(1, "acme", "h100", 1, at(0), at(20))
	shrunk.Held = Held{Reservation: "gpubridge-1", Start: at(0), End: at(10), Count: 4}
	want := []Commitment{
		{Resource: "gpu:h100", Start: at(0).Unix(), End: at(10).Unix(), Count: 4, Booking: 1, Tenant: "acme"},
		{Resource: "gpu:h100", Start: at(10).Unix(), End: at(20).Unix(), Count: 1, Booking: 1, Tenant: "acme"},
	}
	if diff := cmp.Diff(want, a.Settings.Commitments(shrunk, a.Inventory)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if r := a.Check(gpuBooking(0, "globex", "h100", 1, at(5), at(6)), []Booking{shrunk}); r == nil {
		t.Error("admitted into GPUs Slurm still holds")
	}
	if r := a.Check(gpuBooking(0, "globex", "h100", 3, at(10), at(16)), []Booking{shrunk}); r != nil {
		t.Errorf("refused after the held part: %v", r)
	}
	cancelled := shrunk
	cancelled.State = StateCancelled
	if diff := cmp.Diff(want[:1], a.Settings.Commitments(cancelled, a.Inventory)); diff != "" {
		t.Errorf("cancelled (-want +got)\n%s", diff)
	}
	cancelled.Held = Held{}
	if cs := a.Settings.Commitments(cancelled, a.Inventory); len(cs) != 0 {
		t.Errorf("cancelled and released commits %+v", cs)
	}
	if s, e := cancelled.Span(); !s.Equal(e) {
		t.Errorf("released span = %v..%v; want empty", s, e)
	}
	// Modifying a booking: its own stored row is not counted against it,
	// but what Slurm holds for it is.
	grown := shrunk
	grown.Count = 4
	if r := a.Check(grown, []Booking{shrunk}); r != nil {
		t.Errorf("growing into its own held GPUs refused: %v", r)
	}
}

func TestStateAt(t *testing.T) {
	b := gpuBooking(1, "acme", "h100", 1, at(10), at(20))
	held := b
	held.Held = Held{Reservation: "gpubridge-1", Start: at(10), End: at(20), Count: 1}
	cancelled := held
	cancelled.State = StateCancelled
	risky := held
	risky.State = StateAtRisk
	cases := map[string]struct {
		b    Booking
		now  int
		want State
	}{
		"requested":             {b, 0, StateRequested},
		"not in slurm at start": {b, 10, StateAtRisk},
		"scheduled":             {held, 9, StateScheduled},
		"active":                {held, 10, StateActive},
		"active to the end":     {held, 19, StateActive},
		"ended at end":          {held, 20, StateEnded},
		"cancelled":             {cancelled, 15, StateCancelled},
		"at risk":               {risky, 15, StateAtRisk},
		"at risk ends":          {risky, 25, StateEnded},
	}
	for name, c := range cases {
		if got := c.b.StateAt(at(c.now)); got != c.want {
			t.Errorf("%s: %s; want %s", name, got, c.want)
		}
	}
}

func TestPolicy(t *testing.T) {
	s, inv := testbedLike()
	now := t0
	p := Policy{MaxGPUs: map[string]int{"h100": 3}, MaxWindow: Span(14 * 24 * time.Hour), MinLead: Span(time.Hour), MaxHorizon: Span(90 * 24 * time.Hour)}
	own := []Booking{gpuBooking(1, "acme", "h100", 2, at(24), at(48))}
	cases := map[string]struct {
		b      Booking
		fields []string
		msg    string
	}{
		"fits":          {b: gpuBooking(0, "acme", "h100", 1, at(24), at(48))},
		"too many":      {b: gpuBooking(0, "acme", "h100", 2, at(40), at(50)), fields: []string{"gpus"}, msg: "tenant acme would have 4 h100 booked at once from 2026-12-02T16:00:00Z, more than its policy allows (maxGPUs h100=3)"},
		"window":        {b: gpuBooking(0, "acme", "1g.10gb", 1, at(24), at(24+15*24)), fields: []string{"end"}, msg: "the window is 15d, longer than tenant acme may book at once (policy maxWindow 14d)"},
		"lead":          {b: gpuBooking(0, "acme", "1g.10gb", 1, now.Add(30*time.Minute), at(5)), fields: []string{"start"}, msg: "less than 1h ahead"},
		"horizon":       {b: gpuBooking(0, "acme", "1g.10gb", 1, at(89*24), at(91*24)), fields: []string{"end"}, msg: "beyond the booking horizon of 90d"},
		"modify itself": {b: func() Booking { b := own[0]; b.Count = 3; return b }()},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ps := s.CheckPolicy(p, c.b, own, inv, now, nil, DefaultFields)
			if diff := cmp.Diff(c.fields, ps.Fields(), cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
				t.Fatalf("fields (-want +got)\n%s\n%v", diff, ps)
			}
			if c.msg != "" && !strings.Contains(ps.Error(), c.msg) {
				t.Errorf("problems:\n%v\nwant %q", ps, c.msg)
			}
		})
	}
}

func TestPolicyValidate(t *testing.T) {
	neg := Policy{MaxGPUs: map[string]int{"h100": -1, "a b": 1}, MaxWindow: Span(100 * 24 * time.Hour), MaxHorizon: Span(30 * 24 * time.Hour), MinLead: -1}
	got := neg.Validate("p").Fields()
	want := []string{"p.maxGPUs", "p.maxGPUs.h100", "p.maxWindow", "p.minLead"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if ps := (Policy{}).Validate("p"); len(ps) != 0 {
		t.Errorf("zero policy: %v", ps)
	}
}

func TestSpanJSON(t *testing.T) {
	var s Span
	if err := s.UnmarshalJSON([]byte(`"14d"`)); err != nil || time.Duration(s) != 14*24*time.Hour {
		t.Fatalf("%v %v", s, err)
	}
	b, _ := s.MarshalJSON()
	if string(b) != `"14d"` {
		t.Errorf("marshal = %s", b)
	}
	if err := s.UnmarshalJSON([]byte(`"14x"`)); err == nil {
		t.Error("14x accepted")
	}
}

func TestSettingsBookingID(t *testing.T) {
	s := Settings{Prefix: "gpubridge-"}
	for name, want := range map[string]int64{"gpubridge-12": 12, "gpubridge-": 0, "gpubridge-012": 0, "gpubridge-1a": 0, "other-1": 0, "gpubridge-bk1-3": 0} {
		got, ok := s.BookingID(name)
		if got != want || ok != (want != 0) {
			t.Errorf("BookingID(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	if n := s.ReservationName(12); n != "gpubridge-12" {
		t.Error(n)
	}
}

// eurCoster prices booked GPU time at 2.00 EUR per GPU-hour.
type eurCoster struct{}

func (eurCoster) BookedCost(_ string, gpuSeconds int64, _ time.Time) (money.Amount, error) {
	eur, _ := money.ISO("EUR")
	return money.New(gpuSeconds*200/3600, eur), nil
}

func TestPolicyMonthlySpend(t *testing.T) {
	s, inv := testbedLike()
	limit := money.MustParse("100.00")
	p := Policy{MonthlySpendLimit: &limit}
	day := func(d, h int) time.Time { return time.Date(2026, 12, d, h, 0, 0, 0, time.UTC) }
	own := []Booking{gpuBooking(1, "acme", "h100", 1, day(1, 0), day(1, 2))} // 2 GPU-hours: 4.00
	cases := map[string]struct {
		b    Booking
		want string
	}{
		"at the limit":   {b: gpuBooking(0, "acme", "h100", 2, day(10, 0), day(11, 0))}, // 48 GPU-hours: 96.00, with own 100.00
		"over the limit": {b: gpuBooking(0, "acme", "h100", 2, day(10, 0), day(11, 1)), want: "tenant acme's bookings would cost 104.00 EUR in 2026-12, over its monthly spend limit of 100.00"},
		// 30 Dec 12:00 to 2 Jan 12:00, 1 GPU: 36 h in December (72.00 +
		// 4.00), 36 h in January (72.00): each month within the limit.
		"split by month": {b: gpuBooking(0, "acme", "h100", 1, day(30, 12), time.Date(2027, 1, 2, 12, 0, 0, 0, time.UTC))},
	}
	for name, c := range cases {
		ps := s.CheckPolicy(p, c.b, own, inv, t0.Add(-48*time.Hour), eurCoster{}, DefaultFields)
		switch {
		case c.want == "" && len(ps) > 0:
			t.Errorf("%s: %v", name, ps)
		case c.want != "" && (len(ps) != 1 || !strings.Contains(ps[0].Msg, c.want) || ps[0].Field != "gpus"):
			t.Errorf("%s: %v\nwant %q", name, ps, c.want)
		}
	}
	// Without a booked rate, a spend limit refuses rather than guess.
	ps := s.CheckPolicy(p, cases["at the limit"].b, own, inv, t0, nil, DefaultFields)
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, "no booked rate is configured") {
		t.Errorf("no coster: %v", ps)
	}
}
