package daemon

import (
	"strconv"

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

// dbNode exports sqldb.LastStatus, what the readiness probe of the
// database last found: gpubridge_database_node_info{node,galera} 1 and,
// on Galera, gpubridge_database_wsrep_local_state{node} (4 Synced; 1
// Joining, 2 Donor/Desynced, 3 Joined). Nothing before a probe reached a
// server.
type dbNode struct{ info, state *prometheus.Desc }

func newDBNode() prometheus.Collector {
	return dbNode{
		info: prometheus.NewDesc("gpubridge_database_node_info",
			"The database server gpubridge's last readiness probe reached (host:port), and whether it runs Galera.", []string{"node", "galera"}, nil),
		state: prometheus.NewDesc("gpubridge_database_wsrep_local_state",
			"wsrep_local_state of the Galera node gpubridge's last readiness probe reached: 4 Synced (ready); 1 Joining, 2 Donor/Desynced, 3 Joined (not ready).", []string{"node"}, nil),
	}
}

func (c dbNode) Describe(ch chan<- *prometheus.Desc) { ch <- c.info; ch <- c.state }

func (c dbNode) Collect(ch chan<- prometheus.Metric) {
	st, ok := sqldb.LastStatus()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, st.Node, strconv.FormatBool(st.Galera))
	if st.Galera {
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, float64(st.LocalState), st.Node)
	}
}
