package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRefusals(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.Refused("unrecorded")
	r.Refused("unrecorded")
	r.Refused("share")
	want := `
# HELP gpubridge_reconcile_refusals_total Plans refused by the delete policy, by reason (unrecorded: deletes objects the store has no record of; all: deletes every tenant; share: more than reconcile.maxDeleteShare).
# TYPE gpubridge_reconcile_refusals_total counter
gpubridge_reconcile_refusals_total{reason="all"} 0
gpubridge_reconcile_refusals_total{reason="share"} 1
gpubridge_reconcile_refusals_total{reason="unrecorded"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "gpubridge_reconcile_refusals_total"); err != nil {
		t.Error(err)
	}
}
