package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The portal's own pages beside the overview: the availability calendar
// (in the overview), booking with the price shown first, cancelling with
// the fee shown first, and the free counts the calendar's script polls.
// Every change goes through the booking use cases the CLI and the API
// call (Options.Bookings) with the person (or token) as the actor.

// errCSRF: a form without the session's CSRF token.
var errCSRF = errors.New("refused: the form is not from this session (reload the page and try again)")

// calendarStep and calendarCells shape the calendar: 7 days of 6 hours.
const (
	calendarStep  = 6 * time.Hour
	calendarCells = 28
)

// portalRoutes mounts the booking and cancelling forms and the free counts.
func (s *Server) portalRoutes(mux *http.ServeMux, cop *http.CrossOriginProtection) {
	mux.Handle("POST /book", cop.Handler(s.portalHandler("/book", s.book)))
	mux.Handle("GET /cancel", s.portalHandler("/cancel", s.cancelForm))
	mux.Handle("POST /cancel", cop.Handler(s.portalHandler("/cancel", s.cancel)))
	mux.Handle("GET /portal/free", http.HandlerFunc(s.freeCounts))
	mux.Handle("GET /portal/events", http.HandlerFunc(s.portalEvents)) // events.go
	mux.Handle("POST /tokens", cop.Handler(s.portalHandler("/tokens", s.addPortalToken)))
	mux.Handle("POST /tokens/delete", cop.Handler(s.portalHandler("/tokens/delete", s.deletePortalToken)))
	s.membersRoutes(mux, cop)
	s.portalPageRoutes(mux, cop)
}

// portalPage is one signed-in request of a portal form.
type portalPage struct {
	w    http.ResponseWriter
	r    *http.Request
	ss   Session
	tok  token.Token
	snap *Snapshot
}

// portalHandler signs the request in (a tenant's rights only: an admin
// token uses the CLI or the API), checks the CSRF token of a post and
// the book scope, then runs h, which answers with its status.
func (s *Server) portalHandler(path string, h func(p *portalPage) int) http.Handler {
	return s.signedInPage(path, h, func(r *http.Request, ss Session, tok token.Token) (int, string, string) {
		switch {
		case r.Method == http.MethodPost && !csrfOK(r, ss):
			return http.StatusForbidden, tok.Tenant, errCSRF.Error()
		case tok.Scope == token.Admin || !tok.Scope.Allows(token.Book):
			return http.StatusForbidden, tok.Tenant, "this sign-in may not book or cancel (a read token); sign in with your Slurm token"
		}
		return 0, "", ""
	})
}

// signedInPage is a portal page's request: within the portal's rate, signed
// in (else the sign-in form), not refused by refuse (a status, the tenant
// the message is shown for, and the message; status 0 lets it through),
// then h; its status and time are observed under path.
func (s *Server) signedInPage(path string, h func(p *portalPage) int, refuse func(r *http.Request, ss Session, tok token.Token) (int, string, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		code := func() int {
			if !s.portalRate(r) {
				s.message(w, http.StatusTooManyRequests, "", errTooMany.Error())
				return http.StatusTooManyRequests
			}
			ss, tok, snap, code, err := s.signedIn(r)
			if err != nil {
				s.render(w, code, "login", loginData{Error: err.Error()})
				return code
			}
			if code, tenant, msg := refuse(r, ss, tok); code != 0 {
				s.message(w, code, tenant, msg)
				return code
			}
			return h(&portalPage{w: w, r: r, ss: ss, tok: tok, snap: snap})
		}()
		s.o.Metrics.observe(path, r.Method, code, time.Since(start))
	})
}

// portalRate bounds a source address's portal requests as the API's
// (AddressRate; loopback has none of its own: a proxy on the host).
func (s *Server) portalRate(r *http.Request) bool {
	ip := clientIP(r)
	return isLoopback(ip) || s.perAddr.allow(ip, s.now())
}

// messagePage is a short answer with a way back.
type messagePage struct {
	Tenant  string
	Message string
}

func (s *Server) message(w http.ResponseWriter, code int, tenant, msg string) {
	s.render(w, code, "message", messagePage{Tenant: tenant, Message: msg})
}

// calCell is one step of a GPU type's calendar.
type calCell struct {
	I                 int // its place, from 0
	From              time.Time
	Key               string // type|stamp, what the free counts answer
	Free, Own, Others int
	Capacity          int
	Href              string // the booking form, filled with this window
}

