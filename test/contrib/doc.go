// Package contrib holds the checks of what contrib/ ships for monitoring
// (docs/monitoring.md): contrib/grafana/gpubridge.json is a dashboard Grafana
// can provision (its schema, the data source variable on every panel and
// query, the cluster variable in every query, valid PromQL naming only
// metrics the daemon exports), and contrib/prometheus/alerts.yml passes
// promtool check rules and promtool test rules, every alert with a case.
// They run with the unit tests (go test ./test/contrib/); promtool comes
// from Debian's prometheus package (test/install-deps.sh).
package contrib

// repo is the repository's root, from this package's directory.
const repo = "../.."
