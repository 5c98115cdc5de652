package main

// Tests of contrib/grafana and contrib/prometheus against the metrics the
// daemon exports.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/gpubridge/gpubridge/bridge/api"
	bmetrics "github.com/gpubridge/gpubridge/bridge/burst/metrics"
	rmetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	"github.com/gpubridge/gpubridge/internal/daemon"
)

// recorder is a Registerer that keeps what is registered.
type recorder struct{ cs []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error   { r.cs = append(r.cs, c); return nil }
func (r *recorder) MustRegister(cs ...prometheus.Collector) { r.cs = append(r.cs, cs...) }
func (r *recorder) Unregister(prometheus.Collector) bool    { return false }

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// exported lists every metric name `gpubridge serve` registers.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	rec := &recorder{}
	bmetrics.New(rec)
	rmetrics.New(rec)
	api.NewMetrics(rec)
	daemon.NewMetrics(rec)
	names := map[string]bool{}
	for _, c := range rec.cs {
		ch := make(chan *prometheus.Desc, 100)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("desc %s has no name", d)
			}
			names[m[1]] = true
		}
	}
	return names
}

var metricName = regexp.MustCompile(`\bgpubridge_[a-z0-9_]+`)

// checkNames reports every gpubridge_ metric expr names that the daemon
// does not export (a histogram's _bucket, _sum and _count are its own).
func checkNames(t *testing.T, where, expr string, names map[string]bool) int {
	t.Helper()
	n := 0
	for _, m := range metricName.FindAllString(expr, -1) {
		base := m
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suf); ok && names[b] {
				base = b
			}
		}
		if !names[base] {
			t.Errorf("%s: %s is not a metric gpubridge exports", where, m)
		}
		n++
	}
	return n
}

// promtoolCheck validates PromQL expressions with promtool, as recording
// rules (Grafana's variables replaced by values).
func promtoolCheck(t *testing.T, exprs map[string]string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run test/install-deps.sh (Debian package prometheus)")
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$tenant", ".*", "$gpu_type", ".*")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range exprs {
			if !yield(k) {
				return
			}
		}
	}) {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:q%d", len(rules)), Expr: vars.Replace(exprs[k])})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules of the dashboard's queries: %v\n%s", err, out)
	}
}

// TestGrafanaDashboard: contrib/grafana/gpubridge.json loads, every panel
// has a query, every query and variable names only metrics the daemon
// exports, and every query is valid PromQL.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../../contrib/grafana/gpubridge.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string
		Panels     []panel
		Templating struct {
			List []struct {
				Name  string
				Query struct{ Query string }
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("gpubridge.json: %v", err)
	}
	names := exported(t)
	exprs := map[string]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for i, tg := range p.Targets {
				where := fmt.Sprintf("panel %q query %d", p.Title, i)
				if checkNames(t, where, tg.Expr, names) == 0 {
					t.Errorf("%s names no gpubridge metric: %s", where, tg.Expr)
				}
				exprs[where] = tg.Expr
			}
		}
	}
	walk(d.Panels)
	if len(exprs) < 10 {
		t.Errorf("the dashboard has %d queries", len(exprs))
	}
	for _, v := range d.Templating.List {
		checkNames(t, "variable "+v.Name, v.Query.Query, names)
	}
	promtoolCheck(t, exprs)
}

type panel struct {
	Type    string
	Title   string
	Targets []struct{ Expr string }
	Panels  []panel
}

// TestPrometheusAlerts: contrib/prometheus/alerts.yml is valid, names only
// exported metrics, and promtool test rules proves that each alert fires
// and clears (contrib/prometheus/alerts_test.yml).
func TestPrometheusAlerts(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run test/install-deps.sh (Debian package prometheus)")
	}
	b, err := os.ReadFile("../../contrib/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	names := exported(t)
	var alerts []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			checkNames(t, "alert "+r.Alert, r.Expr, names)
			alerts = append(alerts, r.Alert)
		}
	}
	tests, err := os.ReadFile("../../contrib/prometheus/alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if strings.Count(string(tests), "alertname: "+a+"\n") < 2 {
			t.Errorf("alerts_test.yml does not test that %s fires and clears", a)
		}
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../../contrib/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
