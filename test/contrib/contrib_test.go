package contrib

// Checks of contrib/grafana and contrib/prometheus against the metrics the
// daemon exports, and proofs that the checks catch planted defects.

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

	burstmetrics "github.com/gpubridge/gpubridge/bridge/burst/metrics"
	creditmetrics "github.com/gpubridge/gpubridge/bridge/health/credit/metrics"
	healthmetrics "github.com/gpubridge/gpubridge/bridge/health/metrics"
	reconcilemetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	reservemetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/daemon"
)

var (
	dashboardFile  = filepath.Join(repo, "contrib/grafana/gpubridge.json")
	alertsDir      = filepath.Join(repo, "contrib/prometheus")
	provisionFiles = []string{filepath.Join(repo, "contrib/grafana/provisioning/dashboards/gpubridge.yaml"), filepath.Join(repo, "contrib/grafana/provisioning/datasources/prometheus.yaml")}
)

// recorder is a Registerer that keeps what is registered.
type recorder struct{ cs []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error   { r.cs = append(r.cs, c); return nil }
func (r *recorder) MustRegister(cs ...prometheus.Collector) { r.cs = append(r.cs, cs...) }
func (r *recorder) Unregister(prometheus.Collector) bool    { return false }

// metrics maps every metric name `gpubridge serve` registers (as
// cmd/gpubridge/app does) to its label names.
type metrics map[string][]string

// exported lists the metrics of `gpubridge serve`.
func exported(t *testing.T) metrics {
	t.Helper()
	rec := &recorder{}
	burstmetrics.New(rec)
	reconcilemetrics.New(rec)
	reservemetrics.New(rec)
	healthmetrics.New(rec)
	creditmetrics.New(rec)
	api.NewMetrics(rec)
	daemon.NewMetrics(rec)
	out := metrics{}
	for _, c := range rec.cs {
		ch := make(chan *prometheus.Desc, 100)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			name, labels := descOf(t, d)
			out[name] = labels
		}
	}
	if len(out) < 40 {
		t.Fatalf("gpubridge serve registers %d metrics, want 40 or more", len(out))
	}
	return out
}

var (
	fqName    = regexp.MustCompile(`fqName: "([^"]+)"`)
	varLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// descOf reads a Desc's name and variable labels (client_golang has no
// accessor for them).
func descOf(t *testing.T, d *prometheus.Desc) (string, []string) {
	t.Helper()
	m := fqName.FindStringSubmatch(d.String())
	if m == nil {
		t.Fatalf("desc %s has no name", d)
	}
	var labels []string
	if l := varLabels.FindStringSubmatch(d.String()); l != nil && l[1] != "" {
		for _, s := range strings.Split(l[1], ",") {
			labels = append(labels, strings.TrimSpace(s))
		}
	}
	return m[1], labels
}

var (
	selector = regexp.MustCompile(`\b(gpubridge_[a-z0-9_]+)\s*(\{[^}]*\})?`)
	matcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
)

// base is the metric a name belongs to: a histogram's _bucket, _sum and
// _count are its own.
func (ms metrics) base(name string) (string, bool) {
	if _, ok := ms[name]; ok {
		return name, true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, suf); ok {
			if _, ok := ms[b]; ok {
				return b, true
			}
		}
	}
	return "", false
}

