package burst

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// fakeSlurm is an in-memory slurmctld for the controller's own logic: it
// lists its jobs and applies moves the way an update would.
type fakeSlurm struct {
	mu     sync.Mutex
	jobs   []Job
	lists  int
	writes map[int64]int
	fail   map[int64]error
}

func (f *fakeSlurm) ListJobs(context.Context) ([]Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return slices.Clone(f.jobs), nil
}

func (f *fakeSlurm) MoveJob(_ context.Context, id int64, part, qos, comment string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[id]; err != nil {
		return err
	}
	if f.writes == nil {
		f.writes = map[int64]int{}
	}
	f.writes[id]++
	for i := range f.jobs {
		if f.jobs[i].ID == id {
			f.jobs[i].Partition, f.jobs[i].QOS, f.jobs[i].AdminComment = part, qos, comment
			return nil
		}
	}
	return fmt.Errorf("job %d: not found", id)
}

type fakeTenants []Tenant

func (f fakeTenants) BurstTenants(context.Context) ([]Tenant, error) { return f, nil }

type fakeSpend map[string]int64

func (f fakeSpend) OnDemandSpend(context.Context, time.Time, time.Time) (map[string]int64, error) {
	return f, nil
}

type fakeRates Rates

func (f fakeRates) OnDemandRates(context.Context, time.Time) (Rates, error) { return Rates(f), nil }

// memStore is the in-memory Store the controller's tests run on.
type memStore struct {
	moves    map[string]MoveRecord
	refusals map[int64]Refusal
}

func newMemStore() *memStore {
	return &memStore{moves: map[string]MoveRecord{}, refusals: map[int64]Refusal{}}
}

func (s *memStore) RecordMoves(_ context.Context, _ time.Time, ms []MoveRecord) (int, error) {
	n := 0
	for _, m := range ms {
		k := fmt.Sprint(m.JobID, m.MovedAt.Unix())
		if _, ok := s.moves[k]; !ok {
			s.moves[k] = m
			n++
		}
	}
	return n, nil
}

func (s *memStore) SyncRefusals(_ context.Context, _ time.Time, rs []Refusal) ([]Refusal, error) {
	var changed []Refusal
	next := map[int64]Refusal{}
	for _, r := range rs {
		if old, ok := s.refusals[r.JobID]; !ok || old.Reason != r.Reason {
			changed = append(changed, r)
		}
		next[r.JobID] = r
	}
	s.refusals = next
	return changed, nil
}

type countRecorder struct {
	moved   int
	refused map[Reason]int
	failed  int
}

func (r *countRecorder) Moved(string, int64, time.Duration) { r.moved++ }
func (r *countRecorder) Refused(_ string, x Reason) {
	if r.refused == nil {
		r.refused = map[Reason]int{}
	}
	r.refused[x]++
}
func (r *countRecorder) MoveFailed(string) { r.failed++ }
func (r *countRecorder) Observe(Plan)      {}

func newController(s *fakeSlurm, st Store, p Policy) *Controller {
	return &Controller{
		Config: cfg, Jobs: s, Mover: s, Tenants: fakeTenants{acme(p)}, Spend: fakeSpend{}, Rates: fakeRates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit}, Minor: 2},
		Store: st, Now: func() time.Time { return t0 },
	}
}

