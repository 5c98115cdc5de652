package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/internal/money"
)

// routes is the API: every route the OpenAPI file describes, and no other.
func (s *Server) routes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/tenants", Scope: token.Read, Params: []string{"tenant"}, Handle: s.listTenants},
		{Method: "GET", Path: "/api/v1/pool", Scope: token.Admin, Handle: s.pool},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}", Scope: token.Read, Handle: s.getTenant},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/quota", Scope: token.Read, Handle: s.quota},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/usage", Scope: token.Read, Params: []string{"period"}, Handle: s.tenantUsage},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/burst", Scope: token.Read, Handle: s.burst},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/jobs/pending", Scope: token.Read, Params: []string{"limit"}, Handle: s.pendingJobs},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/bookings", Scope: token.Read, Params: []string{"state", "from", "to", "limit"}, Handle: s.listBookings},
		{Method: "POST", Path: "/api/v1/tenants/{tenant}/bookings", Scope: token.Book, Handle: s.addBooking},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Read, ObjectFirst: true, Handle: s.getBooking},
		{Method: "PATCH", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Book, ObjectFirst: true, Handle: s.modifyBooking},
		{Method: "DELETE", Path: "/api/v1/tenants/{tenant}/bookings/{id}", Scope: token.Book, ObjectFirst: true, Handle: s.cancelBooking},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/availability", Scope: token.Read, Params: []string{"type", "from", "to", "step"}, Handle: s.availability},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/booking-policy", Scope: token.Read, Handle: s.bookingPolicy},
		{Method: "GET", Path: "/api/v1/tenants/{tenant}/slots", Scope: token.Read, Params: []string{"type", "count", "duration", "after", "limit"}, Handle: s.slots},
	}
}

// Routes lists the API's routes as "METHOD /path" (the OpenAPI test).
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// TenantView is a tenant as its token sees it.
type TenantView struct {
	Name         string       `json:"name"`
	Description  string       `json:"description,omitempty"`
	Organization string       `json:"organization,omitempty"`
	State        tenant.State `json:"state"`
	Users        []string     `json:"users"`
	Quota        []TypeUse    `json:"quota"`
	Burst        BurstPolicy  `json:"burst"`
	AsOf         time.Time    `json:"asOf"`
}

// BurstPolicy is a tenant's burst policy.
type BurstPolicy struct {
	Enabled         bool   `json:"enabled"`
	MaxOnDemandGPUs int64  `json:"maxOnDemandGPUs"`
	MonthlyBudget   string `json:"monthlyBudget,omitempty"`
}

func (s *Server) tenantView(snap *Snapshot, t tenant.Tenant) TenantView {
	v := TenantView{Name: t.Name, Description: t.Description, Organization: t.Organization, State: t.State,
		Users: t.Users, Quota: snap.Use[t.Name], AsOf: snap.At,
		Burst: BurstPolicy{Enabled: t.Burst.Enabled, MaxOnDemandGPUs: t.Burst.MaxOnDemandGPUs}}
	if v.Users == nil {
		v.Users = []string{}
	}
	if v.Quota == nil {
		v.Quota = []TypeUse{}
	}
	if b := t.Burst.MonthlyBudget; b != nil {
		v.Burst.MonthlyBudget = b.String()
	}
	return v
}

func (s *Server) listTenants(q *req) (int, any, error) {
	out := []TenantView{}
	for _, t := range q.snap.Tenants {
		if q.tok.Scope == token.Admin || t.Name == q.tok.Tenant {
			if v := q.r.URL.Query().Get("tenant"); v != "" && v != t.Name {
				continue
			}
			out = append(out, s.tenantView(q.snap, t))
		}
	}
	return http.StatusOK, map[string]any{"tenants": out, "asOf": q.snap.At}, nil
}

func (s *Server) getTenant(q *req) (int, any, error) {
	t, _ := q.snap.Tenant(q.tenant)
	return http.StatusOK, s.tenantView(q.snap, t), nil
}

