package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The node health routes and the portal's nodes page read and trigger
// health checks through the use cases `gpubridge check node NODE
// tenant=T`, `show checks tenant=T`, `show health tenant=T` and `show
// health history tenant=T` run (Options.Health), with the path's tenant as
// the one that asks: a tenant checks only the nodes it uses, within
// health.tenantChecksPerHour, and sees only its own runs.

// HealthCases are the node health use cases for a tenant (app).
type HealthCases interface {
	// Nodes are the managed nodes the tenant uses now (its running jobs,
	// its bookings) with their lifecycle and Slurm states.
	Nodes(ctx context.Context, tenant string) ([]health.NodeView, error)
	// Check triggers the site's default checks on node for the tenant,
	// recorded with actor (check node NODE tenant=T).
	Check(ctx context.Context, actor, tenant, node string) (health.Run, error)
	// Run is one run as stored and its results (health.ErrNotFound for
	// none).
	Run(ctx context.Context, id int64) (health.Run, []health.StoredResult, error)
	// Results are the check results f keeps, newest first.
	Results(ctx context.Context, f health.ResultFilter) ([]health.StoredResult, error)
	// History is the tenant's view of the nodes it used since a time.
	History(ctx context.Context, tenant string, since time.Time) ([]health.HistoryEntry, error)
}

// errNoHealth: the site runs no health service the API can reach.
var errNoHealth = errors.New("node health is not available here (no health service configured)")

// healthCases are the use cases, or 503.
func (s *Server) healthCases() (HealthCases, error) {
	if s.o.Health == nil {
		return nil, &httpError{http.StatusServiceUnavailable, errorBody{Error: errNoHealth.Error()}}
	}
	return s.o.Health, nil
}

// healthError maps the health service's refusals to the API's answers,
// with the service's own words (as the CLI prints them).
func healthError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, health.ErrNotFound):
		return errNotFound
	case errors.Is(err, health.ErrRateLimited):
		return &httpError{http.StatusTooManyRequests, errorBody{Error: err.Error()}}
	case errors.Is(err, health.ErrNotAllowed):
		return &httpError{http.StatusForbidden, errorBody{Error: err.Error()}}
	case errors.Is(err, health.ErrBusy), errors.Is(err, health.ErrConflict):
		return &httpError{http.StatusConflict, errorBody{Error: err.Error()}}
	case errors.Is(err, health.ErrInvalid), errors.Is(err, health.ErrUnknownNode):
		return &httpError{http.StatusBadRequest, errorBody{Error: err.Error()}}
	}
	return err
}

// visibleRun says whether the run is the tenant's to see: one it
// triggered (an admin token sees every run).
func visibleRun(tok token.Token, tenant string, r health.Run) bool {
	return tok.Scope == token.Admin || r.Tenant == tenant
}

// tenantNodes are the tenant's nodes with what another tenant triggered
// left out: a running run or a last result of another tenant's is not
// shown (only that the node is busy).
func tenantNodes(ctx context.Context, hc HealthCases, tenant string) ([]health.NodeView, error) {
	nodes, err := hc.Nodes(ctx, tenant)
	if err != nil {
		return nil, healthError(err)
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Running != nil && n.Running.Tenant != "" && n.Running.Tenant != tenant {
			n.Running = &health.Run{ID: 0, Node: n.Name, State: n.Running.State, Purpose: n.Running.Purpose, RequestedAt: n.Running.RequestedAt, Checks: n.Running.Checks}
		}
		if n.Last != nil && n.Last.Tenant != "" && n.Last.Tenant != tenant {
			n.Last = nil
		}
	}
	return nodes, nil
}

// nodeHealth answers GET /tenants/{tenant}/nodes: show health tenant=T.
func (s *Server) nodeHealth(q *req) (int, any, error) {
	hc, err := s.healthCases()
	if err != nil {
		return 0, nil, err
	}
	nodes, err := tenantNodes(q.r.Context(), hc, q.tenant)
	if err != nil {
		return 0, nil, err
	}
	if nodes == nil {
		nodes = []health.NodeView{}
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "nodes": nodes}, nil
}

