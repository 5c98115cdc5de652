package api

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// cookieName holds the portal's session id (session.go). It is
// HttpOnly and SameSite=Strict, and only the portal's pages read it: the
// JSON API takes the Authorization header only, so no other site can make
// a browser change anything with it.
const cookieName = "gpubridge_token"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var pageTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"pct": func(v, of int64) float64 {
		if of <= 0 {
			return 0
		}
		return min(100, 100*float64(v)/float64(of))
	},
	"utc":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"day":     func(t time.Time) string { return t.UTC().Format("Jan 2") },
	"stamp":   func(t time.Time) string { return reserve.FormatTime(t, reserve.Zone{}, false) },
	"window":  reserve.Window,
	"dur":     reserve.FormatDuration,
	"weekday": func(t time.Time) string { return t.UTC().Format("Mon Jan 2") },
}).ParseFS(templateFS, "templates/*.html"))

// csp is the pages' Content-Security-Policy: the portal's own script and
// style sheet only (no inline script or style), forms to itself, never in
// a frame.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// pageRoutes mounts the portal: GET / (the overview, or the sign-in
// form), POST /login, POST /logout, the booking and cancelling forms
// (portal.go) and its static files. The posts are refused from another
// origin (http.CrossOriginProtection: Sec-Fetch-Site, else Origin against
// Host), so no other site can sign a browser in with its own token or
// out; every post of a signed-in browser carries the session's CSRF token
// besides.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, http.StatusForbidden, "login", loginData{Error: "refused: the form was sent from another site; sign in on this page"})
		s.o.Metrics.observe(r.URL.Path, r.Method, http.StatusForbidden, 0)
	}))
	mux.HandleFunc("GET /{$}", s.page)
	mux.Handle("POST /login", cop.Handler(http.HandlerFunc(s.login)))
	mux.Handle("POST /logout", cop.Handler(http.HandlerFunc(s.logout)))
	s.portalRoutes(mux, cop)
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
}