func (s *Server) quota(q *req) (int, any, error) {
	v := s.tenantView(q.snap, must(q.snap.Tenant(q.tenant)))
	return http.StatusOK, map[string]any{"tenant": q.tenant, "asOf": q.snap.At, "types": v.Quota}, nil
}

func must[T any](v T, _ bool) T { return v }

// PoolView is the whole pool now, for admins.
type PoolView struct {
	AsOf    time.Time         `json:"asOf"`
	Types   []PoolType        `json:"types"`
	Tenants []TenantView      `json:"tenants"`
	Errors  map[string]string `json:"errors,omitempty"`
}

func (s *Server) pool(q *req) (int, any, error) {
	v := PoolView{AsOf: q.snap.At, Types: q.snap.Pool, Tenants: []TenantView{}, Errors: q.snap.Errors}
	if v.Types == nil {
		v.Types = []PoolType{}
	}
	for _, t := range q.snap.Tenants {
		v.Tenants = append(v.Tenants, s.tenantView(q.snap, t))
	}
	return http.StatusOK, v, nil
}

// UsageRow is one row of a tenant's usage: a GPU type, tier and kind.
type UsageRow struct {
	GPUType     string `json:"gpuType"`
	Tier        string `json:"tier"`
	Kind        string `json:"kind"`
	UsagePeriod string `json:"usagePeriod"`
	GPUSeconds  int64  `json:"gpuSeconds"`
	GPUHours    string `json:"gpuHours"`
	// Rate and Amount are decimals in Currency; empty when the type has
	// no rate (shown as such, never priced at zero).
	Rate   string `json:"rate,omitempty"`
	Amount string `json:"amount,omitempty"`
}

// usageView is a tenant's usage and spend in one period: `show usage
// tenant=NAME period=...` as JSON.
type usageView struct {
	Tenant     string     `json:"tenant"`
	Period     string     `json:"period"`
	Status     string     `json:"status"` // open, closed
	Currency   string     `json:"currency"`
	Rows       []UsageRow `json:"rows"`
	GPUSeconds int64      `json:"gpuSeconds"`
	GPUHours   string     `json:"gpuHours"`
	Amount     string     `json:"amount"`
	// Unpriced is true when some use has no rate: Amount leaves it out.
	Unpriced bool      `json:"unpriced"`
	AsOf     time.Time `json:"asOf"`
}

