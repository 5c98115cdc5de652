package app

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	hmetrics "github.com/gpubridge/gpubridge/bridge/health/metrics"
	bmetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The node health use cases (bridge/health) as the CLI runs them: each
// reads its key=value options, checks that the invoking user may speak
// for a tenant= it names, builds the service and calls it. What was typed
// wrong, and the service's refusals of what was asked, are ErrInput.

// Health builds the health service of the configuration for a command
// (bridge/health/setup).
func (e *Env) Health(ctx context.Context) (*health.Service, error) {
	return e.HealthWith(ctx, nil, nil)
}

// HealthWith builds the health service of the configuration
// (bridge/health/setup), with the daemon's recorders when given: what the
// configuration says is checked before anything connects. When gpubridge
// projects bookings (schedules.bookings), a node the service holds or
// releases has its bookings re-projected at once (bookingMover).
func (e *Env) HealthWith(ctx context.Context, obs *hmetrics.Recorder, bookings *bmetrics.Recorder) (*health.Service, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	nodes, cat, err := wire.HealthCheck(c)
	var ve config.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return nil, Input(err)
	}
	if err != nil {
		return nil, err
	}
	k, err := e.on(ctx, true)
	if err != nil {
		return nil, err
	}
	p := wire.HealthParams{Config: c, Cluster: k.Cluster, Slurm: k.Slurm, DB: k.DB, Logger: e.Logger().With("component", "health")}
	if obs != nil {
		p.Observer = obs
	}
	if c.Schedules.Bookings != "" {
		p.Mover = bookingMover{e: e, rec: bookings}
	}
	svc, err := wire.Health(p, nodes, cat)
	if err != nil {
		return nil, Input(err)
	}
	return svc, nil
}

// bookingMover runs the booking projector (bridge/reserve) under the
// writer lock when the health service held or released nodes: a booking
// on a drained node is marked at risk, or moved to healthy GPUs where
// the ledger has room.
type bookingMover struct {
	e   *Env
	rec *bmetrics.Recorder // the daemon's; nil in a command
}

var _ health.BookingMover = bookingMover{}

func (m bookingMover) Reproject(ctx context.Context, nodes []string) ([]string, error) {
	what := "gpubridge health (bookings on " + strings.Join(nodes, ",") + ")"
	p, err := m.e.Projector(ctx, what)
	if err != nil {
		return nil, err
	}
	p.Logger = m.e.Logger().With("component", "bookings")
	release, err := m.e.WriterLockFor(ctx, what)
	if err != nil {
		return nil, err
	}
	defer release()
	rep, err := p.Project(ctx)
	if m.rec != nil {
		m.rec.Observe(rep, err)
	}
	return view.ProjectionLines(rep), err
}

// SpeakFor checks that the invoking user may act for a tenant in the
// health commands (root, or one of its admins).
func (e *Env) SpeakFor(ctx context.Context, tenantName string) error {
	ts, err := e.TenantStore(ctx)
	if err != nil {
		return err
	}
	err = wire.SpeakFor(ctx, ts, tenantName, Actor())
	if errors.Is(err, wire.ErrNoTenant) {
		return Input(err)
	}
	return err
}

// healthErr marks the service's refusals of what was asked as input
// errors (exit 2).
func healthErr(err error) error {
	if errors.Is(err, health.ErrInvalid) || errors.Is(err, health.ErrUnknownNode) {
		return Input(err)
	}
	return err
}

// parseHealthDuration reads where[key], a positive duration, when given
// (example names one in the error).
func parseHealthDuration(where map[string]string, key, example string, d *time.Duration) error {
	v, ok := where[key]
	if !ok {
		return nil
	}
	var err error
	if *d, err = time.ParseDuration(v); err != nil || *d <= 0 {
		return Inputf("%s=%q: want a duration such as %s", key, v, example)
	}
	return nil
}

// ParseCreditLookback reads credit run-once's lookback= (7d, 36h); zero
// when it is not given.
func ParseCreditLookback(where map[string]string) (config.Span, error) {
	var s config.Span
	if lookback, ok := where["lookback"]; ok {
		if err := s.UnmarshalJSON([]byte(lookback)); err != nil || s.Duration <= 0 {
			return config.Span{}, Inputf("lookback=%s: want a duration such as 7d or 36h", lookback)
		}
	}
	return s, nil
}

