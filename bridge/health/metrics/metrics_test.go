package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.NodeStates(map[health.State]int{health.Serving: 3, health.Drained: 1})
	r.NodeStates(map[health.State]int{health.Serving: 2, health.Requalify: 1, health.External: 1})
	r.CheckResult("xid", check.Pass, 2*time.Second)
	r.CheckResult("xid", check.Fail, 0)
	r.CheckResult("dcgm-r3", check.Pass, 40*time.Minute)
	want := `
# HELP gpubridge_health_nodes Managed nodes per health lifecycle state (burn-in, serving, suspect, drained, requalify, external), after the last cycle.
# TYPE gpubridge_health_nodes gauge
gpubridge_health_nodes{state="burn-in"} 0
gpubridge_health_nodes{state="drained"} 0
gpubridge_health_nodes{state="external"} 1
gpubridge_health_nodes{state="requalify"} 1
gpubridge_health_nodes{state="serving"} 2
gpubridge_health_nodes{state="suspect"} 0
# HELP gpubridge_health_check_results_total Health check results, by check and verdict (pass, warn, fail).
# TYPE gpubridge_health_check_results_total counter
gpubridge_health_check_results_total{check="dcgm-r3",verdict="pass"} 1
gpubridge_health_check_results_total{check="xid",verdict="fail"} 1
gpubridge_health_check_results_total{check="xid",verdict="pass"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gpubridge_health_nodes", "gpubridge_health_check_results_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(r.duration); n != 2 {
		t.Errorf("duration series %d, want 2 (a zero duration is not observed)", n)
	}
}
