package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The portal's pages beside the overview (page.go, portal.go): jobs,
// nodes (with the "run check" form and a run's verdict) and usage (with
// the closed months' chargeback downloads). Each is server-rendered and
// works without the script; each reads what the API's routes read, for
// the signed-in tenant only.

// portalPageRoutes mounts the pages (portalRoutes calls it).
func (s *Server) portalPageRoutes(mux *http.ServeMux, cop *http.CrossOriginProtection) {
	mux.Handle("GET /jobs", s.portalRead("/jobs", s.jobsPage))
	mux.Handle("GET /nodes", s.portalRead("/nodes", s.nodesPage))
	mux.Handle("GET /nodes/run", s.portalRead("/nodes/run", s.runPage))
	mux.Handle("POST /nodes/check", cop.Handler(s.portalHandler("/nodes/check", s.checkNode)))
	mux.Handle("GET /usage", s.portalRead("/usage", s.usagePage))
	mux.Handle("GET /usage/chargeback", s.portalRead("/usage/chargeback", s.chargebackDownload))
	s.modifyRoutes(mux, cop)
}

// portalRead signs a page's request in as portalHandler does, with a read
// sign-in enough (a tenant's: an admin token sees the pool at /).
func (s *Server) portalRead(path string, h func(p *portalPage) int) http.Handler {
	return s.signedInPage(path, h, func(_ *http.Request, _ Session, tok token.Token) (int, string, string) {
		if tok.Scope == token.Admin {
			return http.StatusForbidden, "", "an admin token sees the whole pool on the overview (/); this page is a tenant's"
		}
		return 0, "", ""
	})
}

// navData is what every page's header and navigation show.
type navData struct {
	Tenant, Active, Person, Token, CSRF string
	IsAdmin, CanBook                    bool
	Tenants                             []string
	AsOf                                time.Time
	Errors                              []string
}

func navOf(p *portalPage, active string) navData {
	return navData{Tenant: p.tok.Tenant, Active: active, Person: p.tok.Person, Token: p.tok.Name, CSRF: p.ss.CSRF,
		IsAdmin: slices.Contains(p.tok.AdminOf, p.tok.Tenant), CanBook: p.tok.Scope.Allows(token.Book), Tenants: p.tok.Tenants, AsOf: p.snap.At}
}

// runningJob is one of the team's running jobs.
type runningJob struct {
	ID                         int64
	Name, User, Partition, QOS string
	GPUs                       string
	Start                      time.Time
	OnDemand                   bool
}

// pendingRow is a pending job with what the page says of it.
type pendingRow struct {
	PendingJob
	Why      string // why it waits, for people
	Estimate string // a move's estimated cost
}

type jobsPageData struct {
	navData
	Running []runningJob
	Pending []pendingRow
	More    bool
	Burst   *burst.OverviewTenant
}

// jobsPage shows the team's running and pending jobs, why each pending
// one waits and, for a quota hold, whether burst moves it and at what
// estimated cost (the pending-jobs and burst routes' use cases).
func (s *Server) jobsPage(p *portalPage) int {
	d := jobsPageData{navData: navOf(p, "jobs")}
	if _, ok := p.snap.PartAt[PartJobs]; !ok {
		d.Errors = append(d.Errors, "the jobs are not available now")
	}
	onDemand := map[int64]bool{}
	for _, b := range p.snap.Plan.Bursting {
		onDemand[b.JobID] = true
	}
	for _, j := range p.snap.Jobs[p.tok.Tenant] {
		if j.Running() {
			d.Running = append(d.Running, runningJob{ID: j.ID, Name: j.Name, User: j.User, Partition: j.Partition, QOS: j.QOS,
				GPUs: j.GPUs.String(), Start: j.StartTime, OnDemand: onDemand[j.ID]})
		}
	}
	estimates := map[int64]int64{}
	for _, m := range p.snap.Plan.Moves {
		estimates[m.Job.ID] = m.Estimate
	}
	rows, more := pendingRows(p.snap, p.tok.Tenant, maxRows)
	d.More = more
	for _, r := range rows {
		pr := pendingRow{PendingJob: r, Why: whyPending(r)}
		if e, ok := estimates[r.ID]; ok && e > 0 {
			pr.Estimate = minorAmount(e, p.snap.Plan.Minor) + " " + p.snap.Plan.Currency
		}
		d.Pending = append(d.Pending, pr)
	}
	if ov, err := burst.Summarize(p.snap.Plan, p.snap.Stored, p.tok.Tenant); err == nil && len(ov.Tenants) == 1 {
		d.Burst = &ov.Tenants[0]
	}
	s.render(p.w, http.StatusOK, "jobs", d)
	return http.StatusOK
}

