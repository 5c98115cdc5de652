package health_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health"
)

// mover records what the service hands the booking projector, and whether
// Slurm already showed the change when it was called.
type mover struct {
	c     interface{ Node(string) health.SlurmNode }
	calls []string
	err   error
}

func (m *mover) Reproject(_ context.Context, nodes []string) ([]string, error) {
	var lines []string
	for _, n := range nodes {
		sn := m.c.Node(n)
		m.calls = append(m.calls, n+" drained="+map[bool]string{true: "yes", false: "no"}[sn.Drain])
		lines = append(lines, "booking 7 on "+n+" re-projected")
	}
	return lines, m.err
}

// TestDrainReprojectsBookings: the cycle that drains a node hands it to
// the booking projector after the drain is in Slurm (so the projector
// sees it drained and marks or moves the bookings on it); cycles that
// change nothing do not call it; the cycle that returns the node to
// service calls it again, as does the admin override; its error is the
// cycle's error, with its lines in the report.
func TestDrainReprojectsBookings(t *testing.T) {
	m := &mover{}
	e := newEnv(t, func(p *health.Params) { p.Mover = m })
	m.c = e.c
	e.serving("gpu-a")
	e.cycle("quick")
	e.c.States(context.Background(), nil)
	e.advance(interval)
	e.cycle("quick")
	if len(m.calls) != 0 {
		t.Fatalf("cycles without a state change called the projector: %v", m.calls)
	}
	e.setFault("gpu-a", true)
	var rep health.Report
	for i := 0; i < 3 && e.rec("gpu-a").State != health.Drained; i++ {
		e.advance(interval)
		rep = e.cycle("quick")
	}
	if e.rec("gpu-a").State != health.Drained {
		t.Fatalf("not drained: %+v", e.rec("gpu-a"))
	}
	if diff := cmp.Diff([]string{"gpu-a drained=yes"}, m.calls); diff != "" {
		t.Errorf("projector calls (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"booking 7 on gpu-a re-projected"}, rep.Bookings); diff != "" {
		t.Errorf("report's bookings (-want +got)\n%s", diff)
	}
	var found bool
	for _, row := range health.ReportTable(rep).Rows {
		found = found || (row[0] == "booking" && row[2] == "booking 7 on gpu-a re-projected")
	}
	if !found {
		t.Errorf("the report table lacks the booking line: %v", health.ReportTable(rep).Rows)
	}
	// Still drained: acceptance cycles that keep it held do not call it.
	e.advance(5 * time.Minute)
	e.cycle("acceptance")
	if len(m.calls) != 1 {
		t.Errorf("a cycle that kept the node held called the projector: %v", m.calls)
	}
	m.err = errors.New("slurmrestd down")
	if _, err := e.svc.ResumeNode(context.Background(), "gpu-a", "alice", "fixed"); err == nil || !strings.Contains(err.Error(), "bookings were not re-projected") {
		t.Errorf("resume with the projector failing: %v", err)
	}
	if diff := cmp.Diff([]string{"gpu-a drained=yes", "gpu-a drained=no"}, m.calls); diff != "" {
		t.Errorf("projector calls after the override (-want +got)\n%s", diff)
	}

	if e.rec("gpu-a").State != health.Serving {
		t.Errorf("the override did not stand: %+v", e.rec("gpu-a"))
	}
	// A failing projector fails the cycle that drains.
	var err error
	for i := 0; i < 3 && e.rec("gpu-a").State != health.Drained; i++ {
		e.advance(interval)
		_, err = e.svc.Cycle(context.Background(), "quick")
	}
	if e.rec("gpu-a").State != health.Drained || err == nil || !strings.Contains(err.Error(), "bookings on gpu-a: slurmrestd down") {
		t.Errorf("cycle with the projector failing: %v (%s)", err, e.rec("gpu-a").State)
	}
}

// TestReleaseReprojectsTwice: a node that requalifies has its bookings
// re-projected by the cycle that returns it to service and once more by
// the first cycle 5 s or more later (not a harvest right after), then no
// more.
func TestReleaseReprojectsTwice(t *testing.T) {
	m := &mover{}
	e := newEnv(t, func(p *health.Params) { p.Mover = m })
	m.c = e.c
	e.serving("gpu-a")
	e.setFault("gpu-a", true)
	for i := 0; i < 4 && e.rec("gpu-a").State != health.Drained; i++ {
		e.advance(interval)
		e.cycle("quick")
	}
	e.setFault("gpu-a", false)
	for i := 0; i < 6 && e.rec("gpu-a").State != health.Serving; i++ {
		e.advance(5 * time.Minute)
		e.cycle("acceptance")
	}
	if e.rec("gpu-a").State != health.Serving {
		t.Fatalf("gpu-a %+v", e.rec("gpu-a"))
	}
	if _, err := e.svc.Harvest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 2 {
		t.Errorf("a harvest right after the release re-projected again: %v", m.calls)
	}
	for i := 0; i < 3; i++ {
		e.advance(interval)
		e.cycle("quick")
	}
	if diff := cmp.Diff([]string{"gpu-a drained=yes", "gpu-a drained=no", "gpu-a drained=no"}, m.calls); diff != "" {
		t.Errorf("projector calls (-want +got)\n%s", diff)
	}
}
