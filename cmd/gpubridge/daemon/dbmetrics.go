package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// txRetries exports sqldb.Retries: the transactions this process ran
// again, by reason (deadlock, which is also Galera's certification
// failure; lock wait timeout; snapshot changed; node not ready;
// connection lost; aborted silently).
type txRetries struct{ desc *prometheus.Desc }

func newTxRetries() prometheus.Collector {
	return txRetries{desc: prometheus.NewDesc("gpubridge_database_tx_retries_total",
		"Database transactions run again after a transient conflict (Galera certification failure, deadlock, node not ready, ...), by reason.",
		[]string{"reason"}, nil)}
}

func (c txRetries) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c txRetries) Collect(ch chan<- prometheus.Metric) {
	for reason, n := range sqldb.Retries() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), reason)
	}
}
