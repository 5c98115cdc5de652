package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Modifying and extending a booking in the portal: the form takes a new
// end (extend or shorten), a new GPU count and a purpose, shows the
// booking as it would be with its price next to the current one, and
// only on confirm runs the modify booking use case (Bookings.Modify) with
// the person as the actor. The service decides: its refusal (with the
// next free window) is shown as the CLI's.

// modifyForm is the form's values, as typed.
type modifyForm struct {
	End, Count, Purpose string
}

type modifyPage struct {
	navData
	Booking, After        reserve.Booking
	Form                  modifyForm
	Preview               bool
	PriceBefore, PriceNow string
	Terms                 string
}

func (s *Server) modifyRoutes(mux *http.ServeMux, cop *http.CrossOriginProtection) {
	mux.Handle("GET /modify", s.portalHandler("/modify", s.modifyFormPage))
	mux.Handle("POST /modify", cop.Handler(s.portalHandler("/modify", s.modify)))
}

// modifyFormPage shows the form for the id= booking of the team.
func (s *Server) modifyFormPage(p *portalPage) int {
	b, err := s.ownPortalBooking(p, p.r.URL.Query().Get("id"))
	if err != nil {
		return s.refused(p, err)
	}
	d := modifyPage{navData: navOf(p, "book"), Booking: b, Terms: s.terms(),
		Form:        modifyForm{End: reserve.FormatTime(b.End, reserve.Zone{}, false), Count: strconv.Itoa(b.Count), Purpose: b.Purpose},
		PriceBefore: s.bookingPrice(p.r, b)}
	s.render(p.w, http.StatusOK, "modify", d)
	return http.StatusOK
}

// bookingPrice is what b costs at the booked rate.
func (s *Server) bookingPrice(r *http.Request, b reserve.Booking) string {
	return s.price(r, b.GPUType, int64(b.Count)*int64(b.Duration()/time.Second), b.Start)
}

// modify reads the form into the change modify booking makes of its
// key=value arguments (only what differs from the booking); without
// confirm=yes it shows the booking after the change and both prices,
// with it the change is made.
func (s *Server) modify(p *portalPage) int {
	b, err := s.ownPortalBooking(p, p.r.PostFormValue("id"))
	if err != nil {
		return s.refused(p, err)
	}
	f := modifyForm{End: strings.TrimSpace(p.r.PostFormValue("end")), Count: strings.TrimSpace(p.r.PostFormValue("count")), Purpose: p.r.PostFormValue("purpose")}
	kv := map[string]string{}
	if f.End != "" && f.End != reserve.FormatTime(b.End, reserve.Zone{}, false) {
		kv["end"] = f.End
	}
	if f.Count != "" && f.Count != strconv.Itoa(b.Count) {
		kv["gpus"] = b.GPUType + ":" + f.Count
	}
	if f.Purpose != b.Purpose {
		kv["purpose"] = f.Purpose
	}
	ch, ps := reserve.ParseChange(kv, s.now(), reserve.Zone{})
	if len(ps) > 0 {
		s.message(p.w, http.StatusBadRequest, p.tok.Tenant, ps.Error())
		return http.StatusBadRequest
	}
	if p.r.PostFormValue("confirm") != "yes" {
		after := b
		if ch.End != nil {
			after.End = ch.End.UTC()
		}
		if ch.Count != nil {
			after.Count = *ch.Count
		}
		if ch.Purpose != nil {
			after.Purpose = *ch.Purpose
		}
		d := modifyPage{navData: navOf(p, "book"), Booking: b, After: after, Form: f, Preview: true, Terms: s.terms(),
			PriceBefore: s.bookingPrice(p.r, b), PriceNow: s.bookingPrice(p.r, after)}
		s.render(p.w, http.StatusOK, "modify", d)
		return http.StatusOK
	}
	_, after, err := s.o.Bookings.Modify(p.r.Context(), p.tok.Actor(), b.ID, ch)
	s.writes.Add(1)
	if err != nil {
		return s.refused(p, err)
	}
	s.o.Logger.Info("booking modified through the portal", "booking", after.ID, "tenant", after.Tenant, "actor", p.tok.Actor())
	http.Redirect(p.w, p.r, "/?"+url.Values{"tenant": {after.Tenant}, "modified": {strconv.FormatInt(after.ID, 10)}}.Encode(), http.StatusSeeOther)
	return http.StatusSeeOther
}
