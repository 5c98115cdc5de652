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

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// The booking routes: list, add, get, modify, cancel, and the policy.

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

// listRequest reads the list route's query into the filter show bookings
// builds of its key=value arguments (of the path's tenant), and the most
// rows to answer.
func (s *Server) listRequest(q *req) (reserve.ListFilter, int, error) {
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
		return lf, 0, badRequest(ps)
	}
	slices.Sort(lf.States)
	lf.States = slices.Compact(lf.States)
	return lf, limit, nil
}

// listBookings lists the tenant's bookings through the booking use cases
// (Bookings.List, what show bookings runs), from the cache.
func (s *Server) listBookings(q *req) (int, any, error) {
	svc, err := s.readsOrUnavailable()
	if err != nil {
		return 0, nil, err
	}
	lf, limit, err := s.listRequest(q)
	if err != nil {
		return 0, nil, err
	}
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

// bookingFields reads a JSON object of strings: a booking's fields by
// the names of the CLI's key=value arguments (gpus=h100:2, start=now+1h,
// duration=2h, purpose=...), which the domain's parser reads
// (reserve.ParseAdd, reserve.ParseChange) so that every message is the
// CLI's.
func bookingFields(w http.ResponseWriter, r *http.Request, keys []string) (map[string]string, error) {
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

// addRequest reads the add route's body into the booking it asks for,
// of the path's tenant: the request add booking makes of its key=value
// arguments.
func (s *Server) addRequest(q *req) (reserve.Request, error) {
	keys := slices.DeleteFunc(slices.Clone(reserve.AddKeys), func(k string) bool { return k == "tenant" })
	fields, err := bookingFields(q.w, q.r, keys)
	if err != nil {
		return reserve.Request{}, err
	}
	fields["tenant"] = q.tenant
	r, ps := reserve.ParseAdd(fields, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		return reserve.Request{}, badRequest(ps)
	}
	return r, nil
}

// addBooking admits the booking of the body through the booking use
// cases (Bookings.Add, what add booking runs).
func (s *Server) addBooking(q *req) (int, any, error) {
	if s.o.Bookings == nil {
		return 0, nil, errUnavailable
	}
	r, err := s.addRequest(q)
	if err != nil {
		return 0, nil, err
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

// getBooking answers the path's booking (Bookings.Get).
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

// changeRequest reads the modify route's body into the change it asks
// for: the change modify booking makes of its arguments after `set`.
func (s *Server) changeRequest(q *req) (reserve.Change, error) {
	fields, err := bookingFields(q.w, q.r, reserve.ModifyKeys)
	if err != nil {
		return reserve.Change{}, err
	}
	if len(fields) == 0 {
		return reserve.Change{}, badRequest(reserve.Problems{{Field: "body", Msg: "nothing to change; give one of " + strings.Join(reserve.ModifyKeys, ", ")}})
	}
	ch, ps := reserve.ParseChange(fields, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		return reserve.Change{}, badRequest(ps)
	}
	return ch, nil
}

// modifyBooking changes the path's booking by the body through the
// booking use cases (Bookings.Modify, what modify booking runs).
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
	ch, err := s.changeRequest(q)
	if err != nil {
		return 0, nil, err
	}
	_, after, err := s.o.Bookings.Modify(q.r.Context(), q.tok.Actor(), b.ID, ch)
	s.writes.Add(1)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.view(after), nil
}

// cancelBooking cancels the path's booking through the booking use cases
// (Bookings.Cancel, what delete booking runs).
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