// secure says whether the cookie is Secure: always with TLS, and off
// loopback (a TLS proxy in front of a plain listener): only a browser on
// the server's own host may keep the session over plain HTTP.
func (s *Server) secure(r *http.Request) bool {
	if s.o.SecureCookies || r.TLS != nil {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return !isLoopback(host)
}

// isLoopback says whether host (a name or an address, no port) is
// loopback; names other than localhost are not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// login takes a Slurm JWT (a person) or an API token (scripts) from the
// form, checks it as the API does and starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	raw := strings.TrimSpace(r.PostFormValue("token"))
	r.Header.Set("Authorization", "Bearer "+raw)
	tok, code, err := s.authenticate(r)
	if c, cerr := r.Cookie(cookieName); err == nil && cerr == nil {
		_ = s.o.Sessions.Delete(r.Context(), c.Value) // a sign-in always gets a new session id
	}
	if err == nil {
		err = s.newSession(w, r, tok)
		code = http.StatusServiceUnavailable
	}
	if err != nil {
		s.render(w, code, "login", loginData{Error: err.Error()})
		s.o.Metrics.observe("/login", r.Method, code, time.Since(start))
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
	s.o.Metrics.observe("/login", r.Method, http.StatusSeeOther, time.Since(start))
}

// logout ends the session (its CSRF token is needed: no page of another
// site signs a browser out) and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		ss, err := s.o.Sessions.Get(r.Context(), c.Value)
		if err == nil && !csrfOK(r, ss) {
			s.render(w, http.StatusForbidden, "login", loginData{Error: errCSRF.Error()})
			return
		}
		if err == nil {
			_ = s.o.Sessions.Delete(r.Context(), ss.ID)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// loginData is the sign-in form's: an error to show, and whether to
// offer the OIDC provider (set by render).
type loginData struct {
	Error string
	OIDC  bool
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := s.servePage(w, r)
	s.o.Metrics.observe("/", r.Method, code, time.Since(start))
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) int {
	if !s.portalRate(r) {
		s.message(w, http.StatusTooManyRequests, "", errTooMany.Error())
		return http.StatusTooManyRequests
	}
	// A token in the address would stay in the history, proxy logs and
	// Referer headers: it is never taken (nor looked up) there.
	if r.URL.Query().Has("token") {
		s.render(w, http.StatusBadRequest, "login", loginData{Error: "a token is not taken in the address (it would stay in the browser's history and the logs); paste it in the form below"})
		return http.StatusBadRequest
	}
	if _, err := r.Cookie(cookieName); err != nil {
		s.render(w, http.StatusOK, "login", loginData{})
		return http.StatusOK
	}
	ss, tok, snap, code, err := s.signedIn(r)
	if err != nil {
		s.render(w, code, "login", loginData{Error: err.Error()})
		return code
	}
	if tok.Scope == token.Admin {
		d := s.adminPool(r, snap, tok) // portal_admin.go
		d.CSRF = ss.CSRF
		s.render(w, http.StatusOK, "admin", d)
		return http.StatusOK
	}
	d := s.tenantData(r, snap, tok)
	s.portalData(r, &d, ss, tok)
	s.render(w, http.StatusOK, "tenant", d)
	return http.StatusOK
}

// signedIn finds the request's session, its rights now (acting for the
// tenant= of the query when the person belongs to it) and the snapshot;
// a tenant that is not (any more) known is 404.
func (s *Server) signedIn(r *http.Request) (Session, token.Token, *Snapshot, int, error) {
	ss, tok, code, err := s.session(r)
	if err != nil {
		return ss, tok, nil, code, err
	}
	tok = forTenant(tok, r.FormValue("tenant"))
	if s.o.Live == nil {
		return ss, tok, nil, http.StatusServiceUnavailable, errUnavailable
	}
	snap, err := s.o.Live.Get(r.Context())
	if err != nil {
		return ss, tok, nil, http.StatusServiceUnavailable, errUnavailable
	}
	if tok.Scope != token.Admin {
		if _, ok := snap.Tenant(tok.Tenant); !ok {
			return ss, tok, nil, http.StatusNotFound, errors.New("this tenant is not known (any more)")
		}
	}
	return ss, tok, snap, 0, nil
}

func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	if d, ok := data.(loginData); ok {
		d.OIDC = s.oidc != nil
		data = d
	}
	var b bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&b, name, data); err != nil {
		s.o.Logger.Error("status page", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", csp)
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// gauge is one GPU type's quota gauge.
type gauge struct {
	Type                                       string
	Quota                                      int64
	HasQuota                                   bool
	InQuota, Bursting, Booked, Pending, Allocd int64
}

// bar is one bar of a chart, in chart units (0..100 of the tallest).
type bar struct {
	Label, Value string
	X, Y, W, H   float64
}

// lane is one GPU type's availability timeline.
type lane struct {
	Type     string
	Capacity int
	Steps    []step
	Bookings []span
	Width    float64
}

type step struct {
	X, W, CapY, CapH, BookedY, BookedH float64
	Title                              string
}

type span struct {
	X, W  float64
	Label string
}

type tenantPage struct {
	Tenant   string
	Token    string
	AsOf     time.Time
	Gauges   []gauge
	Period   string
	Currency string
	Amount   string
	Usage    []bar
	Lanes    []lane
	// LanesHTML and CalendarHTML are Lanes and Calendar rendered
	// (templates lanes and calendar), kept per fragKey.
	LanesHTML, CalendarHTML template.HTML
	fragKey                 fragmentKey
	From, To                time.Time
	Errors                  []string

	// The portal's parts (portal.go): who is signed in, the calendar,
	// the booking form and the team's bookings.
	CSRF      string
	Person    string
	Tenants   []string
	IsAdmin   bool
	CanBook   bool
	Notice    string
	Limits    string
	APITokens []token.Token
	Calendar  []calType
	Types     []string
	Form      bookForm
	Bookings  []bookingRow
	avail     reserve.Availability
	own       []reserve.Booking
}

const (
	chartW, chartH = 600.0, 160.0
	laneW, laneH   = 600.0, 60.0
)

func (s *Server) tenantData(r *http.Request, snap *Snapshot, tok token.Token) tenantPage {
	d := tenantPage{Tenant: tok.Tenant, Token: tok.Name, AsOf: snap.At, Period: snap.Period.String()}
	for _, u := range snap.Use[tok.Tenant] {
		g := gauge{Type: u.Type, InQuota: u.InQuota, Bursting: u.Bursting, Booked: u.Booked, Pending: u.Pending, Allocd: u.Allocated}
		if u.Quota != nil {
			g.Quota, g.HasQuota = *u.Quota, true
		}
		d.Gauges = append(d.Gauges, g)
	}
	// Usage this month per type, from the same view as the usage route.
	if s.o.Usage != nil {
		v, err := s.monthUsage(r, snap, tok.Tenant)
		if err != nil {
			d.Errors = append(d.Errors, "usage is not available now")
		} else {
			d.Currency, d.Amount = v.Currency, v.Amount
			if v.Unpriced {
				d.Amount += " + unpriced use"
			}
			d.Usage = usageBars(v.Rows)
		}
	}
	d.From = snap.At.Truncate(calendarStep) // steps at 00, 06, 12 and 18 UTC
	d.To = d.From.Add(14 * 24 * time.Hour)
	if svc, err := s.readsOrUnavailable(); err == nil {
		av, err := s.poolAvailabilityGen(r.Context(), svc, reserve.AvailabilityQuery{From: d.From, To: d.To, Step: calendarStep})
		if err != nil {
			d.Errors = append(d.Errors, "availability is not available now")
		}
		bs, err := s.ownBookings(r.Context(), svc, tok.Tenant, d.From, d.To)
		if err != nil {
			d.Errors = append(d.Errors, "bookings are not available now")
		}
		var own []reserve.Booking
		for _, b := range bs.v {
			if b.Tenant == tok.Tenant && b.State != reserve.StateCancelled {
				own = append(own, b)
			}
		}
		d.Lanes = lanes(av.v, own, d.From, d.To)
		d.avail, d.own = av.v, own
		d.fragKey = fragmentKey{tenant: tok.Tenant, from: d.From, to: d.To}
		k := d.fragKey.named("lanes")
		k.sum = lanesSum(d.Lanes)
		d.LanesHTML = s.fragment(k, d.Lanes)
	}
	return d
}

// usageBars sums the rows per GPU type into GPU-hour bars.
func usageBars(rows []UsageRow) []bar {
	secs := map[string]int64{}
	var types []string
	for _, r := range rows {
		if _, ok := secs[r.GPUType]; !ok {
			types = append(types, r.GPUType)
		}
		secs[r.GPUType] += r.GPUSeconds
	}
	slices.Sort(types)
	var most int64 = 1
	for _, v := range secs {
		most = max(most, v)
	}
	var out []bar
	w := min(chartW/float64(max(len(types), 1)), 140)
	for i, t := range types {
		h := (chartH - 20) * float64(max(secs[t], 0)) / float64(most)
		out = append(out, bar{Label: t, Value: export.GPUHours(secs[t]) + " GPU-h", X: float64(i)*w + 8, W: w - 16, Y: chartH - 20 - h, H: h})
	}
	return out
}

// lanes draws each GPU type's capacity and booked steps over [from, to),
// and the tenant's own bookings on them.
func lanes(av reserve.Availability, own []reserve.Booking, from, to time.Time) []lane {
	total := to.Sub(from).Seconds()
	x := func(t time.Time) float64 {
		return max(0, min(laneW, laneW*t.Sub(from).Seconds()/total))
	}
	var out []lane
	for _, r := range av.Resources {
		k, name := r.Resource.Split()
		if k != reserve.KindGPU {
			continue
		}
		l := lane{Type: name, Capacity: r.Pool, Width: laneW}
		top := max(r.Pool, 1)
		for _, b := range r.Buckets {
			y := func(n int) float64 { return laneH - laneH*float64(max(min(n, top), 0))/float64(top) }
			l.Steps = append(l.Steps, step{X: x(b.From), W: x(b.To) - x(b.From), CapY: y(b.Capacity), CapH: laneH - y(b.Capacity), BookedY: y(b.Committed),
				BookedH: laneH - y(b.Committed), Title: fmt.Sprintf("%s: %d booked, %d free of %d", b.From.UTC().Format("Jan 2 15:04"), b.Committed, b.Free, b.Capacity)})
		}
		for _, b := range own {
			if b.Kind != reserve.KindGPU || b.GPUType != name {
				continue
			}
			l.Bookings = append(l.Bookings, span{X: x(b.Start), W: max(x(b.End)-x(b.Start), 2),
				Label: fmt.Sprintf("booking %d: %s %s", b.ID, b.What(), reserve.Window(b.Start, b.End))})
		}
		out = append(out, l)
	}
	return out
}

type adminTenant struct {
	Name   string
	Quota  string
	InUse  string
	Hours  string
	Amount string
}

type adminPage struct {
	CSRF     string
	Token    string
	AsOf     time.Time
	Pool     []PoolType
	PoolBars []poolBar
	Tenants  []adminTenant
	Currency string
	Errors   []string
}

type poolBar struct {
	Type                              string
	Capacity                          int64
	BookedW, AllocW, BookableW        float64
	Bookable, Booked, Allocated, Free int64
}

func (s *Server) adminData(_ *http.Request, snap *Snapshot, tok token.Token) adminPage {
	d := adminPage{Token: tok.Name, AsOf: snap.At, Pool: snap.Pool, Currency: snap.Usage.Meta.Card.Currency}
	for _, p := range snap.Pool {
		c := float64(max(p.Capacity, 1))
		d.PoolBars = append(d.PoolBars, poolBar{Type: p.Type, Capacity: p.Capacity, Bookable: p.Bookable, Booked: p.Booked, Allocated: p.Allocated, Free: p.Free,
			BookedW: 400 * float64(p.Booked) / c, AllocW: 400 * float64(p.Allocated) / c, BookableW: 400 * float64(p.Bookable) / c})
	}
	totals := map[string]export.TenantTotal{}
	for _, t := range snap.Usage.Tenants() {
		totals[t.Tenant] = t
	}
	for _, t := range snap.Tenants {
		row := adminTenant{Name: t.Name, Quota: t.GPUs.String()}
		var in []string
		for _, u := range snap.Use[t.Name] {
			if u.Allocated > 0 {
				in = append(in, fmt.Sprintf("%s:%d", u.Type, u.Allocated))
			}
		}
		row.InUse = strings.Join(in, ",")
		if tt, ok := totals[t.Name]; ok {
			row.Hours, row.Amount = export.GPUHours(tt.GPUSeconds), tt.Amount.String()
		}
		d.Tenants = append(d.Tenants, row)
	}
	for _, p := range Parts {
		if e := snap.Errors[p]; e != "" {
			d.Errors = append(d.Errors, p+": not read in the last cycle")
		}
	}
	return d
}

// monthUsage is tenant's usage of the snapshot's month: from the
// snapshot's summary when this snapshot read it (as the usage route),
// else the tenant's own summary, kept per refresh interval.
func (s *Server) monthUsage(r *http.Request, snap *Snapshot, tenant string) (usageView, error) {
	if sm := snap.Usage; sm.Meta.Period == snap.Period && snap.Errors[PartUsage] == "" && snap.PartAt[PartUsage] == snap.At {
		return usageOf(accountSummary(sm, tenant), tenant, snap.At), nil
	}
	return s.usage.get(usageKey{snap.Period, tenant}, func() (usageView, time.Duration, error) {
		sm, err := s.o.Usage.Summary(context.WithoutCancel(r.Context()), snap.Period, tenant) // loaded ahead (ttlCache.get)
		if err != nil {
			return usageView{}, 0, err
		}
		return usageOf(sm, tenant, s.now()), 0, nil
	})
}