// checkExpr reports the gpubridge metrics of expr the daemon does not
// export, and label matchers on labels the scraped series cannot have.
// Prometheus adds the target labels job and instance; a metric label of
// the same name is renamed exported_job or exported_instance (the default
// honor_labels: false), so gpubridge_job_runs_total's job is exported_job.
// With wantJob, every selector must also carry job=~"$job" (the dashboard's
// cluster variable). It returns the problems and how many metrics expr names.
func (ms metrics) checkExpr(where, expr string, wantJob bool) (problems []string, n int) {
	for _, m := range selector.FindAllStringSubmatch(expr, -1) {
		n++
		b, ok := ms.base(m[1])
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s is not a metric gpubridge exports", where, m[1]))
			continue
		}
		labels := slices.Clone(ms[b])
		own := slices.Contains(labels, "job")
		if strings.HasSuffix(m[1], "_bucket") {
			labels = append(labels, "le")
		}
		for i, l := range labels {
			if l == "job" || l == "instance" {
				labels[i] = "exported_" + l
			}
		}
		labels = append(labels, "job", "instance")
		onCluster := false
		for _, mm := range matcher.FindAllStringSubmatch(m[2], -1) {
			isVar := mm[1] == "job" && mm[2] == "=~" && mm[3] == "$job"
			onCluster = onCluster || isVar
			if mm[1] == "job" && own && !isVar {
				problems = append(problems, fmt.Sprintf("%s: %s: job is Prometheus's scrape job; the daemon's job label is exported_job once scraped", where, m[1]))
			}
			if !slices.Contains(labels, mm[1]) {
				problems = append(problems, fmt.Sprintf("%s: %s has no label %s once scraped (it has %s)", where, m[1], mm[1], strings.Join(labels, ", ")))
			}
		}
		if wantJob && !onCluster {
			problems = append(problems, fmt.Sprintf("%s: %s is not filtered by the cluster variable (job=~\"$job\")", where, m[1]))
		}
	}
	return problems, n
}

// The dashboard as the checks read it.
type dashboard struct {
	UID           string
	Title         string
	SchemaVersion int
	Time          struct{ From, To string }
	Templating    *struct {
		List []variable
	}
	Panels []panel
}

type variable struct {
	Name       string
	Type       string
	Query      any
	Datasource *datasource
}

type datasource struct{ Type, UID string }

type panel struct {
	ID          int
	Type        string
	Title       string
	Datasource  *datasource
	GridPos     *struct{ X, Y, W, H int }
	Targets     []target
	Panels      []panel
	FieldConfig struct {
		Defaults struct {
			Unit    string
			NoValue *string
		}
		Overrides []struct {
			Properties []struct {
				ID    string
				Value any
			}
		}
	}
}

type target struct {
	RefID      string
	Expr       string
	Datasource *datasource
}

const dsVar = "${datasource}"