// calDay is one day's row of a type's calendar: a step per six hours
// (nil before the calendar's first step or after its last).
type calDay struct {
	Day   time.Time
	Steps [4]*calCell
}

type calType struct {
	Type string
	Days []calDay
	// cells are the steps in order.
	cells []calCell
}

// bookingRow is one of the team's bookings.
type bookingRow struct {
	ID      int64
	What    string
	Window  string
	State   string
	Purpose string
	Live    bool // not cancelled nor over: it may be cancelled
}

// bookForm is the booking form's values.
type bookForm struct {
	Type, Count, Start, Duration, Purpose string
}

// portalData adds the portal's parts to the overview: who is signed in,
// the calendar, the booking form (filled from the query: a calendar cell)
// and the team's bookings.
func (s *Server) portalData(r *http.Request, d *tenantPage, ss Session, tok token.Token) {
	d.CSRF, d.Person, d.Tenants = ss.CSRF, tok.Person, tok.Tenants
	d.IsAdmin = slices.Contains(tok.AdminOf, tok.Tenant)
	d.CanBook = tok.Scope.Allows(token.Book)
	if n, err := strconv.ParseInt(r.URL.Query().Get("booked"), 10, 64); err == nil && n > 0 {
		d.Notice = fmt.Sprintf("Booking %d is made.", n)
	}
	if n, err := strconv.ParseInt(r.URL.Query().Get("cancelled"), 10, 64); err == nil && n > 0 {
		d.Notice = fmt.Sprintf("Booking %d is cancelled.", n)
	}
	if n, err := strconv.ParseInt(r.URL.Query().Get("modified"), 10, 64); err == nil && n > 0 {
		d.Notice = fmt.Sprintf("Booking %d is changed.", n)
	}
	if n := r.URL.Query().Get("revoked"); n != "" {
		d.Notice = "Token " + n + " is revoked."
	}
	q := r.URL.Query()
	d.Form = bookForm{Type: q.Get("type"), Count: "1", Start: q.Get("start"), Duration: "6h"}
	d.Calendar = calendar(d.avail, d.own, tok.Tenant)
	k := d.fragKey.named("calendar")
	k.sum = calendarSum(d.Calendar)
	d.CalendarHTML = s.fragment(k, d.Calendar)
	for _, c := range d.Calendar {
		d.Types = append(d.Types, c.Type)
	}
	if d.Form.Type == "" && len(d.Types) > 0 {
		d.Form.Type = d.Types[0]
	}
	d.Limits = s.limits(r, tok.Tenant)
	if d.IsAdmin && s.o.TokenCases != nil {
		if ts, err := s.o.TokenCases.List(r.Context(), tok.Tenant); err == nil {
			d.APITokens = slices.DeleteFunc(ts, func(t token.Token) bool { return t.Tenant != tok.Tenant })
		} else {
			d.Errors = append(d.Errors, "the tokens are not available now")
		}
	}
	now := s.now()
	for _, b := range d.own {
		d.Bookings = append(d.Bookings, bookingRow{ID: b.ID, What: b.What(), Window: reserve.Window(b.Start, b.End), State: string(b.State),
			Purpose: b.Purpose, Live: b.State != reserve.StateCancelled && b.End.After(now)})
	}
}

// limits says what the tenant's booking policy allows, in one line for
// the booking form (empty when it cannot be read now).
func (s *Server) limits(r *http.Request, tenant string) string {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return ""
	}
	l, _ := s.pageCache.limits.get(ownKey{tenant: tenant, writes: s.writes.Load()}, func() (string, time.Duration, error) {
		p, err := svc.Policy(context.WithoutCancel(r.Context()), tenant) // loaded ahead (ttlCache.get)
		if err != nil {
			return "", 0, err
		}
		return limitsLine(p), 0, nil
	})
	return l
}

// limitsLine is policy p in one line.
func limitsLine(p reserve.Policy) string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
		parts = append(parts, fmt.Sprintf("%s at most %d at once", t, p.MaxGPUs[t]))
	}
	for _, l := range []struct {
		what string
		span reserve.Span
	}{{"windows up to %s", p.MaxWindow}, {"made at least %s ahead", p.MinLead}, {"ending within %s", p.MaxHorizon}} {
		if l.span > 0 {
			parts = append(parts, fmt.Sprintf(l.what, reserve.FormatDuration(time.Duration(l.span))))
		}
	}
	if p.MonthlySpendLimit != nil {
		parts = append(parts, "bookings up to "+p.MonthlySpendLimit.String()+" a month")
	}
	if len(parts) == 0 {
		return "no limits beyond the pool"
	}
	return strings.Join(parts, "; ")
}