func usageOf(sm export.Summary, tenantName string, at time.Time) usageView {
	v := usageView{Tenant: tenantName, Period: sm.Meta.Period.String(), Status: "open", Currency: sm.Meta.Card.Currency,
		Rows: []UsageRow{}, GPUSeconds: sm.GPUSeconds, GPUHours: export.GPUHours(sm.GPUSeconds), Amount: sm.Amount.String(), AsOf: at}
	if sm.Meta.Closed {
		v.Status = "closed"
	}
	for _, r := range sm.Rows {
		row := UsageRow{GPUType: r.Type, Tier: string(r.Tier), Kind: string(r.Kind), UsagePeriod: r.Usage.String(),
			GPUSeconds: r.GPUSeconds, GPUHours: export.GPUHours(r.GPUSeconds)}
		switch {
		case r.IsCredit():
			row.Amount = r.Amount.String() // an amount given back, at no rate
		case r.Rate < 0:
			v.Unpriced = true
		default:
			row.Rate, row.Amount = r.Rate.String(), r.Amount.String()
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// accountSummary keeps one account's rows of a summary of every account,
// with its totals: what Summary of that account alone returns.
func accountSummary(sm export.Summary, account string) export.Summary {
	out := export.Summary{Meta: sm.Meta, Amount: money.Zero(sm.Meta.Card.Unit())}
	for _, r := range sm.Rows {
		if !strings.EqualFold(r.Account, account) {
			continue
		}
		out.Rows = append(out.Rows, r)
		out.GPUSeconds += r.GPUSeconds
		out.Lines += r.Lines
		if r.Rate >= 0 {
			out.Amount, _ = out.Amount.Add(r.Amount)
		}
	}
	return out
}

func (s *Server) tenantUsage(q *req) (int, any, error) {
	p := meter.PeriodOf(s.now())
	if v := q.r.URL.Query().Get("period"); v != "" {
		var err error
		if p, err = meter.ParsePeriod(v); err != nil {
			return 0, nil, badRequest(reserve.Problems{{Field: "period", Msg: err.Error()}})
		}
	}
	// The current period is in the snapshot (every account priced at
	// once): the tenant's rows of it are its Summary.
	if sm := q.snap.Usage; p == q.snap.Period && sm.Meta.Period == p && q.snap.Errors[PartUsage] == "" && q.snap.PartAt[PartUsage] == q.snap.At {
		return http.StatusOK, usageOf(accountSummary(sm, q.tenant), q.tenant, q.snap.At), nil
	}
	if s.o.Usage == nil {
		return 0, nil, errUnavailable
	}
	v, err := s.usage.get(usageKey{p, q.tenant}, func() (usageView, time.Duration, error) {
		sm, err := s.o.Usage.Summary(q.r.Context(), p, q.tenant)
		if err != nil {
			return usageView{}, 0, err
		}
		var ttl time.Duration
		if sm.Meta.Closed {
			ttl = time.Hour // a closed period never changes
		}
		return usageOf(sm, q.tenant, s.now()), ttl, nil
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// burstView is `show burst tenant=NAME` as JSON.
type burstView struct {
	Tenant string               `json:"tenant"`
	AsOf   time.Time            `json:"asOf"`
	Policy burst.OverviewTenant `json:"policy"`
	Jobs   []burst.OverviewJob  `json:"jobs"`
}

func (s *Server) burst(q *req) (int, any, error) {
	if _, ok := q.snap.PartAt[PartBurst]; !ok {
		return 0, nil, errUnavailable
	}
	ov, err := burst.Summarize(q.snap.Plan, q.snap.Stored, q.tenant)
	if err != nil {
		return 0, nil, errUnavailable // a tenant the last plan did not know yet
	}
	return http.StatusOK, burstView{Tenant: q.tenant, AsOf: q.snap.At, Policy: ov.Tenants[0], Jobs: ov.Jobs}, nil
}

// PendingJob is one of a tenant's pending jobs, with why it waits.
type PendingJob struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	User       string    `json:"user"`
	Partition  string    `json:"partition"`
	QOS        string    `json:"qos"`
	GPUs       string    `json:"gpus"`
	Tasks      int64     `json:"tasks"`
	SubmitTime time.Time `json:"submitTime,omitzero"`
	// Reason is Slurm's state reason.
	Reason string `json:"reason"`
	// QuotaHold is true when the job waits for its tenant's quota.
	QuotaHold bool `json:"quotaHold"`
	// Burst says what the burst controller does with the job: move (its
	// next cycle moves it to the on-demand tier), refused (it stays: see
	// BurstReason and BurstDetail), on-demand (it waits in the on-demand
	// tier already), none (not held by the quota, or the quota has room).
	Burst       string `json:"burst"`
	BurstReason string `json:"burstReason,omitempty"`
	BurstDetail string `json:"burstDetail,omitempty"`
}

func (s *Server) pendingJobs(q *req) (int, any, error) {
	if _, ok := q.snap.PartAt[PartJobs]; !ok {
		return 0, nil, errUnavailable
	}
	moves := map[int64]bool{}
	for _, m := range q.snap.Plan.Moves {
		moves[m.Job.ID] = true
	}
	refused := map[int64]burst.Refusal{}
	for _, r := range q.snap.Plan.Refusals {
		refused[r.JobID] = r
	}
	bursting := map[int64]bool{}
	for _, b := range q.snap.Plan.Bursting {
		bursting[b.JobID] = true
	}
	limit, err := rowLimit(q)
	if err != nil {
		return 0, nil, err
	}
	out, more := []PendingJob{}, false
	for _, j := range q.snap.Jobs[q.tenant] {
		if !j.Pending() {
			continue
		}
		if len(out) == limit {
			more = true
			break
		}
		p := PendingJob{ID: j.ID, Name: j.Name, User: j.User, Partition: j.Partition, QOS: j.QOS, GPUs: j.GPUs.String(),
			Tasks: max(j.Tasks, 1), SubmitTime: j.SubmitTime, Reason: j.Reason, QuotaHold: burst.IsQuotaHold(j.Reason), Burst: "none"}
		switch r, ok := refused[j.ID]; {
		case moves[j.ID]:
			p.Burst = "move"
		case ok:
			p.Burst, p.BurstReason, p.BurstDetail = "refused", string(r.Reason), r.Detail
		case bursting[j.ID]:
			p.Burst = "on-demand"
		}
		out = append(out, p)
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "asOf": q.snap.At, "jobs": out, "more": more}, nil
}

// bookingView is a booking with its Slurm reservation's name.
type bookingView struct {
	reserve.Booking
	ReservationName string `json:"reservationName,omitempty"`
}

func (s *Server) view(b reserve.Booking) bookingView {
	v := bookingView{Booking: b}
	if s.o.ReservationName != nil && b.ID > 0 {
		v.ReservationName = s.o.ReservationName(b.ID)
	}
	return v
}

func (s *Server) readsOrUnavailable() (Bookings, error) {
	if s.o.BookingReads != nil {
		return s.o.BookingReads, nil
	}
	if s.o.Bookings != nil {
		return s.o.Bookings, nil
	}
	return nil, errUnavailable
}

// bookingPolicy answers the limits that bind the tenant's bookings (its
// policy, or the site's default bounded by its quota), as show
// booking-policy shows them.
func (s *Server) bookingPolicy(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	p, err := svc.Policy(q.r.Context(), q.tenant)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"tenant": q.tenant, "policy": p}, nil
}

func (s *Server) listBookings(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	lf := reserve.ListFilter{Tenant: q.tenant}
	var ps reserve.Problems
	now := s.now().Truncate(time.Second)
	for _, st := range splitList(q.r.URL.Query().Get("state")) {
		if !slices.Contains(reserve.States, reserve.State(st)) {
			ps = append(ps, reserve.Problem{Field: "state", Msg: fmt.Sprintf("%q is not a state (%s)", st, joinStates())})
		}
		lf.States = append(lf.States, reserve.State(st))
	}
	for k, dst := range map[string]*time.Time{"from": &lf.From, "to": &lf.To} {
		if v := q.r.URL.Query().Get(k); v != "" {
			t, err := reserve.ParseTime(v, now, reserve.Zone{})
			if err != nil {
				ps = append(ps, reserve.Problem{Field: k, Msg: err.Error()})
			}
			*dst = t
		}
	}
	limit, err := rowLimit(q)
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			ps = append(ps, he.body.Problems...)
		}
	}
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	slices.Sort(lf.States)
	lf.States = slices.Compact(lf.States)
	key := fmt.Sprintf("bookings|%s|%v|%d|%d|%d", q.tenant, lf.States, lf.From.Unix(), lf.To.Unix(), limit)
	return s.cached(q, key, false, func() (any, error) {
		bs, err := svc.List(q.r.Context(), lf)
		if err != nil {
			return nil, err
		}
		out, more := make([]bookingView, 0, min(len(bs), limit)), false
		for _, b := range bs {
			if b.Tenant != q.tenant {
				continue
			}
			if len(out) == limit {
				more = true
				break
			}
			out = append(out, s.view(b))
		}
		return map[string]any{"tenant": q.tenant, "bookings": out, "more": more}, nil
	})
}

// rowLimit reads limit= of a list route: 1..maxRows, default maxRows.
func rowLimit(q *req) (int, error) {
	n, ok := queryInt(q.r, "limit", maxRows)
	if !ok || n < 1 || n > maxRows {
		return 0, badRequest(reserve.Problems{{Field: "limit", Msg: fmt.Sprintf("a whole number from 1 to %d (the most rows one answer holds; \"more\": true says there are more)", maxRows)}})
	}
	return n, nil
}

// cached answers a read-only booking route from the cache, keyed by the
// parsed request (key: the route's normalised query), whether the token
// is an admin's, and the number of booking changes made through this
// server. A miss is encoded once and kept (within the cache's bounds)
// unless it is over maxAnswerBytes; a heavy one (a computation over the
// calendars) is computed under the heavy semaphore, so that such answers
// take at most half the CPUs whoever asks, and never delay the light
// routes (bookings, quota, usage) of other tenants.
func (s *Server) cached(q *req, key string, heavy bool, load func() (any, error)) (int, any, error) {
	key = fmt.Sprintf("%d|%t|%s", s.writes.Load(), q.tok.Scope == token.Admin, key)
	if b, ok := s.reads.get(key); ok {
		return http.StatusOK, rawJSON(b), nil
	}
	if heavy {
		select {
		case s.heavy <- struct{}{}:
			defer func() { <-s.heavy }()
		case <-q.r.Context().Done():
			return 0, nil, q.r.Context().Err()
		}
		if b, ok := s.reads.get(key); ok { // computed while this one waited
			return http.StatusOK, rawJSON(b), nil
		}
	}
	v, err := load()
	if err != nil {
		return 0, nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	if len(b) > maxAnswerBytes {
		return 0, nil, tooBig(len(b))
	}
	s.reads.put(key, b)
	return http.StatusOK, rawJSON(b), nil
}

func joinStates() string {
	var ss []string
	for _, s := range reserve.States {
		ss = append(ss, string(s))
	}
	return strings.Join(ss, ", ")
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// bookingBody reads a JSON object of strings: the CLI's key=value
// arguments (gpus=h100:2, start=now+1h, duration=2h, purpose=...), read by
// the CLI's own parser so that every message is the CLI's.
func bookingBody(w http.ResponseWriter, r *http.Request, keys []string) (map[string]string, error) {
	var raw map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&raw); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest(reserve.Problems{{Field: "body", Msg: "want a JSON object of strings such as {\"gpus\": \"h100:2\", \"start\": \"now+1h\", \"duration\": \"2h\"}: " + err.Error()}})
	}
	kv := map[string]string{}
	var ps reserve.Problems
	for k, v := range raw {
		if !slices.Contains(keys, k) {
			ps = append(ps, reserve.Problem{Field: k, Msg: "unknown field; known fields: " + strings.Join(keys, ", ")})
			continue
		}
		switch x := v.(type) {
		case string:
			kv[k] = x
		case float64:
			kv[k] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			ps = append(ps, reserve.Problem{Field: k, Msg: "want a string"})
		}
	}
	if len(ps) > 0 {
		slices.SortFunc(ps, func(a, b reserve.Problem) int { return strings.Compare(a.Field, b.Field) })
		return nil, badRequest(ps)
	}
	return kv, nil
}

func (s *Server) addBooking(q *req) (int, any, error) {
	if s.o.Bookings == nil {
		return 0, nil, errUnavailable
	}
	keys := slices.DeleteFunc(slices.Clone(reserve.AddKeys), func(k string) bool { return k == "tenant" })
	kv, err := bookingBody(q.w, q.r, keys)
	if err != nil {
		return 0, nil, err
	}
	kv["tenant"] = q.tenant
	r, ps := reserve.ParseAdd(kv, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	b, err := s.o.Bookings.Add(q.r.Context(), q.tok.Actor(), r)
	s.writes.Add(1)
	if err != nil {
		return 0, nil, err
	}
	s.o.Logger.Info("booking added through the API", "booking", b.ID, "tenant", b.Tenant, "token", q.tok.Key())
	return http.StatusCreated, s.view(b), nil
}

// ownBooking finds the path's booking of the path's tenant; any other is
// not found.
func (s *Server) ownBooking(q *req, svc Bookings) (reserve.Booking, error) {
	id, err := strconv.ParseInt(q.r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return reserve.Booking{}, errNotFound
	}
	b, err := svc.Get(q.r.Context(), id)
	if err != nil {
		return reserve.Booking{}, err
	}
	if b.Tenant != q.tenant {
		return reserve.Booking{}, errNotFound
	}
	return b, nil
}

func (s *Server) getBooking(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	b, err := s.ownBooking(q, svc)
	if err != nil {
		return 0, nil, err
	}
	if err := q.need(token.Read); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.view(b), nil
}

func (s *Server) modifyBooking(q *req) (int, any, error) {
	if s.o.Bookings == nil {
		return 0, nil, errUnavailable
	}
	b, err := s.ownBooking(q, s.o.Bookings)
	if err != nil {
		return 0, nil, err
	}
	if err := q.need(token.Book); err != nil {
		return 0, nil, err
	}
	kv, err := bookingBody(q.w, q.r, reserve.ModifyKeys)
	if err != nil {
		return 0, nil, err
	}
	if len(kv) == 0 {
		return 0, nil, badRequest(reserve.Problems{{Field: "body", Msg: "nothing to change; give one of " + strings.Join(reserve.ModifyKeys, ", ")}})
	}
	ch, ps := reserve.ParseChange(kv, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	_, after, err := s.o.Bookings.Modify(q.r.Context(), q.tok.Actor(), b.ID, ch)
	s.writes.Add(1)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.view(after), nil
}

func (s *Server) cancelBooking(q *req) (int, any, error) {
	if s.o.Bookings == nil {
		return 0, nil, errUnavailable
	}
	b, err := s.ownBooking(q, s.o.Bookings)
	if err != nil {
		return 0, nil, err
	}
	if err := q.need(token.Book); err != nil {
		return 0, nil, err
	}
	out, err := s.o.Bookings.Cancel(q.r.Context(), q.tok.Actor(), b.ID)
	s.writes.Add(1)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.view(out), nil
}

// redact hides what the availability says about reductions beyond their
// size and time: the names of foreign reservations and maintenance
// reasons are the site's, not the tenant's.
func redact(av reserve.Availability) reserve.Availability {
	out := av
	out.Resources = make([]reserve.ResourceAvailability, len(av.Resources))
	for i, r := range av.Resources {
		r.Reductions = slices.Clone(r.Reductions)
		for j := range r.Reductions {
			r.Reductions[j].Reason = "unavailable"
		}
		out.Resources[i] = r
	}
	return out
}

func (s *Server) availability(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	aq, ps := s.availabilityQuery(q)
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	key := fmt.Sprintf("availability|%v|%d|%d|%d", aq.Types, aq.From.Unix(), aq.To.Unix(), aq.Step/time.Second)
	return s.cached(q, key, true, func() (any, error) {
		av, err := svc.Availability(q.r.Context(), aq)
		if err != nil {
			return nil, err
		}
		if q.tok.Scope != token.Admin {
			av = redact(av)
		}
		return av, nil
	})
}

// availabilityQuery parses the availability route's query and bounds its
// answer: at most maxSteps steps, maxTypes types, and maxBuckets steps
// times types (every type of the pool when none is named).
func (s *Server) availabilityQuery(q *req) (reserve.AvailabilityQuery, reserve.Problems) {
	now := s.now().Truncate(time.Second)
	v := q.r.URL.Query()
	types := splitList(v.Get("type"))
	slices.Sort(types)
	aq := reserve.AvailabilityQuery{Types: slices.Compact(types), From: now, To: now.Add(14 * 24 * time.Hour)}
	var ps reserve.Problems
	for k, dst := range map[string]*time.Time{"from": &aq.From, "to": &aq.To} {
		if x := v.Get(k); x != "" {
			t, err := reserve.ParseTime(x, now, reserve.Zone{})
			if err != nil {
				ps = append(ps, reserve.Problem{Field: k, Msg: err.Error()})
			}
			*dst = t
		}
	}
	if v.Get("to") == "" {
		aq.To = aq.From.Add(14 * 24 * time.Hour)
	}
	aq.Step = 24 * time.Hour
	if aq.To.Sub(aq.From) <= 48*time.Hour {
		aq.Step = time.Hour
	}
	if x := v.Get("step"); x != "" {
		d, err := reserve.ParseDuration(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "step", Msg: err.Error()})
		}
		aq.Step = d
	}
	if len(aq.Types) > maxTypes {
		ps = append(ps, reserve.Problem{Field: "type", Msg: fmt.Sprintf("%d types; at most %d in one request", len(aq.Types), maxTypes)})
	}
	if len(ps) > 0 || aq.Step < time.Second || !aq.To.After(aq.From) {
		return aq, ps // the service names what is wrong with the window and step
	}
	steps := int64((aq.To.Sub(aq.From) + aq.Step - 1) / aq.Step)
	ntypes := int64(len(aq.Types))
	if ntypes == 0 && q.snap != nil {
		ntypes = int64(len(q.snap.Pool))
	}
	ntypes = max(ntypes, 1)
	switch {
	case steps > maxSteps:
		ps = append(ps, reserve.Problem{Field: "step", Msg: fmt.Sprintf("%s over %s is %d steps; at most %d in one answer: use a longer step or a shorter from..to",
			reserve.FormatDuration(aq.Step), reserve.FormatDuration(aq.To.Sub(aq.From)), steps, maxSteps)})
	case steps*ntypes > maxBuckets:
		ps = append(ps, reserve.Problem{Field: "step", Msg: fmt.Sprintf("%d steps of %d types is %d; at most %d in one answer: name fewer types (type=), use a longer step or a shorter from..to",
			steps, ntypes, steps*ntypes, maxBuckets)})
	}
	return aq, ps
}

func (s *Server) slots(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	v := q.r.URL.Query()
	sq := reserve.SlotQuery{Type: v.Get("type"), Tenant: q.tenant, Limit: 3}
	var ps reserve.Problems
	if x := v.Get("count"); x != "" {
		n, err := strconv.Atoi(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "count", Msg: fmt.Sprintf("%q is not a whole number", x)})
		}
		sq.Count = n
	} else {
		ps = append(ps, reserve.Problem{Field: "count", Msg: "required: how many GPUs (or nodes)"})
	}
	if x := v.Get("duration"); x != "" {
		d, err := reserve.ParseDuration(x)
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "duration", Msg: err.Error()})
		}
		sq.Duration = d
	}
	if x := v.Get("after"); x != "" {
		t, err := reserve.ParseTime(x, s.now(), reserve.Zone{})
		if err != nil {
			ps = append(ps, reserve.Problem{Field: "after", Msg: err.Error()})
		}
		sq.After = t
	}
	if n, ok := queryInt(q.r, "limit", 3); !ok || n < 1 || n > 100 {
		ps = append(ps, reserve.Problem{Field: "limit", Msg: "a whole number from 1 to 100"})
	} else {
		sq.Limit = n
	}
	if len(ps) > 0 {
		return 0, nil, badRequest(ps)
	}
	key := fmt.Sprintf("slots|%s|%s|%d|%d|%d|%d", q.tenant, sq.Type, sq.Count, sq.Duration/time.Second, sq.After.Unix(), sq.Limit)
	return s.cached(q, key, true, func() (any, error) {
		slots, err := svc.FindSlots(q.r.Context(), sq)
		if err != nil {
			return nil, err
		}
		if slots == nil {
			slots = []reserve.Slot{}
		}
		return map[string]any{"tenant": q.tenant, "slots": slots}, nil
	})
}

// redactRefusal hides in a booking refusal what redact hides in an
// availability: the reasons capacity is reduced (foreign reservation
// names, maintenance reasons) become "unavailable".
func redactRefusal(ref *reserve.Refusal) *reserve.Refusal {
	out := *ref
	out.Shortfalls = slices.Clone(ref.Shortfalls)
	for i, sf := range out.Shortfalls {
		if len(sf.Reasons) > 0 {
			out.Shortfalls[i].Reasons = []string{"unavailable"}
		}
	}
	return &out
}