// checkDashboard returns what keeps b from being a dashboard Grafana can
// provision as it is, and every query that names no exported metric or
// misses the cluster variable; exprs receives each query by place.
func checkDashboard(b []byte, ms metrics, exprs map[string]string) []string {
	var p []string
	bad := func(f string, a ...any) { p = append(p, fmt.Sprintf(f, a...)) }
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	if _, ok := raw["__inputs"]; ok {
		bad("__inputs: an import-only data source input; provisioning never fills it (use the datasource variable)")
	}
	if strings.Contains(string(b), "${DS_") {
		bad("${DS_...}: an import-only data source reference; use %s", dsVar)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return append(p, "not a dashboard: "+err.Error())
	}
	if d.UID == "" {
		bad("no uid")
	}
	if d.Title == "" {
		bad("no title")
	}
	if d.SchemaVersion <= 0 {
		bad("no schemaVersion")
	}
	if d.Time.From != "now/M" || d.Time.To != "now" {
		bad("time is %s to %s, want now/M to now (the month to date)", d.Time.From, d.Time.To)
	}
	if d.Templating == nil {
		bad("no templating list")
	} else {
		vars := map[string]variable{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v
			if v.Type == "query" {
				if v.Datasource == nil || v.Datasource.UID != dsVar {
					bad("variable %s: datasource is not %s", v.Name, dsVar)
				}
				if q, _ := v.Query.(map[string]any); q != nil {
					if s, _ := q["query"].(string); s != "" {
						pr, _ := ms.checkExpr("variable "+v.Name, s, v.Name != "job")
						p = append(p, pr...)
					}
				}
			}
		}
		if v, ok := vars["datasource"]; !ok || v.Type != "datasource" || v.Query != "prometheus" {
			bad("no variable datasource of type datasource and query prometheus")
		}
		if v, ok := vars["job"]; !ok || v.Type != "query" {
			bad("no variable job (the cluster: Prometheus's scrape job)")
		}
	}
	ids := map[int]bool{}
	n := 0
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, pn := range ps {
			where := fmt.Sprintf("panel %d %q", pn.ID, pn.Title)
			if ids[pn.ID] {
				bad("%s: id used twice", where)
			}
			ids[pn.ID] = true
			if g := pn.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				bad("%s: no gridPos inside the 24 columns", where)
			}
			if pn.Type == "row" {
				walk(pn.Panels)
				continue
			}
			n++
			if pn.Title == "" {
				bad("panel %d: no title", pn.ID)
			}
			if pn.Datasource == nil || pn.Datasource.UID != dsVar || pn.Datasource.Type != "prometheus" {
				bad("%s: datasource is not the prometheus %s", where, dsVar)
			}
			if pn.FieldConfig.Defaults.NoValue == nil {
				bad("%s: no noValue (say 0, not No data)", where)
			}
			if len(pn.Targets) == 0 {
				bad("%s: no query", where)
			}
			refs := map[string]bool{}
			for i, tg := range pn.Targets {
				tw := fmt.Sprintf("%s query %d", where, i)
				if tg.RefID == "" || refs[tg.RefID] {
					bad("%s: refId %q missing or used twice", tw, tg.RefID)
				}
				refs[tg.RefID] = true
				if tg.Datasource == nil || tg.Datasource.UID != dsVar {
					bad("%s: datasource is not %s", tw, dsVar)
				}
				if tg.Expr == "" {
					bad("%s: no expr", tw)
					continue
				}
				pr, names := ms.checkExpr(tw, tg.Expr, true)
				p = append(p, pr...)
				if names == 0 {
					bad("%s names no gpubridge metric: %s", tw, tg.Expr)
				}
				if strings.Contains(tg.Expr, "_minor_units") && pn.FieldConfig.Defaults.Unit != "percentunit" {
					if !strings.Contains(tg.Expr, "/ $minor_per_major") {
						bad("%s: money in minor units not divided by $minor_per_major", tw)
					}
					if !hasCurrencyUnit(pn) {
						bad("%s: money without a currency unit", tw)
					}
				}
				if exprs != nil {
					exprs[tw] = tg.Expr
				}
			}
		}
	}
	walk(d.Panels)
	if n < 10 {
		bad("the dashboard has %d panels", n)
	}
	return p
}

func hasCurrencyUnit(pn panel) bool {
	if strings.HasPrefix(pn.FieldConfig.Defaults.Unit, "currency") {
		return true
	}
	for _, o := range pn.FieldConfig.Overrides {
		for _, pr := range o.Properties {
			if s, _ := pr.Value.(string); pr.ID == "unit" && strings.HasPrefix(s, "currency") {
				return true
			}
		}
	}
	return false
}

// promtoolCheck validates PromQL expressions with promtool, as recording
// rules (Grafana's variables replaced by values).
func promtoolCheck(t *testing.T, exprs map[string]string) error {
	t.Helper()
	promtool := lookPromtool(t)
	vars := strings.NewReplacer("$__rate_interval", "5m", "$minor_per_major", "100", "$job", ".*", "$tenant", ".*", "$gpu_type", ".*", "$currency", ".*")
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
		return fmt.Errorf("promtool check rules of the dashboard's queries: %v\n%s", err, out)
	}
	return nil
}

func lookPromtool(t *testing.T) string {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run test/install-deps.sh (Debian package prometheus)")
	}
	return promtool
}