// CheckedNode is what `check node` did: the run it submitted and, when it
// waited, its results.
type CheckedNode struct {
	Run     health.Run
	Results []health.StoredResult
	Waited  bool
}

// Table is what `check node` prints: the submitted run, or the results
// it waited for.
func (c CheckedNode) Table() table.Table {
	if !c.Waited {
		return health.RunsTable([]health.Run{c.Run})
	}
	return health.ResultsTable(c.Results)
}

// CheckNodeRequest is check node: the run to submit now, and how long to
// wait for its results (0: do not wait).
type CheckNodeRequest struct {
	Run  health.Request
	Wait time.Duration
}

// ParseCheckNode reads check node NODE's options: check=, peer=, tenant=
// and wait=.
func ParseCheckNode(node string, where map[string]string) (CheckNodeRequest, error) {
	var wait time.Duration
	if err := parseHealthDuration(where, "wait", "90s or 30m", &wait); err != nil {
		return CheckNodeRequest{}, err
	}
	return CheckNodeRequest{Run: health.Request{Node: node, Checks: kv.List(where["check"]), Tenant: where["tenant"], Actor: Actor(), Peer: where["peer"]}, Wait: wait}, nil
}

// CheckNode runs the health checks r asks for now (the invoking user must
// speak for its tenant, when it names one), waiting r.Wait for their
// results.
func (e *Env) CheckNode(ctx context.Context, r CheckNodeRequest) (CheckedNode, error) {
	if tenantName := r.Run.Tenant; tenantName != "" {
		if err := e.SpeakFor(ctx, tenantName); err != nil {
			return CheckedNode{}, err
		}
	}
	svc, err := e.Health(ctx)
	if err != nil {
		return CheckedNode{}, err
	}
	run, res, err := svc.CheckNow(ctx, r.Run, r.Wait)
	return CheckedNode{Run: run, Results: res, Waited: r.Wait > 0}, healthErr(err)
}

// ResumeNode returns a node that gpubridge holds to service at once, for
// reason (audited), after confirm (when given).
func (e *Env) ResumeNode(ctx context.Context, node, reason string, confirm func(string) error) (health.Node, error) {
	svc, err := e.Health(ctx)
	if err != nil {
		return health.Node{}, err
	}
	if confirm != nil {
		if err := confirm(health.ResumePrompt(node)); err != nil {
			return health.Node{}, err
		}
	}
	n, err := svc.ResumeNode(ctx, node, Actor(), reason)
	return n, healthErr(err)
}

// JudgeRequest is judge: a saved output of check Check (File, "-" for
// stdin) on the node Input describes (its Output is read from File).
type JudgeRequest struct {
	Check, File string
	Input       check.Input
}

// ParseJudge reads judge CHECK FILE's options: model=, gpus= and exit=.
func ParseJudge(name, file string, where map[string]string) (JudgeRequest, error) {
	in := check.Input{Model: where["model"]}
	for key, dst := range map[string]*int{"gpus": &in.GPUs, "exit": &in.ExitCode} {
		if v, ok := where[key]; ok {
			var err error
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 0 {
				return JudgeRequest{}, Inputf("%s=%q: want a number, 0 or more", key, v)
			}
		}
	}
	return JudgeRequest{Check: name, File: file, Input: in}, nil
}

// JudgeOutput judges the saved output r names as a run would
// (health.checks' parsers and thresholds). It connects to nothing.
func (e *Env) JudgeOutput(r JudgeRequest, stdin io.Reader) (check.Result, error) {
	in, name, file := r.Input, r.Check, r.File
	c, err := e.Config()
	if err != nil {
		return check.Result{}, err
	}
	cat, err := wire.HealthCatalog(c)
	if err != nil {
		return check.Result{}, err
	}
	if in.Output, err = readInput(stdin, file); err != nil {
		return check.Result{}, err
	}
	res, err := cat.Judge(name, in)
	if err != nil {
		return check.Result{}, Input(err)
	}
	return res, nil
}

// readInput reads a file, or stdin for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, Input(err)
	}
	return b, nil
}

