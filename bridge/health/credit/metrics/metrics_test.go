package metrics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/internal/money"
)

func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.now = func() time.Time { return time.Unix(1800000000, 0) }
	eur := money.Currency{Code: "EUR", Minor: 2}
	r.Ran([]credit.Credit{{Kind: credit.NodeFail, Amount: money.New(-420, eur)}, {Kind: credit.NodeFail, Amount: money.New(-80, eur)}}, nil)
	r.Ran(nil, errors.New("ledger down"))
	want := `
# HELP gpubridge_health_credit_amount_minor_units_total Money credited by node health credit lines, in minor units of the currency (cents), by kind and currency.
# TYPE gpubridge_health_credit_amount_minor_units_total counter
gpubridge_health_credit_amount_minor_units_total{currency="EUR",kind="node-fail"} 500
# HELP gpubridge_health_credit_last_run_timestamp_seconds When the node health credit job last completed without error (Unix seconds).
# TYPE gpubridge_health_credit_last_run_timestamp_seconds gauge
gpubridge_health_credit_last_run_timestamp_seconds 1.8e+09
# HELP gpubridge_health_credit_runs_total Runs of the node health credit job, by result (ok, error).
# TYPE gpubridge_health_credit_runs_total counter
gpubridge_health_credit_runs_total{result="error"} 1
gpubridge_health_credit_runs_total{result="ok"} 1
# HELP gpubridge_health_credits_total Node health credit lines written to the ledger, by kind (node-fail, killed-by-drain, booking-lost).
# TYPE gpubridge_health_credits_total counter
gpubridge_health_credits_total{kind="booking-lost"} 0
gpubridge_health_credits_total{kind="killed-by-drain"} 0
gpubridge_health_credits_total{kind="node-fail"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
