package reserve_test

// Issue 25 items 11, 12 and 14 on the memory store: what a use case reads
// outside its transaction, a change racing another on one booking, and
// times beyond what the store holds.

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// txWatch is a Store that knows when a transaction is open, and runs
// beforeTx (once) on the first Get outside one.
type txWatch struct {
	reserve.Store
	open     atomic.Bool
	beforeTx func()
}

func (w *txWatch) Atomic(ctx context.Context, locks []reserve.Resource, fn func(reserve.Tx) error) error {
	return w.Store.Atomic(ctx, locks, func(tx reserve.Tx) error {
		w.open.Store(true)
		defer w.open.Store(false)
		return fn(tx)
	})
}

func (w *txWatch) Get(ctx context.Context, id int64) (reserve.Booking, error) {
	b, err := w.Store.Get(ctx, id)
	if f := w.beforeTx; f != nil {
		w.beforeTx = nil
		f()
	}
	return b, err
}

// tenantsInTx is Tenants that fails the test when it is asked inside a
// transaction: the daemon's reads it through the database pool, and a use
// case that holds a transaction (and its lock rows) while waiting for a
// second pooled connection stalls the pool (issue 25 item 11).
type tenantsInTx struct {
	reserve.Tenants
	w *txWatch
	t *testing.T
}

func (f tenantsInTx) BookingTenant(ctx context.Context, name string) (reserve.TenantInfo, error) {
	if f.w.open.Load() {
		f.t.Errorf("BookingTenant(%s) inside a transaction: a second pooled connection while holding one", name)
	}
	return f.Tenants.BookingTenant(ctx, name)
}

func watched(t *testing.T) (*harness, *txWatch) {
	h := newHarness()
	w := &txWatch{Store: h.st}
	h.svc.Store = w
	h.svc.Tenants = tenantsInTx{Tenants: h.svc.Tenants, w: w, t: t}
	return h, w
}

// TestNoSecondReadInsideTransaction: add, modify (growing and shrinking)
// and cancel read the tenant before their transaction.
func TestNoSecondReadInsideTransaction(t *testing.T) {
	h, _ := watched(t)
	ctx := context.Background()
	b := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2d", "duration=1d"))
	for _, set := range []map[string]string{kv("duration=2h"), kv("duration=2d"), kv("gpus=h100:2")} {
		c, ps := reserve.ParseChange(set, h.clock, reserve.Zone{})
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		if _, _, err := h.svc.Modify(ctx, "alice", b.ID, c); err != nil {
			t.Fatalf("modify %v: %v", set, err)
		}
	}
	if _, err := h.svc.Cancel(ctx, "alice", b.ID); err != nil {
		t.Fatal(err)
	}
}

// TestModifyLosesToACancel: a cancel stored between a modify's read and
// its transaction is never overwritten; the modify is refused with
// ErrChanged, and the booking stays cancelled.
func TestModifyLosesToACancel(t *testing.T) {
	h, w := watched(t)
	ctx := context.Background()
	b := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2d", "duration=1d"))
	w.beforeTx = func() {
		if _, err := h.svc.Cancel(ctx, "bob", b.ID); err != nil {
			t.Errorf("the racing cancel: %v", err)
		}
	}
	c, _ := reserve.ParseChange(kv("duration=2d"), h.clock, reserve.Zone{})
	_, _, err := h.svc.Modify(ctx, "alice", b.ID, c)
	if !errors.Is(err, reserve.ErrChanged) || !strings.Contains(err.Error(), "changed since you read it") || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("modify after a racing cancel: %v; want ErrChanged saying it is cancelled now", err)
	}
	if ps := (reserve.Problems)(nil); !errors.As(err, &ps) || ps[0].Field != "id" {
		t.Errorf("the refusal is not a problem of id (front ends answer it as input): %#v", err)
	}
	t.Log(err)
	got, _ := h.st.Get(ctx, b.ID)
	if got.State != reserve.StateCancelled || !got.End.Equal(b.End) {
		t.Fatalf("stored: %s ending %v; want cancelled, ending %v", got.State, got.End, b.End)
	}
	var acts []string
	for _, e := range h.st.Audit() {
		acts = append(acts, e.Action)
	}
	if strings.Join(acts, ",") != "create,cancel" {
		t.Errorf("audit %v; want create,cancel", acts)
	}
}

// TestTwoCancelsOneWins: of two cancels of one booking, the one that
// read it before the other stored its cancel is refused.
func TestTwoCancelsOneWins(t *testing.T) {
	h, w := watched(t)
	ctx := context.Background()
	b := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2d", "duration=1d"))
	w.beforeTx = func() {
		if _, err := h.svc.Cancel(ctx, "bob", b.ID); err != nil {
			t.Errorf("the first cancel: %v", err)
		}
	}
	if _, err := h.svc.Cancel(ctx, "carol", b.ID); !errors.Is(err, reserve.ErrChanged) {
		t.Fatalf("second cancel: %v; want ErrChanged", err)
	}
	got, _ := h.st.Get(ctx, b.ID)
	if got.CancelledBy != "bob" {
		t.Errorf("cancelled by %q; want bob (the stored cancel)", got.CancelledBy)
	}
}

// panicStore fails the test on any read: input refused as input never
// reaches the store.
type panicStore struct {
	reserve.Store
	t *testing.T
}

func (p panicStore) Atomic(context.Context, []reserve.Resource, func(reserve.Tx) error) error {
	p.t.Error("Atomic called for bad input")
	return errors.New("no")
}