// TestGrafanaDashboard: contrib/grafana/gpubridge.json is a dashboard
// Grafana provisions as it is (uid, title, schemaVersion, the datasource
// and job variables, the month to date; every panel and query on
// ${datasource} with a gridPos, refId, noValue and expr), every query
// names only exported metrics and labels, filtered by the cluster, money
// in major units with a currency unit, and every query is valid PromQL.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{}
	for _, p := range checkDashboard(b, exported(t), exprs) {
		t.Error(p)
	}
	if len(exprs) < 20 {
		t.Errorf("the dashboard has %d queries", len(exprs))
	}
	if err := promtoolCheck(t, exprs); err != nil {
		t.Error(err)
	}
}

// TestGrafanaDashboardCheckCatches plants one defect at a time in a copy
// of the dashboard and wants checkDashboard (or promtool) to report it.
func TestGrafanaDashboardCheckCatches(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	ms := exported(t)
	// firstPanel is the first panel that is no row.
	firstPanel := func(d map[string]any) map[string]any {
		for _, p := range d["panels"].([]any) {
			if pm := p.(map[string]any); pm["type"] != "row" {
				return pm
			}
		}
		panic("no panel")
	}
	target := func(d map[string]any) map[string]any {
		return firstPanel(d)["targets"].([]any)[0].(map[string]any)
	}
	for _, c := range []struct {
		name, want string
		plant      func(d map[string]any)
	}{
		{"import-only data source", "datasource is not the prometheus ${datasource}", func(d map[string]any) {
			firstPanel(d)["datasource"] = map[string]any{"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
		}},
		{"panel without data source", "datasource is not the prometheus ${datasource}", func(d map[string]any) { delete(firstPanel(d), "datasource") }},
		{"__inputs", "__inputs", func(d map[string]any) { d["__inputs"] = []any{map[string]any{"name": "DS_PROMETHEUS"}} }},
		{"query without data source", "query 0: datasource is not ${datasource}", func(d map[string]any) { delete(target(d), "datasource") }},
		{"no refId", "refId \"\" missing", func(d map[string]any) { delete(target(d), "refId") }},
		{"no expr", "no expr", func(d map[string]any) { delete(target(d), "expr") }},
		{"no gridPos", "no gridPos", func(d map[string]any) { delete(firstPanel(d), "gridPos") }},
		{"no uid", "no uid", func(d map[string]any) { delete(d, "uid") }},
		{"no title", "no title", func(d map[string]any) { delete(d, "title") }},
		{"no schemaVersion", "no schemaVersion", func(d map[string]any) { delete(d, "schemaVersion") }},
		{"no templating", "no templating list", func(d map[string]any) { delete(d, "templating") }},
		{"no datasource variable", "no variable datasource", func(d map[string]any) {
			tl := d["templating"].(map[string]any)
			tl["list"] = tl["list"].([]any)[1:]
		}},
		{"last 24 hours", "want now/M to now", func(d map[string]any) { d["time"] = map[string]any{"from": "now-24h", "to": "now"} }},
		{"No data", "no noValue", func(d map[string]any) {
			delete(firstPanel(d)["fieldConfig"].(map[string]any)["defaults"].(map[string]any), "noValue")
		}},
		{"no cluster filter", "not filtered by the cluster variable", func(d map[string]any) {
			target(d)["expr"] = "max by (gpu_type) (gpubridge_pool_capacity_gpus)"
		}},
		{"cluster variable on the wrong label", "not filtered by the cluster variable", func(d map[string]any) {
			target(d)["expr"] = `sum(gpubridge_job_runs_total{exported_job=~"$job"})`
		}},
		{"unknown metric", "gpubridge_pool_nope_gpus is not a metric", func(d map[string]any) {
			target(d)["expr"] = `max(gpubridge_pool_nope_gpus{job=~"$job"})`
		}},
		{"job label of the daemon", "has no label exported_job", func(d map[string]any) {
			target(d)["expr"] = `sum(gpubridge_leader{job=~"$job", exported_job="x"})`
		}},
		{"minor units as money", "not divided by $minor_per_major", func(d map[string]any) {
			target(d)["expr"] = `sum(gpubridge_tenant_spend_minor_units{job=~"$job"})`
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			c.plant(d)
			planted, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			got := checkDashboard(planted, ms, nil)
			if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, c.want) }) {
				t.Errorf("the check missed it: want a problem with %q, got %q", c.want, got)
			}
		})
	}
	t.Run("invalid PromQL", func(t *testing.T) {
		if err := promtoolCheck(t, map[string]string{"q": `sum(gpubridge_leader{job=~"$job"}`}); err == nil {
			t.Error("promtool passed an unclosed parenthesis")
		}
	})
}