// whyPending says in words why a pending job waits and what burst does.
func whyPending(j PendingJob) string {
	switch j.Burst {
	case "move":
		return "held by the team's quota; burst moves it to the on-demand tier at its next cycle"
	case "refused":
		return "held by the team's quota; burst does not move it: " + strings.TrimSpace(j.BurstReason+" "+j.BurstDetail)
	case "on-demand":
		return "waits in the on-demand tier (moved by burst) for free GPUs"
	}
	if j.QuotaHold {
		return "held by the team's quota (" + j.Reason + "); it starts when the team's running jobs free quota"
	}
	switch j.Reason {
	case "Priority":
		return "other jobs come first (Priority)"
	case "Resources":
		return "waits for free GPUs (Resources)"
	case "", "None":
		return "about to be scheduled"
	}
	return "Slurm: " + j.Reason
}

// minorAmount writes an amount of minor units with minor digits.
func minorAmount(v int64, minor int) string {
	if minor <= 0 {
		return strconv.FormatInt(v, 10)
	}
	neg := v < 0
	if neg {
		v = -v
	}
	p := int64(1)
	for range minor {
		p *= 10
	}
	out := fmt.Sprintf("%d.%0*d", v/p, minor, v%p)
	if neg {
		out = "-" + out
	}
	return out
}

// nodeRow is one of the team's nodes with what happens next.
type nodeRow struct {
	health.NodeView
	Next string
}

type nodesPageData struct {
	navData
	Nodes   []nodeRow
	History []health.HistoryEntry
	Results []health.StoredResult
	Notice  string
}

// nextStep says what happens to a node in its state next.
func nextStep(n health.NodeView) string {
	switch n.State {
	case health.Drained:
		return "held from jobs; requalify runs start on it, and it serves again once they pass"
	case health.Requalify:
		return fmt.Sprintf("held from jobs; requalifying: %d of %d passes in a row so far", n.Passes, n.Needed)
	case health.Suspect:
		return "in service; the checks that warned run again with its next scheduled checks"
	case health.BurnIn:
		return fmt.Sprintf("new node, held until its acceptance checks pass (%d of %d)", n.Passes, n.Needed)
	case health.External:
		return "taken out of service by the site (not gpubridge); it requalifies when it comes back"
	case health.Serving:
		return "in service"
	}
	return ""
}

// nodesPage shows the nodes the team uses (running jobs, bookings) with
// their health, why one is drained and what happens next, the team's
// recent checks and the nodes' history over the last week.
func (s *Server) nodesPage(p *portalPage) int {
	d := nodesPageData{navData: navOf(p, "nodes")}
	if n := p.r.URL.Query().Get("checked"); n != "" {
		d.Notice = "Check run " + n + " is submitted."
	}
	hc, err := s.healthCases()
	if err != nil {
		d.Errors = append(d.Errors, errNoHealth.Error())
		s.render(p.w, http.StatusOK, "nodes", d)
		return http.StatusOK
	}
	ctx := p.r.Context()
	nodes, err := tenantNodes(ctx, hc, p.tok.Tenant)
	if err != nil {
		d.Errors = append(d.Errors, "the nodes' health is not available now")
	}
	for _, n := range nodes {
		d.Nodes = append(d.Nodes, nodeRow{NodeView: n, Next: nextStep(n)})
	}
	if d.Results, err = hc.Results(ctx, health.ResultFilter{Tenant: p.tok.Tenant, Limit: 20}); err != nil {
		d.Errors = append(d.Errors, "the team's checks are not available now")
	}
	if h, err := hc.History(ctx, p.tok.Tenant, s.now().Add(-7*24*time.Hour)); err == nil {
		d.History = h[:min(len(h), 50)]
	}
	s.render(p.w, http.StatusOK, "nodes", d)
	return http.StatusOK
}

