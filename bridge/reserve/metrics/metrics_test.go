package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r.Observe(reserve.Report{At: at, States: map[reserve.State]int{reserve.StateActive: 2, reserve.StateAtRisk: 1},
		Actions:     []reserve.ActionResult{{Outcome: reserve.OutcomeFailed}, {Outcome: reserve.OutcomeDone}},
		Unprojected: []int64{7},
		Now: []reserve.ResourceNow{
			{Resource: "gpu:h100", Type: "h100", Capacity: 4, Booked: 3, Free: 1, AtRisk: 1},
			{Resource: "node:dgx", Type: "dgx", Capacity: 1, Booked: 0, Free: 1},
		}}, errors.New("one action failed"))
	want := `
# HELP gpubridge_bookings_at_risk Bookings at risk per GPU type or node class (a node under them down or drained, Slurm without room, no reservation at the start), at the last projection.
# TYPE gpubridge_bookings_at_risk gauge
gpubridge_bookings_at_risk{resource="gpu:h100",type="h100"} 1
gpubridge_bookings_at_risk{resource="node:dgx",type="dgx"} 0
# HELP gpubridge_bookings_free Capacity free for bookings now per GPU type or node class (capacity less booked, at least 0), at the last projection.
# TYPE gpubridge_bookings_free gauge
gpubridge_bookings_free{resource="gpu:h100",type="h100"} 1
gpubridge_bookings_free{resource="node:dgx",type="dgx"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gpubridge_bookings_at_risk", "gpubridge_bookings_free"); err != nil {
		t.Error(err)
	}
	for name, c := range map[string]struct {
		c    prometheus.Collector
		want float64
	}{
		"capacity":    {r.capacity.WithLabelValues("gpu:h100", "h100"), 4},
		"booked":      {r.booked.WithLabelValues("gpu:h100", "h100"), 3},
		"active":      {r.states.WithLabelValues("active"), 2},
		"ended":       {r.states.WithLabelValues("ended"), 0},
		"failed run":  {r.runs.WithLabelValues("failed"), 1},
		"ok run":      {r.runs.WithLabelValues("ok"), 0},
		"failed":      {r.failed, 1},
		"last":        {r.last, float64(at.Unix())},
		"unprojected": {r.unprojected, 1},
	} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v; want %v", name, got, c.want)
		}
	}
	// A run that could not read the cluster keeps the gauges; a type that
	// leaves the pool loses its series.
	r.Observe(reserve.Report{At: at.Add(time.Minute)}, errors.New("read the cluster: down"))
	if got := testutil.ToFloat64(r.capacity.WithLabelValues("gpu:h100", "h100")); got != 4 {
		t.Errorf("capacity after a failed read = %v", got)
	}
	r.Observe(reserve.Report{At: at.Add(2 * time.Minute), Now: []reserve.ResourceNow{{Resource: "gpu:h100", Type: "h100", Capacity: 2}}}, nil)
	if n := testutil.CollectAndCount(r.capacity); n != 1 {
		t.Errorf("%d capacity series; want 1 (node:dgx left)", n)
	}
	if got := testutil.ToFloat64(r.unprojected); got != 0 {
		t.Errorf("unprojected after a run that projected all = %v", got)
	}
	if got := testutil.ToFloat64(r.states.WithLabelValues("active")); got != 0 {
		t.Errorf("active after an empty run = %v", got)
	}
}