// The alerting rules and their unit tests as the checks read them.
type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert       string
			Expr        string
			Labels      map[string]string
			Annotations map[string]string
		}
	}
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string
			ExpAlerts []any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	}
}

// checkAlerts returns the alerts of rules that name metrics or labels the
// scraped series lack, miss a severity, summary or description, or have
// no promtool case in tests where they fire and one where they do not.
func checkAlerts(rules, tests []byte, ms metrics) []string {
	var p []string
	var f ruleFile
	if err := yaml.Unmarshal(rules, &f); err != nil {
		return []string{"alerts.yml: " + err.Error()}
	}
	var tf ruleTests
	if err := yaml.Unmarshal(tests, &tf); err != nil {
		return []string{"alerts_test.yml: " + err.Error()}
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			pr, names := ms.checkExpr("alert "+r.Alert, r.Expr, false)
			p = append(p, pr...)
			if names == 0 {
				p = append(p, fmt.Sprintf("alert %s names no gpubridge metric", r.Alert))
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				p = append(p, fmt.Sprintf("alert %s: severity, summary or description missing", r.Alert))
			}
			if !fires[r.Alert] || !quiet[r.Alert] {
				p = append(p, fmt.Sprintf("alert %s: alerts_test.yml has no case where it fires and one where it does not", r.Alert))
			}
		}
	}
	if n == 0 {
		p = append(p, "alerts.yml has no alert")
	}
	return p
}

// TestPrometheusAlerts: contrib/prometheus/alerts.yml names only exported
// metrics and labels, every alert has a firing and a quiet case in
// alerts_test.yml, and promtool check rules and promtool test rules pass.
func TestPrometheusAlerts(t *testing.T) {
	promtool := lookPromtool(t)
	rules, err := os.ReadFile(filepath.Join(alertsDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(alertsDir, "alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkAlerts(rules, tests, exported(t)) {
		t.Error(p)
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = alertsDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestPrometheusAlertsCheckCatches plants an alert without a test case, and
// one on the daemon's job label as if Prometheus kept it, and wants both
// reported.
func TestPrometheusAlertsCheckCatches(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join(alertsDir, "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(alertsDir, "alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	planted := string(rules) + `      - alert: GpubridgePlanted
        expr: sum by (job) (increase(gpubridge_job_runs_total{job="ingest",result="error"}[15m])) > 0
        labels:
          severity: warning
        annotations:
          summary: "planted"
          description: "planted"
`
	got := checkAlerts([]byte(planted), tests, exported(t))
	for _, want := range []string{
		"alert GpubridgePlanted: alerts_test.yml has no case",
		"alert GpubridgePlanted: gpubridge_job_runs_total: job is Prometheus's scrape job",
	} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("the check missed %q: got %q", want, got)
		}
	}
}

// TestGrafanaProvisioning: the provisioning examples are YAML Grafana
// reads (apiVersion 1, a providers or datasources list).
func TestGrafanaProvisioning(t *testing.T) {
	for _, f := range provisionFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var y struct {
			APIVersion  int              `yaml:"apiVersion"`
			Providers   []map[string]any `yaml:"providers"`
			Datasources []map[string]any `yaml:"datasources"`
		}
		if err := yaml.Unmarshal(b, &y); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if y.APIVersion != 1 || len(y.Providers)+len(y.Datasources) == 0 {
			t.Errorf("%s: want apiVersion 1 and a providers or datasources list", f)
		}
	}
}