// checkNode triggers a check on the form's node (check node NODE
// tenant=T) and goes to the run's page, which shows the verdict when the
// check job ends.
func (s *Server) checkNode(p *portalPage) int {
	hc, err := s.healthCases()
	if err != nil {
		s.message(p.w, http.StatusServiceUnavailable, p.tok.Tenant, errNoHealth.Error())
		return http.StatusServiceUnavailable
	}
	node := p.r.PostFormValue("node")
	run, err := hc.Check(p.r.Context(), p.tok.Actor(), p.tok.Tenant, node)
	if err != nil {
		return s.refused(p, healthError(err))
	}
	s.o.Logger.Info("health check triggered through the portal", "run", run.ID, "node", run.Node, "tenant", p.tok.Tenant, "actor", p.tok.Actor())
	http.Redirect(p.w, p.r, "/nodes/run?"+url.Values{"tenant": {p.tok.Tenant}, "id": {strconv.FormatInt(run.ID, 10)}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}

type runPageData struct {
	navData
	Run     health.Run
	Results []health.StoredResult
	Done    bool
	Verdict string
}

// runPage shows a run the team triggered: while its job runs the page
// reloads itself every few seconds (a meta refresh, no script needed);
// once it ends, the verdict of each check.
func (s *Server) runPage(p *portalPage) int {
	hc, err := s.healthCases()
	if err != nil {
		s.message(p.w, http.StatusServiceUnavailable, p.tok.Tenant, errNoHealth.Error())
		return http.StatusServiceUnavailable
	}
	id, err := strconv.ParseInt(p.r.URL.Query().Get("id"), 10, 64)
	if err != nil || id <= 0 {
		return s.refused(p, errNotFound)
	}
	run, res, err := hc.Run(p.r.Context(), id)
	if err == nil && !visibleRun(p.tok, p.tok.Tenant, run) {
		err = errNotFound
	}
	if err != nil {
		return s.refused(p, healthError(err))
	}
	d := runPageData{navData: navOf(p, "nodes"), Run: run, Results: res, Done: run.State == health.RunDone || run.State == health.RunAborted}
	if d.Done {
		d.Verdict = "pass"
		for _, r := range res {
			switch {
			case r.Verdict == "fail":
				d.Verdict = "fail"
			case r.Verdict == "warn" && d.Verdict == "pass":
				d.Verdict = "warn"
			}
		}
		if run.State == health.RunAborted {
			d.Verdict = "no verdict: " + run.Note
		}
	}
	s.render(p.w, http.StatusOK, "run", d)
	return http.StatusOK
}

// dayBar is one day's stacked bars on the usage chart.
type dayBar struct {
	X, W  float64
	Day   string
	Label bool
	Parts []dayPart
}

type dayPart struct {
	Y, H  float64
	Type  string
	Hours string
	Fill  string
}

type usagePageData struct {
	navData
	Period   string
	Amount   string
	Currency string
	Rows     []usageTypeRow
	Days     []dayBar
	Legend   []dayPart
	MaxHours string
	Closed   []string
	Formats  []export.Format
}

type usageTypeRow struct {
	Type, Tier, Kind, Hours, Amount string
}

// typeFills colours a chart's GPU types (the palette passes contrast
// against the page's white).
var typeFills = []string{"#2f5fc4", "#b4571b", "#2a7d4f", "#7a3fb0", "#9a2f4f", "#4f6172"}

// usagePage shows the month's use per day and GPU type (an SVG chart),
// the month's rows and spend, and the closed months with their
// chargeback downloads.
func (s *Server) usagePage(p *portalPage) int {
	d := usagePageData{navData: navOf(p, "usage"), Period: p.snap.Period.String(), Formats: []export.Format{export.CSV, export.JSON, export.FOCUS}}
	ctx := context.WithoutCancel(p.r.Context()) // the caches load ahead (ttlCache.get)
	if s.o.Usage != nil {
		// The month's summary as the overview reads it (the same cache).
		v, err := s.monthUsage(p.r, p.snap, p.tok.Tenant)
		if err == nil {
			d.Amount, d.Currency = v.Amount, v.Currency
			for _, r := range v.Rows {
				d.Rows = append(d.Rows, usageTypeRow{Type: r.GPUType, Tier: r.Tier, Kind: r.Kind, Hours: r.GPUHours, Amount: r.Amount})
			}
		} else {
			d.Errors = append(d.Errors, "usage is not available now")
		}
	}
	if s.o.Exports != nil {
		days, err := s.pageCache.daily.get(usageKey{p.snap.Period, p.tok.Tenant}, func() ([]DayUse, time.Duration, error) {
			ds, err := s.o.Exports.Daily(ctx, p.tok.Tenant, p.snap.Period)
			return ds, 0, err
		})
		if err != nil {
			d.Errors = append(d.Errors, "the daily use is not available now")
		}
		d.Days, d.Legend, d.MaxHours = dayChart(days, p.snap.Period)
	}
	closed, _ := s.pageCache.closed.get(usageKey{p.snap.Period, p.tok.Tenant}, func() ([]meter.Period, time.Duration, error) {
		// A month closes once (gpubridge close): the list is kept longer.
		return s.closedMonths(ctx, p.tok.Tenant, s.now(), 12), closedMonthsTTL, nil
	})
	for _, c := range closed {
		d.Closed = append(d.Closed, c.String())
	}
	s.render(p.w, http.StatusOK, "usage", d)
	return http.StatusOK
}

// DayUse is a tenant's GPU-seconds of one type on one UTC day.
type DayUse struct {
	Day        time.Time
	Type       string
	GPUSeconds int64
}

// dayChart lays a month's daily use out as stacked bars, a colour per
// type, 600×160 chart units.
func dayChart(days []DayUse, p meter.Period) ([]dayBar, []dayPart, string) {
	first := p.Start().UTC()
	n := int(p.End().Sub(first) / (24 * time.Hour))
	if n <= 0 {
		return nil, nil, ""
	}
	var types []string
	perDay := make([]map[string]int64, n)
	var top int64
	for _, u := range days {
		i := int(u.Day.Sub(first) / (24 * time.Hour))
		if i < 0 || i >= n {
			continue
		}
		if perDay[i] == nil {
			perDay[i] = map[string]int64{}
		}
		perDay[i][u.Type] += u.GPUSeconds
		if !slices.Contains(types, u.Type) {
			types = append(types, u.Type)
		}
	}
	slices.Sort(types)
	for _, m := range perDay {
		var t int64
		for _, v := range m {
			t += v
		}
		top = max(top, t)
	}
	var legend []dayPart
	for i, t := range types {
		legend = append(legend, dayPart{Type: t, Fill: typeFills[i%len(typeFills)]})
	}
	if top == 0 {
		return nil, legend, ""
	}
	w := chartW / float64(n)
	out := make([]dayBar, n)
	for i := range n {
		b := dayBar{X: float64(i) * w, W: w * 0.8, Day: first.AddDate(0, 0, i).Format("Jan 2"), Label: i%5 == 0}
		y := chartH
		for ti, t := range types {
			v := perDay[i][t]
			if v == 0 {
				continue
			}
			h := chartH * float64(v) / float64(top)
			y -= h
			b.Parts = append(b.Parts, dayPart{Y: y, H: h, Type: t, Hours: strconv.FormatFloat(float64(v)/3600, 'f', 1, 64), Fill: typeFills[ti%len(typeFills)]})
		}
		out[i] = b
	}
	return out, legend, strconv.FormatFloat(float64(top)/3600, 'f', 1, 64)
}

// chargebackDownload sends the team's chargeback of a closed month, the
// bytes export chargeback period=P format=F tenant=T writes.
func (s *Server) chargebackDownload(p *portalPage) int {
	q := p.r.URL.Query()
	b, f, per, err := s.chargebackFile(p.r.Context(), p.tok.Tenant, q.Get("period"), q.Get("format"))
	if err != nil {
		return s.refused(p, err)
	}
	writeExport(p.w, p.tok.Tenant, per, f, b)
	s.o.Logger.Info("chargeback downloaded through the portal", "tenant", p.tok.Tenant, "period", per.String(), "format", string(f), "actor", p.tok.Actor())
	return http.StatusOK
}

// Nav is the overview's navigation.
func (d tenantPage) Nav() navData {
	return navData{Tenant: d.Tenant, Active: "overview", IsAdmin: d.IsAdmin}
}

// closedMonthsTTL is how long the usage page keeps a tenant's closed
// months: a month just closed shows up at most this late.
const closedMonthsTTL = 10 * time.Minute

// pageCaches keep what the usage page reads of the books for a while
// (api.refreshInterval, as the overview's usage): a tenant's daily use of
// the month and its closed months.
//
// avail keeps the pool's availability the overview's timeline and
// calendar show (the same for every tenant: counts, never who), by its
// query and the number of booking changes made through this server, so
// that a change made here is seen at once.
type pageCaches struct {
	daily  *ttlCache[usageKey, []DayUse]
	closed *ttlCache[usageKey, []meter.Period]
	avail  *ttlCache[availKey, genOf[reserve.Availability]]
	// own keeps a tenant's bookings of the overview's fortnight and
	// limits its policy line, by the booking changes made here as avail.
	own    *ttlCache[ownKey, genOf[[]reserve.Booking]]
	limits *ttlCache[ownKey, string]
	// fragments keeps a tenant's rendered timeline and calendar (the
	// template is most of the overview's time) by a sum of what they
	// show: a reload of the same figures renders nothing anew.
	fragments *ttlCache[fragmentKey, template.HTML]
}

// genOf is a value as loaded (one wrapper for the caches of the page).
type genOf[V any] struct {
	v V
}

type fragmentKey struct {
	name, tenant string
	from, to     time.Time
	sum          uint64 // of the data rendered (fragment)
}

type ownKey struct {
	tenant   string
	from, to time.Time
	writes   int64
}

type availKey struct {
	from, to time.Time
	step     time.Duration
	writes   int64
}

func newPageCaches(ttl time.Duration, now func() time.Time) *pageCaches {
	// Each refreshes ahead: its loads run without the request's context.
	return &pageCaches{daily: newTTLCache[usageKey, []DayUse](ttl, now).refreshAhead(), closed: newTTLCache[usageKey, []meter.Period](ttl, now).refreshAhead(),
		avail: newTTLCache[availKey, genOf[reserve.Availability]](ttl, now).refreshAhead(),
		own:   newTTLCache[ownKey, genOf[[]reserve.Booking]](ttl, now).refreshAhead(), limits: newTTLCache[ownKey, string](ttl, now).refreshAhead(),
		fragments: newTTLCache[fragmentKey, template.HTML](ttl, now).bounded(2_000)}
}

// poolAvailability is svc's availability for q, kept for a refresh
// interval (pageCaches.avail).
func (s *Server) poolAvailability(ctx context.Context, svc Bookings, q reserve.AvailabilityQuery) (reserve.Availability, error) {
	g, err := s.poolAvailabilityGen(ctx, svc, q)
	return g.v, err
}

func (s *Server) poolAvailabilityGen(ctx context.Context, svc Bookings, q reserve.AvailabilityQuery) (genOf[reserve.Availability], error) {
	k := availKey{from: q.From, to: q.To, step: q.Step, writes: s.writes.Load()}
	ctx = context.WithoutCancel(ctx) // the cache loads ahead (ttlCache.get)
	return s.pageCache.avail.get(k, func() (genOf[reserve.Availability], time.Duration, error) {
		av, err := svc.Availability(ctx, q)
		return genOf[reserve.Availability]{v: av}, 0, err
	})
}

// ownBookings is the tenant's bookings in [from, to), kept as
// poolAvailability (pageCaches.own).
func (s *Server) ownBookings(ctx context.Context, svc Bookings, tenant string, from, to time.Time) (genOf[[]reserve.Booking], error) {
	k := ownKey{tenant: tenant, from: from, to: to, writes: s.writes.Load()}
	ctx = context.WithoutCancel(ctx) // the cache loads ahead (ttlCache.get)
	return s.pageCache.own.get(k, func() (genOf[[]reserve.Booking], time.Duration, error) {
		bs, err := svc.List(ctx, reserve.ListFilter{Tenant: tenant, From: from, To: to})
		return genOf[[]reserve.Booking]{v: bs}, 0, err
	})
}

// fragment renders template k.name with data once per k and data (a
// tenant's timeline or calendar as long as its figures do not change).
// k.sum is the sum of what data shows (lanesSum, calendarSum).
func (s *Server) fragment(k fragmentKey, data any) template.HTML {
	h, err := s.pageCache.fragments.get(k, func() (template.HTML, time.Duration, error) {
		var b bytes.Buffer
		if err := pageTemplates.ExecuteTemplate(&b, k.name, data); err != nil {
			return "", 0, err
		}
		return template.HTML(b.String()), 0, nil // #nosec G203 -- the output of html/template, escaped there
	})
	if err != nil {
		s.o.Logger.Error("status page", "template", k.name, "err", err)
	}
	return h
}

// named is k for template name.
func (k fragmentKey) named(name string) fragmentKey {
	k.name = name
	return k
}

// figureSum sums figures (fnv-64a) as the fragment keys need it: cheaply
// (fmt's reflection cost as much as the rendering it saved).
type figureSum struct{ h hash.Hash64 }

func newFigureSum() figureSum { return figureSum{fnv.New64a()} }

func (f figureSum) str(v string) {
	_, _ = f.h.Write([]byte(v))
	_, _ = f.h.Write([]byte{0})
}

func (f figureSum) num(vs ...float64) {
	var b [8]byte
	for _, v := range vs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		_, _ = f.h.Write(b[:])
	}
}

// lanesSum is the sum of what the timeline shows.
func lanesSum(ls []lane) uint64 {
	f := newFigureSum()
	for _, l := range ls {
		f.str(l.Type)
		f.num(float64(l.Capacity), l.Width, float64(len(l.Steps)), float64(len(l.Bookings)))
		for _, st := range l.Steps {
			f.num(st.X, st.W, st.CapY, st.CapH, st.BookedY, st.BookedH)
			f.str(st.Title)
		}
		for _, b := range l.Bookings {
			f.num(b.X, b.W)
			f.str(b.Label)
		}
	}
	return f.h.Sum64()
}

// calendarSum is the sum of what the calendar shows (its days are its
// cells laid out by their time, which the keys hold).
func calendarSum(cs []calType) uint64 {
	f := newFigureSum()
	for _, c := range cs {
		f.str(c.Type)
		f.num(float64(len(c.cells)))
		for _, cell := range c.cells {
			f.str(cell.Key)
			f.str(cell.Href)
			f.num(float64(cell.I), float64(cell.Free), float64(cell.Own), float64(cell.Others), float64(cell.Capacity), float64(cell.From.Unix()))
		}
	}
	return f.h.Sum64()
}