// calendar is each GPU type's free, own and others' counts per step of
// the first calendarCells steps of av; own counts the tenant's bookings
// that overlap the step (others the rest of what is booked: never who).
func calendar(av reserve.Availability, own []reserve.Booking, tenant string) []calType {
	var out []calType
	for _, r := range av.Resources {
		k, name := r.Resource.Split()
		if k != reserve.KindGPU {
			continue
		}
		ct := calType{Type: name}
		for _, b := range r.Buckets {
			if len(ct.cells) == calendarCells {
				break
			}
			n := 0
			for _, o := range own {
				if o.Kind == reserve.KindGPU && o.GPUType == name && o.Start.Before(b.To) && o.End.After(b.From) {
					n += o.Count
				}
			}
			stamp := reserve.FormatTime(b.From, reserve.Zone{}, false)
			ct.cells = append(ct.cells, calCell{I: len(ct.cells), From: b.From, Key: name + "|" + stamp, Free: b.Free, Own: n, Others: max(b.Committed-n, 0),
				Capacity: b.Capacity, Href: "/?" + url.Values{"tenant": {tenant}, "type": {name}, "start": {stamp}}.Encode() + "#book"})
		}
		ct.Days = calDays(ct.cells)
		out = append(out, ct)
	}
	return out
}

// calDays lays cells out in rows of a UTC day, a column per six hours.
func calDays(cells []calCell) []calDay {
	var days []calDay
	for i := range cells {
		c := &cells[i]
		day := c.From.UTC().Truncate(24 * time.Hour)
		if len(days) == 0 || !days[len(days)-1].Day.Equal(day) {
			days = append(days, calDay{Day: day})
		}
		days[len(days)-1].Steps[c.From.UTC().Hour()/6] = c
	}
	return days
}

// freeCounts answers the calendar's free counts (JSON: type|stamp ->
// free) of the signed-in tenant's calendar, for its script to refresh
// them without a reload.
func (s *Server) freeCounts(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := func() int {
		if !s.portalRate(r) {
			writeError(w, http.StatusTooManyRequests, errTooMany)
			return http.StatusTooManyRequests
		}
		_, tok, snap, code, err := s.signedIn(r)
		if err != nil {
			writeError(w, code, err)
			return code
		}
		out, err := s.freeMap(r, snap, tok.Tenant) // events.go: cached as the calendar's
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, errUnavailable)
			return http.StatusServiceUnavailable
		}
		writeJSON(w, http.StatusOK, map[string]any{"free": out})
		return http.StatusOK
	}()
	s.o.Metrics.observe("/portal/free", r.Method, code, time.Since(start))
}

// confirmPage shows a booking's price and the cancellation terms before
// it is made.
type confirmPage struct {
	Tenant, CSRF string
	Form         bookForm
	Booking      reserve.Booking
	Price        string
	Terms        string
}

