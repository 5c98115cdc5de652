package credit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/internal/money"
)

var (
	t0     = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	policy = Policy{Enabled: true, KillWindow: 2 * time.Minute}
	eur, _ = money.ISO("EUR")
)

func h(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }

func TestDrains(t *testing.T) {
	evs := []health.Event{
		{ID: 1, Node: "gpu-a", At: h(0), From: "", To: health.BurnIn},
		{ID: 2, Node: "gpu-a", At: h(0.1), From: health.BurnIn, To: health.Serving},
		{ID: 3, Node: "gpu-a", At: h(2), From: health.Serving, To: health.Drained, Reason: "xid failed: Xid 79", Fatal: true},
		{ID: 4, Node: "gpu-a", At: h(3), From: health.Drained, To: health.Requalify},
		{ID: 5, Node: "gpu-a", At: h(4), From: health.Requalify, To: health.Serving},
		{ID: 6, Node: "gpu-b", At: h(5), From: health.Suspect, To: health.Drained, Reason: "probe failed"},
		{ID: 7, Node: "gpu-c", At: h(1), From: health.Serving, To: health.Drained, Reason: "p"},
		{ID: 8, Node: "gpu-c", At: h(1.5), From: health.Drained, To: health.External, Reason: "drained outside gpubridge: ops"},
	}
	want := []Drain{
		{EventID: 7, Node: "gpu-c", Start: h(1), End: h(1.5), Reason: "p"},
		{EventID: 3, Node: "gpu-a", Start: h(2), End: h(4), Fatal: true, Reason: "xid failed: Xid 79"},
		{EventID: 6, Node: "gpu-b", Start: h(5), Reason: "probe failed"},
	}
	if diff := cmp.Diff(want, Drains(evs)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCompute(t *testing.T) {
	fatal := Drain{EventID: 3, Node: "gpu-a", Start: h(2), End: h(4), Fatal: true, Reason: "xid failed: Xid 79"}
	soft := Drain{EventID: 6, Node: "gpu-b", Start: h(5), End: h(7), Reason: "probe failed"}
	open := Drain{EventID: 9, Node: "gpu-c", Start: h(5), Reason: "nccl failed"}
	drains := []Drain{fatal, soft, open}
	run := func(id int64, state string, nodes []string, start, end float64, charged int64) JobRun {
		return JobRun{Cluster: "testbed", JobID: id, Submit: h(start - 0.1), Tenant: "acme", Account: "acme", State: state, Nodes: nodes,
			Start: h(start), End: h(end), Charged: money.New(charged, eur)}
	}
	jobs := []JobRun{
		run(10, "NODE_FAIL", []string{"gpu-a"}, 1, 2.01, 420),                                                                              // failed at the fatal stop: linked
		run(11, "NODE_FAIL", []string{"gpu-x"}, 1, 2, 300),                                                                                 // NODE_FAIL no drain explains
		run(12, "CANCELLED", []string{"gpu-a", "gpu-b"}, 1.5, 2.02, 250),                                                                   // killed by the stop (within 2m)
		run(13, "COMPLETED", []string{"gpu-a"}, 1, 3, 999),                                                                                 // finished: nothing owed
		run(14, "FAILED", []string{"gpu-b"}, 4, 6, 500),                                                                                    // ended while drained softly: its own failure
		run(15, "NODE_FAIL", []string{"gpu-a"}, 1, 2.01, 0),                                                                                // charged nothing
		{Cluster: "testbed", JobID: 16, State: "NODE_FAIL", Nodes: []string{"gpu-a"}, Charged: money.New(80, eur), Start: h(1), End: h(2)}, // no tenant
		run(17, "CANCELLED", []string{"gpu-a"}, 1.5, 2.5, 250),                                                                             // ended 30m after the stop: not killed by it
	}
	jobs = append(jobs, jobs[0]) // the same run twice (two reads): one credit
	bookings := []Booking{
		{ID: 100, Tenant: "beta", Node: "gpu-b", GPUs: 4, Start: h(0), End: h(6), RatePerGPUHour: money.New(250, eur)},    // 1 h of the drain: 4 GPU-h
		{ID: 101, Tenant: "beta", Node: "gpu-a", GPUs: 2, Start: h(3.5), End: h(10), RatePerGPUHour: money.New(333, eur)}, // 30 m: 1 GPU-h
		{ID: 102, Tenant: "beta", Node: "gpu-c", GPUs: 1, Start: h(0), End: h(20), RatePerGPUHour: money.New(100, eur)},   // still held, still booked
		{ID: 103, Tenant: "beta", Node: "gpu-c", GPUs: 1, Start: h(4), End: h(6), RatePerGPUHour: money.New(100, eur)},    // booking over: final
		{ID: 104, Tenant: "beta", Node: "gpu-b", GPUs: 1, Start: h(8), End: h(9), RatePerGPUHour: money.New(100, eur)},    // after the drain
	}
	got := Compute(policy, h(8), jobs, bookings, drains)
	want := []Credit{
		{Key: fmt.Sprintf("health-credit:job:testbed:10:%d", h(0.9).Unix()), Kind: NodeFail, Tenant: "acme", Account: "acme", Amount: money.New(-420, eur),
			EventID: 3, Node: "gpu-a", JobID: 10, Submit: h(0.9), Start: h(1), End: h(2.01), Reason: "job ended NODE_FAIL: xid failed: Xid 79"},
		{Key: fmt.Sprintf("health-credit:job:testbed:11:%d", h(0.9).Unix()), Kind: NodeFail, Tenant: "acme", Account: "acme", Amount: money.New(-300, eur),
			JobID: 11, Submit: h(0.9), Start: h(1), End: h(2), Reason: "job ended NODE_FAIL"},
		{Key: fmt.Sprintf("health-credit:job:testbed:12:%d", h(1.4).Unix()), Kind: Killed, Tenant: "acme", Account: "acme", Amount: money.New(-250, eur),
			EventID: 3, Node: "gpu-a", JobID: 12, Submit: h(1.4), Start: h(1.5), End: h(2.02), Reason: "killed when gpubridge stopped the node: xid failed: Xid 79"},
		{Key: "health-credit:booking:100:event:6", Kind: BookingLost, Tenant: "beta", Amount: money.New(-1000, eur), EventID: 6, Node: "gpu-b",
			BookingID: 100, GPUSeconds: 4 * 3600, Start: h(5), End: h(6), Reason: "booked GPUs lost while gpubridge held the node: probe failed"},
		{Key: "health-credit:booking:101:event:3", Kind: BookingLost, Tenant: "beta", Amount: money.New(-333, eur), EventID: 3, Node: "gpu-a",
			BookingID: 101, GPUSeconds: 3600, Start: h(3.5), End: h(4), Reason: "booked GPUs lost while gpubridge held the node: xid failed: Xid 79"},
		{Key: "health-credit:booking:103:event:9", Kind: BookingLost, Tenant: "beta", Amount: money.New(-100, eur), EventID: 9, Node: "gpu-c",
			BookingID: 103, GPUSeconds: 3600, Start: h(5), End: h(6), Reason: "booked GPUs lost while gpubridge held the node: nccl failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if len(Compute(Policy{}, h(8), jobs, bookings, drains)) != 0 {
		t.Error("credits with the policy off")
	}
	if got := Compute(Policy{Enabled: true, MinLoss: money.MustParse("4.00"), KillWindow: time.Minute}, h(8), jobs, bookings, drains); len(got) != 2 {
		t.Errorf("MinLoss 4.00: %d credits, want 2 (the 420 job and the 1000 booking loss)", len(got))
	}
	// MinLoss is compared exactly, whatever the decimals it is written with.
	for min, want := range map[string]int{"4.2": 2, "4.205": 1, "4": 2, "10.000": 1, "10.001": 0} {
		if got := Compute(Policy{Enabled: true, MinLoss: money.MustParse(min), KillWindow: time.Minute}, h(8), jobs, bookings, drains); len(got) != want {
			t.Errorf("MinLoss %s: %d credits, want %d", min, len(got), want)
		}
	}
}

// memLedger writes each key once, like the ledger must.
type memLedger struct {
	mu   sync.Mutex
	keys map[string]Credit
}

func (l *memLedger) WriteCredits(_ context.Context, cs []Credit) ([]Credit, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Credit
	for _, c := range cs {
		if _, ok := l.keys[c.Key]; !ok {
			l.keys[c.Key] = c
			out = append(out, c)
		}
	}
	return out, nil
}

type src struct {
	runs []JobRun
	evs  []health.Event
}

func (s src) EndedRuns(context.Context, time.Time, time.Time) ([]JobRun, error) { return s.runs, nil }
func (s src) Bookings(context.Context, time.Time, time.Time) ([]Booking, error) { return nil, nil }
func (s src) Events(context.Context, time.Time) ([]health.Event, error)         { return s.evs, nil }

// TestJobRerunAddsNothing: each NODE_FAIL run yields exactly one credit
// equal to its charged amount; running the job again adds nothing.
func TestJobRerunAddsNothing(t *testing.T) {
	l := &memLedger{keys: map[string]Credit{}}
	j := &Job{Ledger: l, Policy: policy, Now: func() time.Time { return h(8) }, Source: src{
		runs: []JobRun{
			{Cluster: "testbed", JobID: 1, Submit: h(0), Tenant: "acme", State: "NODE_FAIL", Nodes: []string{"gpu-a"}, Start: h(1), End: h(2), Charged: money.New(210, eur)},
			{Cluster: "testbed", JobID: 2, Submit: h(0), Tenant: "acme", State: "NODE_FAIL", Nodes: []string{"gpu-a"}, Start: h(1), End: h(2), Charged: money.New(90, eur)},
		},
		evs: []health.Event{{ID: 4, Node: "gpu-a", At: h(2), From: health.Serving, To: health.Drained, Fatal: true}},
	}}
	for i, want := range []int{2, 0, 0} {
		r, err := j.RunOnce(context.Background())
		if err != nil || len(r.Written) != want || r.Computed != 2 || r.Runs != 2 {
			t.Fatalf("run %d: %+v, %v; want %d new of 2", i, r, err, want)
		}
	}
	sum := int64(0)
	for _, c := range l.keys {
		sum += c.Amount.Units()
		if c.EventID != 4 {
			t.Errorf("credit %s not linked to the drain: %+v", c.Key, c)
		}
	}
	if sum != -300 {
		t.Errorf("credited %d, want -300 (the charged amounts)", sum)
	}
}

func TestLostUnitsRoundsDownAndRefusesOverflow(t *testing.T) {
	if v, ok := lostUnits(3599, 100); !ok || v != 99 {
		t.Errorf("lostUnits(3599 GPU-s, 1.00/h) = %d %v, want 99 (rounded down)", v, ok)
	}
	if _, ok := lostUnits(1<<62, 1<<20); ok {
		t.Error("an overflowing loss was accepted")
	}
}

// TestComputePricedBookings: a booking with Price is credited what Price
// says for exactly the lost part of its window; one per type on a node
// (the type is in the key); a loss Price cannot price is not credited.
func TestComputePricedBookings(t *testing.T) {
	drains := []Drain{{EventID: 6, Node: "gpu-b", Start: h(5), End: h(7), Reason: "probe failed"}}
	var asked [][2]time.Time
	price := func(cents int64) func(from, to time.Time) (money.Amount, error) {
		return func(from, to time.Time) (money.Amount, error) {
			asked = append(asked, [2]time.Time{from, to})
			return money.New(cents, eur), nil
		}
	}
	fails := func(time.Time, time.Time) (money.Amount, error) { return money.Amount{}, errors.New("no booked rate") }
	bookings := []Booking{
		{ID: 1, Tenant: "beta", Account: "beta", Node: "gpu-b", GPUType: "1g.10gb", GPUs: 7, Start: h(4), End: h(6), Price: price(700)},
		{ID: 1, Tenant: "beta", Account: "beta", Node: "gpu-b", GPUType: "3g.40gb", GPUs: 2, Start: h(4), End: h(6), Price: price(300)},
		{ID: 2, Tenant: "beta", Account: "beta", Node: "gpu-b", GPUType: "h100", GPUs: 1, Start: h(4), End: h(6), Price: fails},
	}
	got := Compute(Policy{Enabled: true}, h(8), nil, bookings, drains)
	want := []Credit{
		{Key: "health-credit:booking:1:event:6:1g.10gb", Kind: BookingLost, Tenant: "beta", Account: "beta", Amount: money.New(-700, eur), EventID: 6,
			Node: "gpu-b", BookingID: 1, GPUSeconds: 7 * 3600, Start: h(5), End: h(6), Reason: "booked GPUs lost while gpubridge held the node: probe failed"},
		{Key: "health-credit:booking:1:event:6:3g.40gb", Kind: BookingLost, Tenant: "beta", Account: "beta", Amount: money.New(-300, eur), EventID: 6,
			Node: "gpu-b", BookingID: 1, GPUSeconds: 2 * 3600, Start: h(5), End: h(6), Reason: "booked GPUs lost while gpubridge held the node: probe failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for _, a := range asked {
		if !a[0].Equal(h(5)) || !a[1].Equal(h(6)) {
			t.Errorf("priced %v..%v; want the lost part %v..%v", a[0], a[1], h(5), h(6))
		}
	}
}

// TestComputeBookingParts: a booking moved off a drained node and back is
// two parts there; each part's lost time is credited once, the later one
// under a key of its own, and the time it was elsewhere is not.
func TestComputeBookingParts(t *testing.T) {
	drains := []Drain{{EventID: 6, Node: "gpu-a", Start: h(1), End: h(9), Reason: "probe failed"}}
	bookings := []Booking{
		{ID: 4, Tenant: "beta", Account: "beta", Node: "gpu-a", GPUType: "h100", GPUs: 1, Start: h(0), End: h(2), RatePerGPUHour: money.New(360, eur)},
		{ID: 4, Tenant: "beta", Account: "beta", Node: "gpu-a", GPUType: "h100", GPUs: 1, Start: h(5), End: h(6), RatePerGPUHour: money.New(360, eur), Part: 1},
	}
	got := Compute(Policy{Enabled: true}, h(10), nil, bookings, drains)
	var keys []string
	var secs int64
	for _, c := range got {
		keys = append(keys, c.Key)
		secs += c.GPUSeconds
	}
	if want := []string{"health-credit:booking:4:event:6:h100", "health-credit:booking:4:event:6:h100:part:1"}; !cmp.Equal(keys, want) {
		t.Errorf("keys %v; want %v", keys, want)
	}
	if secs != 2*3600 {
		t.Errorf("%d GPU-seconds credited; want 7200 (1h of each part)", secs)
	}
}
