package app

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// nodeCharges charges bs with the booking charger on a memory ledger and
// returns the ledger's GPU-seconds by booking and type, and the lines.
func nodeCharges(t *testing.T, store *ledger.Memory, policy meter.Cancellation, bs ...reserve.Booking) (map[[2]string]int64, []meter.Line, billing.ChargeResult, error) {
	t.Helper()
	ch := billing.BookingCharger{Cluster: "c", Ledger: store, Policy: policy,
		Bookings: func(context.Context) ([]meter.BookedWindow, []string, error) {
			ws, un := reserve.BookedWindows(bs)
			return ws, un, nil
		}}
	res, err := ch.Charge(context.Background())
	sums := map[[2]string]int64{}
	var lines []meter.Line
	if err := store.Charges(context.Background(), "c", ledger.LineQuery{Booked: meter.PeriodOfUnix(bs[0].Start.Unix()), Ordered: true}, func(l meter.Line) error {
		sums[[2]string{strconv.FormatInt(l.Booking, 10), l.Type}] += l.GPUSeconds
		lines = append(lines, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return sums, lines, res, err
}

// Node bookings through the charger to the ledger: one type, two types
// (MIG profiles priced by the card's parent rule), a CPU class (nothing, no
// error), cancelled late (charged to the notice), a count changed
// (revision lines of the difference), a re-run (nothing), and one stored
// without the figure (refused, the others written).
func TestNodeBookingCharges(t *testing.T) {
	t0 := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	const hour = 3600
	node := func(id int64, count int, per map[string]int) reserve.Booking {
		return reserve.Booking{ID: id, Tenant: "acme", Kind: reserve.KindNode, NodeClass: "dgx", Count: count, Start: t0, End: t0.Add(10 * time.Hour),
			State: reserve.StateScheduled, PerNode: per}
	}
	policy := meter.Cancellation{FreeBefore: time.Hour}
	one := node(1, 2, map[string]int{"h100": 4})
	two := node(2, 1, map[string]int{"h100": 1, "1g.10gb": 7})
	cpu := node(3, 2, map[string]int{})
	late := node(4, 1, map[string]int{"h100": 4})
	late.State, late.CancelledAt = reserve.StateCancelled, t0.Add(2*time.Hour) // pays to 3h (1h notice)
	store := ledger.NewMemory()
	sums, lines, res, err := nodeCharges(t, store, policy, one, two, cpu, late)
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string]int64{
		{"1", "h100"}: 2 * 4 * 10 * hour, {"2", "h100"}: 1 * 1 * 10 * hour, {"2", "1g.10gb"}: 1 * 7 * 10 * hour, {"4", "h100"}: 1 * 4 * 3 * hour,
	}
	if d := cmp.Diff(want, sums); d != "" {
		t.Errorf("charged GPU-seconds (-want +got)\n%s", d)
	}
	if res.Bookings != 4 || res.Lines != 4 {
		t.Errorf("result %+v, want 4 bookings and 4 lines", res)
	}
	// Priced: h100 booked 2.10/h; a 1g.10gb is 1/7 of its parent.
	card, err := pricing.ParseYAML([]byte("version: 1\ncurrency: EUR\ntypes:\n  - {name: 1g.10gb, parent: h100}\nrates:\n  - {type: h100, tier: booked, perGPUHour: \"2.10\", from: 2026-01-01}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range lines {
		if l.Booking != 2 {
			continue
		}
		_, a, err := card.PriceLine(l)
		if err != nil {
			t.Fatal(err)
		}
		got[l.Type] = a.String()
	}
	// 10h x 1 h100 x 2.10 = 21.00; 10h x 7 x 1g.10gb at 2.10/7 = 21.00.
	if d := cmp.Diff(map[string]string{"h100": "21.00", "1g.10gb": "21.00"}, got); d != "" {
		t.Errorf("booking 2 priced (-want +got)\n%s", d)
	}
	// A re-run adds nothing.
	if _, _, res, err := nodeCharges(t, store, policy, one, two, cpu, late); err != nil || res.Lines != 0 {
		t.Errorf("re-run: %+v %v", res, err)
	}
	// The count of booking 1 goes to 3 (a modify; its figure is kept): a
	// revision of the difference, booking 2's lines untouched.
	one.Count = 3
	sums, lines, res, err = nodeCharges(t, store, policy, one, two, cpu, late)
	if err != nil || res.Lines != 1 || res.Corrections != 1 {
		t.Fatalf("after the modify: %+v %v", res, err)
	}
	if sums[[2]string{"1", "h100"}] != 3*4*10*hour || sums[[2]string{"2", "1g.10gb"}] != 7*10*hour {
		t.Errorf("after the modify: %v", sums)
	}
	last := lines[len(lines)-1]
	for _, l := range lines {
		if l.Booking == 1 && l.Revision == 1 {
			last = l
		}
	}
	if last.Booking != 1 || last.Revision != 1 || last.GPUSeconds != 4*10*hour {
		t.Errorf("revision line %+v, want booking 1 revision 1 of %d GPU-seconds", last, 4*10*hour)
	}
	// One stored before the figure was recorded: named, not charged; the
	// others still are.
	old := node(5, 1, nil)
	sums, _, res, err = nodeCharges(t, store, policy, one, two, cpu, late, old)
	if !errors.Is(err, billing.ErrUncharged) || !strings.Contains(err.Error(), "booking 5") || res.Lines != 0 {
		t.Errorf("old booking: %+v %v, want ErrUncharged naming booking 5", res, err)
	}
	if _, ok := sums[[2]string{"5", "h100"}]; ok {
		t.Errorf("booking 5 charged: %v", sums)
	}
}

func TestCardCosterUsesTheBookedTier(t *testing.T) {
	card, err := pricing.ParseYAML([]byte("version: 1\ncurrency: EUR\nrates:\n  - {type: h100, perGPUHour: \"2.00\", from: 2020-01-01}\n  - {type: h100, tier: booked, perGPUHour: \"1.50\", from: 2026-01-01}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := CardCoster{card}
	a, err := c.BookedCost("h100", 2*3600, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || a.String() != "3.00" {
		t.Errorf("cost %s %v, want 3.00 (2 GPU-hours at the booked 1.50)", a, err)
	}
	// Before the booked rate exists, the rate for both usage tiers does
	// not price a booking.
	if _, err := c.BookedCost("h100", 3600, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, pricing.ErrNoRate) {
		t.Errorf("before the booked rate: %v, want ErrNoRate", err)
	}
}