// book reads the form into the request add booking makes of its
// key=value arguments; without confirm=yes it shows the price and the
// terms, with it the booking is made (a refusal names the next free
// window, as the CLI does).
func (s *Server) book(p *portalPage) int {
	f := bookForm{Type: p.r.PostFormValue("type"), Count: p.r.PostFormValue("count"), Start: p.r.PostFormValue("start"),
		Duration: p.r.PostFormValue("duration"), Purpose: p.r.PostFormValue("purpose")}
	kv := map[string]string{"tenant": p.tok.Tenant, "gpus": strings.TrimSpace(f.Type) + ":" + strings.TrimSpace(f.Count),
		"start": f.Start, "duration": f.Duration}
	if f.Purpose != "" {
		kv["purpose"] = f.Purpose
	}
	req, ps := reserve.ParseAdd(kv, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		s.message(p.w, http.StatusBadRequest, p.tok.Tenant, ps.Error())
		return http.StatusBadRequest
	}
	if p.r.PostFormValue("confirm") != "yes" {
		b := reserve.Booking{Tenant: req.Tenant, Kind: req.Kind, GPUType: req.GPUType, Count: req.Count, Start: req.Start, End: req.End, Purpose: req.Purpose}
		s.render(p.w, http.StatusOK, "confirm", confirmPage{Tenant: p.tok.Tenant, CSRF: p.ss.CSRF, Form: f, Booking: b,
			Price: s.price(p.r, b.GPUType, int64(b.Count)*int64(b.Duration()/time.Second), b.Start), Terms: s.terms()})
		return http.StatusOK
	}
	if s.o.Bookings == nil {
		s.message(p.w, http.StatusServiceUnavailable, p.tok.Tenant, errUnavailable.Error())
		return http.StatusServiceUnavailable
	}
	b, err := s.o.Bookings.Add(p.r.Context(), p.tok.Actor(), req)
	s.writes.Add(1)
	if err != nil {
		return s.refused(p, err)
	}
	s.o.Logger.Info("booking added through the portal", "booking", b.ID, "tenant", b.Tenant, "actor", p.tok.Actor())
	http.Redirect(p.w, p.r, "/?"+url.Values{"tenant": {b.Tenant}, "booked": {strconv.FormatInt(b.ID, 10)}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}

// refused shows why a change was not made: a refusal redacted as the
// API redacts it (with the next free window), the domain's problems, or
// "not available now".
func (s *Server) refused(p *portalPage, err error) int {
	var ref *reserve.Refusal
	var ps reserve.Problems
	var he *httpError
	switch {
	case errors.As(err, &he):
		s.message(p.w, he.code, p.tok.Tenant, he.body.Error)
		return he.code
	case errors.As(err, &ref):
		s.message(p.w, http.StatusConflict, p.tok.Tenant, redactRefusal(ref).Error())
		return http.StatusConflict
	case errors.Is(err, reserve.ErrNotFound), errors.Is(err, errNotFound):
		s.message(p.w, http.StatusNotFound, p.tok.Tenant, errNotFound.Error())
		return http.StatusNotFound
	case errors.As(err, &ps):
		s.message(p.w, http.StatusBadRequest, p.tok.Tenant, ps.Error())
		return http.StatusBadRequest
	}
	s.o.Logger.Error("portal change failed", "path", p.r.URL.Path, "err", err)
	s.message(p.w, http.StatusServiceUnavailable, p.tok.Tenant, errUnavailable.Error())
	return http.StatusServiceUnavailable
}

// price is gpuSeconds of typ booked at the rate card's booked rate in
// force, written with its currency, or a sentence saying it is unknown.
func (s *Server) price(r *http.Request, typ string, gpuSeconds int64, at time.Time) string {
	if s.o.Pricing == nil {
		return "not known (no rate card)"
	}
	c, err := s.o.Pricing(r.Context())
	if err != nil || c == nil {
		return "not known (no rate card)"
	}
	a, err := c.BookedCost(typ, gpuSeconds, at)
	if err != nil {
		return "not known (" + err.Error() + ")"
	}
	return a.String() + " " + a.Currency().String()
}

// terms are the cancellation terms (config bookings.cancellation).
func (s *Server) terms() string {
	if s.o.CancelFreeBefore <= 0 {
		return "Cancelling before the start is free; after the start the time up to the cancellation is charged."
	}
	d := reserve.FormatDuration(s.o.CancelFreeBefore)
	return "Cancelling at least " + d + " before the start is free; later, the window is charged from its start to " + d + " after the cancellation (at most to its end)."
}

// cancelPage shows the fee of cancelling a booking before it is done.
type cancelPage struct {
	Tenant, CSRF string
	Booking      reserve.Booking
	Fee          string
	Terms        string
}

// ownPortalBooking finds the id= booking of the signed-in tenant; any
// other is not found.
func (s *Server) ownPortalBooking(p *portalPage, id string) (reserve.Booking, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || s.o.Bookings == nil {
		return reserve.Booking{}, errNotFound
	}
	b, err := s.o.Bookings.Get(p.r.Context(), n)
	if err != nil {
		return reserve.Booking{}, err
	}
	if b.Tenant != p.tok.Tenant {
		return reserve.Booking{}, errNotFound
	}
	return b, nil
}

// cancelForm shows the fee of cancelling now and asks to confirm.
func (s *Server) cancelForm(p *portalPage) int {
	b, err := s.ownPortalBooking(p, p.r.URL.Query().Get("id"))
	if err != nil {
		return s.refused(p, err)
	}
	s.render(p.w, http.StatusOK, "cancel", cancelPage{Tenant: p.tok.Tenant, CSRF: p.ss.CSRF, Booking: b, Fee: s.fee(p.r, b), Terms: s.terms()})
	return http.StatusOK
}

// fee is what cancelling b now costs under the cancellation policy.
func (s *Server) fee(r *http.Request, b reserve.Booking) string {
	now := s.now()
	end := meter.Cancellation{FreeBefore: s.o.CancelFreeBefore}.ChargedEnd(meter.BookedWindow{Start: b.Start.Unix(), End: b.End.Unix(), CancelledAt: now.Unix()})
	if end <= b.Start.Unix() {
		return "none (free: cancelled in time)"
	}
	return s.price(r, b.GPUType, int64(b.Count)*(end-b.Start.Unix()), b.Start)
}

// cancel cancels the form's booking (Bookings.Cancel, what delete
// booking runs).
func (s *Server) cancel(p *portalPage) int {
	b, err := s.ownPortalBooking(p, p.r.PostFormValue("id"))
	if err != nil {
		return s.refused(p, err)
	}
	out, err := s.o.Bookings.Cancel(p.r.Context(), p.tok.Actor(), b.ID)
	s.writes.Add(1)
	if err != nil {
		return s.refused(p, err)
	}
	s.o.Logger.Info("booking cancelled through the portal", "booking", out.ID, "tenant", out.Tenant, "actor", p.tok.Actor())
	http.Redirect(p.w, p.r, "/?"+url.Values{"tenant": {out.Tenant}, "cancelled": {strconv.FormatInt(out.ID, 10)}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}

// tokenPage shows a new token's secret, once.
type tokenPage struct {
	Tenant string
	Token  token.Token
	Secret string
}

// portalTokens are the token use cases for the signed-in tenant's admin
// (403 for anyone else).
func (s *Server) portalTokens(p *portalPage) (TokenCases, int) {
	if !slices.Contains(p.tok.AdminOf, p.tok.Tenant) {
		s.message(p.w, http.StatusForbidden, p.tok.Tenant, errNotTenantAdmin.Error())
		return nil, http.StatusForbidden
	}
	if s.o.TokenCases == nil {
		s.message(p.w, http.StatusServiceUnavailable, p.tok.Tenant, errUnavailable.Error())
		return nil, http.StatusServiceUnavailable
	}
	return s.o.TokenCases, 0
}

// addPortalToken makes a token of the tenant (scope read or book) for
// its admin, as the API's token route does, and shows its secret once.
func (s *Server) addPortalToken(p *portalPage) int {
	tc, code := s.portalTokens(p)
	if tc == nil {
		return code
	}
	args := map[string]string{"tenant": p.tok.Tenant, "name": p.r.PostFormValue("name"), "scope": p.r.PostFormValue("scope"), "expires": p.r.PostFormValue("expires")}
	t, ps := token.Parse(args, s.now(), p.tok.Actor())
	if t.Scope == token.Admin {
		ps = append(ps, token.Problem{Field: "scope", Msg: "a tenant's token is read or book"})
	}
	if len(ps) > 0 {
		s.message(p.w, http.StatusBadRequest, p.tok.Tenant, ps.Error())
		return http.StatusBadRequest
	}
	is, err := tc.Add(p.r.Context(), p.tok.Actor(), t)
	if err != nil {
		return s.refused(p, err)
	}
	s.o.Logger.Info("token added through the portal", "token", is.Token.Key(), "actor", p.tok.Actor())
	s.render(p.w, http.StatusCreated, "token", tokenPage{Tenant: p.tok.Tenant, Token: is.Token, Secret: is.Secret})
	return http.StatusCreated
}

// deletePortalToken revokes the tenant's token of the form's name.
func (s *Server) deletePortalToken(p *portalPage) int {
	tc, code := s.portalTokens(p)
	if tc == nil {
		return code
	}
	t, err := tc.Delete(p.r.Context(), p.tok.Actor(), p.tok.Tenant, p.r.PostFormValue("name"))
	if err != nil {
		return s.refused(p, err)
	}
	s.tokens.forget(t.Hash)
	http.Redirect(p.w, p.r, "/?"+url.Values{"tenant": {p.tok.Tenant}, "revoked": {t.Name}}.Encode()+"#tokens", http.StatusSeeOther)
	return http.StatusSeeOther
}