func (p panicStore) List(context.Context, reserve.Filter) ([]reserve.Booking, error) {
	p.t.Error("List called for bad input")
	return nil, errors.New("no")
}

func (p panicStore) Maintenance(context.Context) ([]reserve.Maintenance, error) {
	p.t.Error("Maintenance called for bad input")
	return nil, errors.New("no")
}

// TestTimesBeyondTheStore: a window ending after 9999-12-31 (or starting
// before year 1000) is bad input naming its field, refused before any
// read, by the parsers and by the use cases (the API builds requests
// itself).
func TestTimesBeyondTheStore(t *testing.T) {
	h := newHarness()
	ctx := context.Background()
	last := time.Date(9999, 12, 31, 12, 0, 0, 0, time.UTC)
	type parsed struct {
		ps    reserve.Problems
		field string
	}
	add := func(start string) reserve.Problems {
		_, ps := reserve.ParseAdd(kv("tenant=acme", "gpus=h100:1", "start="+start, "duration=1d"), h.clock, reserve.Zone{})
		return ps
	}
	_, modify := reserve.ParseChange(kv("start=9999-12-31T12:00:00Z", "duration=1d"), h.clock, reserve.Zone{})
	_, maint := reserve.ParseMaintenance(kv("nodes=gpu-a", "start=9999-12-31T12:00:00Z", "duration=1d"), h.clock, reserve.Zone{})
	parsers := map[string]parsed{
		"add duration":         {add("9999-12-31T12:00:00Z"), "duration"},
		"add start":            {add("0999-12-31T12:00:00Z"), "start"},
		"modify duration":      {modify, "duration"},
		"maintenance duration": {maint, "duration"},
	}
	for name, c := range parsers {
		if len(c.ps) != 1 || c.ps[0].Field != c.field || !strings.Contains(c.ps[0].Msg, "outside the times the store holds") {
			t.Errorf("%s: %v; want one problem of %s, outside the times the store holds", name, c.ps, c.field)
		}
	}

	b := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2d", "duration=1d"))
	h.svc.Store = panicStore{Store: h.st, t: t}
	end := last.Add(24 * time.Hour)
	day := 24 * time.Hour
	calls := map[string]func() error{
		"add": func() error {
			_, err := h.svc.Add(ctx, "alice", reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: last, End: end})
			return err
		},
		"modify": func() error {
			_, _, err := h.svc.Modify(ctx, "alice", b.ID, reserve.Change{Start: &last, Duration: &day})
			return err
		},
		"availability": func() error {
			_, err := h.svc.Availability(ctx, reserve.AvailabilityQuery{From: last, To: end, Step: time.Hour})
			return err
		},
		"find slot": func() error {
			_, err := h.svc.FindSlots(ctx, reserve.SlotQuery{Type: "h100", Count: 1, Duration: day, After: last})
			return err
		},
		"maintenance": func() error {
			_, _, err := h.svc.AddMaintenance(ctx, "root", reserve.Maintenance{Nodes: []string{"gpu-a"}, Start: last, End: end, Reason: "x"})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var ps reserve.Problems
		if !errors.As(err, &ps) || !strings.Contains(err.Error(), "outside the times the store holds") {
			t.Errorf("%s: %v; want a Problems saying the time is outside what the store holds", name, err)
		}
	}
}

// givesUp is Tenants that cancels the request's context when asked: the
// client gave up while the request was being worked on.
type givesUp struct {
	reserve.Tenants
	cancel context.CancelFunc
}

func (g givesUp) BookingTenant(ctx context.Context, name string) (reserve.TenantInfo, error) {
	info, err := g.Tenants.BookingTenant(ctx, name)
	g.cancel()
	return info, err
}

// TestGivenUpIsNotStored: a modify, a cancel or an add whose client gave
// up before its change was written stores nothing and audits nothing (its
// answer is lost, so the change must be too).
func TestGivenUpIsNotStored(t *testing.T) {
	h := newHarness()
	b := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+2d", "duration=1d"))
	audits := len(h.st.Audit())
	tenants := h.svc.Tenants
	giveUp := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		h.svc.Tenants = givesUp{Tenants: tenants, cancel: cancel}
		return ctx
	}
	two := 2 * time.Hour
	if _, _, err := h.svc.Modify(giveUp(), "alice", b.ID, reserve.Change{Duration: &two}); !errors.Is(err, context.Canceled) {
		t.Errorf("modify: %v; want context.Canceled", err)
	}
	start := h.clock.Add(72 * time.Hour)
	if _, err := h.svc.Add(giveUp(), "alice", reserve.Request{Tenant: "acme", Kind: reserve.KindGPU, GPUType: "h100", Count: 1, Start: start, End: start.Add(time.Hour)}); !errors.Is(err, context.Canceled) {
		t.Errorf("add: %v; want context.Canceled", err)
	}
	got, _ := h.st.Get(context.Background(), b.ID)
	if !got.End.Equal(b.End) || got.Version != b.Version {
		t.Errorf("stored end %v version %d; want %v, %d (unchanged)", got.End, got.Version, b.End, b.Version)
	}
	if n, _ := h.st.Stored(context.Background()); n != 1 {
		t.Errorf("%d bookings stored; want 1", n)
	}
	if n := len(h.st.Audit()); n != audits {
		t.Errorf("%d audit rows; want %d", n, audits)
	}
}