// HealthCycle runs one cycle of a health schedule (default: acceptance),
// as the daemon does. A failure to start comes back with a nil report; the
// cycle's own errors with its report.
func (e *Env) HealthCycle(ctx context.Context, schedule string) (*health.Report, error) {
	svc, err := e.Health(ctx)
	if err != nil {
		return nil, err
	}
	if schedule == "" {
		schedule = health.AcceptanceSchedule
	}
	rep, err := svc.Cycle(ctx, schedule)
	return &rep, healthErr(err)
}

// ParseHealthResults reads show checks' keys: node=, tenant=, check=,
// run=, since= and limit=.
func ParseHealthResults(where map[string]string) (health.ResultFilter, error) {
	f := health.ResultFilter{Node: where["node"], Tenant: where["tenant"], Check: where["check"]}
	var err error
	if v, ok := where["run"]; ok {
		if f.RunID, err = strconv.ParseInt(v, 10, 64); err != nil || f.RunID <= 0 {
			return f, Inputf("run=%q: want a run id", v)
		}
	}
	var since time.Duration
	if err := parseHealthDuration(where, "since", "24h", &since); err != nil {
		return f, err
	}
	if since > 0 {
		f.Since = time.Now().Add(-since)
	}
	if v, ok := where["limit"]; ok {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit <= 0 {
			return f, Inputf("limit=%q: want a positive number", v)
		}
	}
	return f, nil
}

// HealthResults are the check results that f keeps (the invoking user
// must speak for its tenant, when it names one), newest first.
func (e *Env) HealthResults(ctx context.Context, f health.ResultFilter) ([]health.StoredResult, error) {
	if f.Tenant != "" {
		if err := e.SpeakFor(ctx, f.Tenant); err != nil {
			return nil, err
		}
	}
	svc, err := e.Health(ctx)
	if err != nil {
		return nil, err
	}
	return svc.Results(ctx, f)
}

// NodeHealth is what `show health` shows: the managed nodes, or (History)
// a tenant's history of the nodes it used.
type NodeHealth struct {
	History bool
	Nodes   []health.NodeView
	Entries []health.HistoryEntry
}

// Table is what `show health` prints: the history's table or the nodes'.
func (h NodeHealth) Table() table.Table {
	if h.History {
		return health.HistoryTable(h.Entries)
	}
	return health.NodesTable(h.Nodes)
}

// ShowHealthRequest is show health: the managed nodes (Node and Tenant
// filter), or with History a tenant's history of the nodes it used (of
// Node, when given) over the last Since.
type ShowHealthRequest struct {
	History      bool
	Node, Tenant string
	Since        time.Duration
}

// ParseShowHealth reads show health's words (none, or "history") and
// keys: node=, tenant= and since= (history's, default 168h).
func ParseShowHealth(names []string, where map[string]string) (ShowHealthRequest, error) {
	history := len(names) == 1 && names[0] == "history"
	switch {
	case len(names) > 0 && !history:
		return ShowHealthRequest{}, Inputf("unexpected %q: use node=NAME (or history tenant=NAME)", names[0])
	case history && where["tenant"] == "":
		return ShowHealthRequest{}, Inputf("history is a tenant's view: add tenant=NAME (an admin sees every check with show checks)")
	case !history && where["since"] != "":
		return ShowHealthRequest{}, Inputf("since= goes with history tenant=NAME")
	}
	r := ShowHealthRequest{History: history, Node: where["node"], Tenant: where["tenant"], Since: 168 * time.Hour}
	if err := parseHealthDuration(where, "since", "168h", &r.Since); err != nil {
		return ShowHealthRequest{}, err
	}
	return r, nil
}

// ShowHealth lists the nodes or the history r asks for. The invoking user
// must speak for the tenant it names.
func (e *Env) ShowHealth(ctx context.Context, r ShowHealthRequest) (NodeHealth, error) {
	history, since := r.History, r.Since
	if t := r.Tenant; t != "" {
		if err := e.SpeakFor(ctx, t); err != nil {
			return NodeHealth{}, err
		}
	}
	svc, err := e.Health(ctx)
	if err != nil {
		return NodeHealth{}, err
	}
	out := NodeHealth{History: history}
	if history {
		out.Entries, err = svc.TenantHistory(ctx, r.Tenant, r.Node, time.Now().Add(-since))
	} else {
		out.Nodes, err = svc.Health(ctx, health.HealthFilter{Node: r.Node, Tenant: r.Tenant})
	}
	return out, healthErr(err)
}