func TestControllerCycle(t *testing.T) {
	s := &fakeSlurm{jobs: []Job{running(1, 1), running(2, 1), held(3, 1), held(4, 1), held(5, 1)}}
	st := newMemStore()
	rec := &countRecorder{}
	c := newController(s, st, Policy{Enabled: true, MaxGPUs: 2})
	c.Recorder = rec
	res, err := c.Cycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int64]int{5: 1, 4: 1}, s.writes); diff != "" {
		t.Errorf("writes (-want +got)\n%s", diff)
	}
	if got := len(st.moves); got != 2 {
		t.Errorf("stored moves = %d, want 2", got)
	}
	if diff := cmp.Diff(map[int64]Reason{3: Cap}, reasonsOf(st.refusals)); diff != "" {
		t.Errorf("refusals (-want +got)\n%s", diff)
	}
	if rec.moved != 2 || rec.refused[Cap] != 1 {
		t.Errorf("recorder = %+v", rec)
	}
	if s.lists != 1 {
		t.Errorf("list calls = %d, want 1", s.lists)
	}
	if len(res.Moved) != 2 {
		t.Errorf("result moved = %d", len(res.Moved))
	}

	// A second cycle on the state after the moves: nothing more, the same
	// refusal is not counted again.
	if _, err := c.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int64]int{5: 1, 4: 1}, s.writes); diff != "" {
		t.Errorf("writes after second cycle (-want +got)\n%s", diff)
	}
	if rec.refused[Cap] != 1 {
		t.Errorf("cap refusal counted %d times, want once", rec.refused[Cap])
	}

	// A job that ends clears its refusal.
	s.jobs = slices.DeleteFunc(s.jobs, func(j Job) bool { return j.ID == 3 })
	if _, err := c.Cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(st.refusals) != 0 {
		t.Errorf("refusals left: %+v", st.refusals)
	}
}

func reasonsOf(m map[int64]Refusal) map[int64]Reason {
	out := map[int64]Reason{}
	for id, r := range m {
		out[id] = r.Reason
	}
	return out
}

var errKilled = errors.New("killed")

// TestControllerKilledMidCycle: the process dies after the first move was
// written and before anything was recorded. A fresh controller moves no job
// twice, loses none, and records the first move from its marker.
func TestControllerKilledMidCycle(t *testing.T) {
	s := &fakeSlurm{jobs: []Job{running(1, 2), held(3, 1), held(4, 1), held(5, 1)}}
	st := newMemStore()
	c := newController(s, st, on)
	c.AfterMove = func(n int) { panic(errKilled) }
	func() {
		defer func() {
			if r := recover(); r != errKilled {
				t.Fatalf("recover() = %v", r)
			}
		}()
		_, _ = c.Cycle(context.Background())
	}()
	if len(st.moves) != 0 {
		t.Fatalf("moves recorded before the kill: %v", st.moves)
	}

	restarted := newController(s, st, on)
	restarted.Now = func() time.Time { return t0.Add(10 * time.Second) }
	res, err := restarted.Cycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int64]int{3: 1, 4: 1, 5: 1}, s.writes); diff != "" {
		t.Errorf("writes (-want +got)\n%s", diff)
	}
	if res.Adopted != 1 {
		t.Errorf("adopted = %d, want 1", res.Adopted)
	}
	if len(st.moves) != 3 {
		t.Errorf("stored moves = %d, want 3", len(st.moves))
	}
	// The adopted record keeps the time of the real move (the marker's).
	if _, ok := st.moves[fmt.Sprint(5, t0.Unix())]; !ok {
		t.Errorf("move of job 5 not stored under its marker time: %v", st.moves)
	}
}

func TestControllerMoveFailure(t *testing.T) {
	s := &fakeSlurm{jobs: []Job{running(1, 2), held(3, 1), held(4, 1)},
		fail: map[int64]error{4: errors.New("Job is no longer pending execution")}}
	st := newMemStore()
	rec := &countRecorder{}
	c := newController(s, st, on)
	c.Recorder = rec
	res, err := c.Cycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Moved) != 1 || res.Moved[0].Job.ID != 3 {
		t.Errorf("moved = %+v", res.Moved)
	}
	if diff := cmp.Diff(map[int64]Reason{4: MoveFailed}, reasonsOf(st.refusals)); diff != "" {
		t.Errorf("refusals (-want +got)\n%s", diff)
	}
	if rec.failed != 1 || rec.refused[MoveFailed] != 0 {
		t.Errorf("recorder = %+v", rec)
	}
}

func TestControllerCancelled(t *testing.T) {
	s := &fakeSlurm{jobs: []Job{running(1, 2), held(3, 1)}}
	c := newController(s, newMemStore(), on)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Cycle(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(s.writes) != 0 {
		t.Errorf("writes after cancel: %v", s.writes)
	}
}

func TestMonthStart(t *testing.T) {
	got := MonthStart(time.Date(2026, 5, 31, 23, 59, 59, 0, time.FixedZone("x", -3600)))
	if want := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("got %s, want %s", got, want)
	}
}