// checkRequest is the body of POST /tenants/{tenant}/checks.
type checkRequest struct {
	Node string `json:"node"`
}

// triggerCheck answers POST /tenants/{tenant}/checks: check node NODE
// tenant=T, recorded with the person's (or token's) name. The run is
// judged when its job ends; GET .../checks/runs/{id} shows its verdict.
func (s *Server) triggerCheck(q *req) (int, any, error) {
	hc, err := s.healthCases()
	if err != nil {
		return 0, nil, err
	}
	kv, err := bookingFields(q.w, q.r, []string{"node"})
	if err != nil {
		return 0, nil, err
	}
	in := checkRequest{Node: kv["node"]}
	if in.Node == "" {
		return 0, nil, InputError(errors.New("node: missing; give the node to check (one of GET .../nodes)"))
	}
	run, err := hc.Check(q.r.Context(), q.tok.Actor(), q.tenant, in.Node)
	if err != nil {
		return 0, nil, healthError(err)
	}
	s.o.Logger.Info("health check triggered through the API", "run", run.ID, "node", run.Node, "tenant", q.tenant, "actor", q.tok.Actor())
	return http.StatusAccepted, map[string]any{"tenant": q.tenant, "run": run}, nil
}

// healthRun answers GET /tenants/{tenant}/checks/runs/{id}: a run the
// tenant triggered and its results (404 for any other).
func (s *Server) healthRun(q *req) (int, any, error) {
	hc, err := s.healthCases()
	if err != nil {
		return 0, nil, err
	}
	id, err := strconv.ParseInt(q.r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, nil, errNotFound
	}
	run, res, err := hc.Run(q.r.Context(), id)
	if err != nil {
		return 0, nil, healthError(err)
	}
	if !visibleRun(q.tok, q.tenant, run) {
		return 0, nil, errNotFound
	}
	if res == nil {
		res = []health.StoredResult{}
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "run": run, "done": !run.FinishedAt.IsZero(), "results": res}, nil
}

// healthResults answers GET /tenants/{tenant}/checks: show checks
// tenant=T (node=, check=, since=, limit=).
func (s *Server) healthResults(q *req) (int, any, error) {
	hc, err := s.healthCases()
	if err != nil {
		return 0, nil, err
	}
	qv := q.r.URL.Query()
	f := health.ResultFilter{Tenant: q.tenant, Node: qv.Get("node"), Check: qv.Get("check")}
	if v := qv.Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, nil, InputError(errors.New("since=" + v + ": want a positive duration such as 24h"))
		}
		f.Since = s.now().Add(-d)
	}
	if qv.Has("limit") {
		if f.Limit, err = rowLimit(q); err != nil {
			return 0, nil, err
		}
	}
	res, err := hc.Results(q.r.Context(), f)
	if err != nil {
		return 0, nil, healthError(err)
	}
	if res == nil {
		res = []health.StoredResult{}
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "results": res}, nil
}

// healthHistory answers GET /tenants/{tenant}/health/history: show
// health history tenant=T (since=, default 168h).
func (s *Server) healthHistory(q *req) (int, any, error) {
	hc, err := s.healthCases()
	if err != nil {
		return 0, nil, err
	}
	since := 168 * time.Hour
	if v := q.r.URL.Query().Get("since"); v != "" {
		if since, err = time.ParseDuration(v); err != nil || since <= 0 {
			return 0, nil, InputError(errors.New("since=" + v + ": want a positive duration such as 168h"))
		}
	}
	es, err := hc.History(q.r.Context(), q.tenant, s.now().Add(-since))
	if err != nil {
		return 0, nil, healthError(err)
	}
	if es == nil {
		es = []health.HistoryEntry{}
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "since": s.now().Add(-since).UTC().Truncate(time.Second), "entries": es}, nil
}
