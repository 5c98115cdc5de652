package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Reservation is a slurmctld advance reservation.
type Reservation struct {
	Name      string
	Accounts  []string
	Users     []string
	Nodes     string // hostlist expression, e.g. gpu-a
	NodeCount int
	CoreCount int
	Partition string
	Start     time.Time
	End       time.Time
	Flags     []string
	TRES      string // e.g. cpu=8,gres/gpu:h100=4
	Features  string
}

// ReservationSpec creates or updates a reservation. On update, empty
// fields are left as they are.
type ReservationSpec struct {
	Name      string
	Accounts  []string
	Users     []string
	Nodes     []string // node names or hostlist expressions
	NodeCount int
	Partition string
	Start     time.Time
	// End or Duration (minutes precision) bounds the reservation.
	End      time.Time
	Duration time.Duration
	Flags    []string // e.g. IGNORE_JOBS, MAINT
	TRES     []TRES   // e.g. GPU("h100", 8)
	Comment  string
}

type wReservation struct {
	Name      string   `json:"name"`
	Accounts  string   `json:"accounts"`
	Users     string   `json:"users"`
	NodeList  string   `json:"node_list"`
	NodeCount int      `json:"node_count"`
	CoreCount int      `json:"core_count"`
	Partition string   `json:"partition"`
	StartTime *wNoVal  `json:"start_time"`
	EndTime   *wNoVal  `json:"end_time"`
	Flags     []string `json:"flags"`
	TRES      string   `json:"tres"`
	Features  string   `json:"features"`
}

func (w wReservation) reservation() Reservation {
	return Reservation{
		Name: w.Name, Accounts: splitList(w.Accounts), Users: splitList(w.Users), Nodes: w.NodeList,
		NodeCount: w.NodeCount, CoreCount: w.CoreCount, Partition: w.Partition,
		Start: w.StartTime.time(), End: w.EndTime.time(), Flags: w.Flags, TRES: w.TRES, Features: w.Features,
	}
}

type reservationsResp struct {
	envelope
	Reservations []wReservation `json:"reservations"`
}

// ListReservations returns every reservation (GET /slurm/{v}/reservations/).
func (c *Client) ListReservations(ctx context.Context) ([]Reservation, error) {
	var resp reservationsResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("reservations/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	out := make([]Reservation, 0, len(resp.Reservations))
	for _, w := range resp.Reservations {
		out = append(out, w.reservation())
	}
	return out, nil
}

// GetReservation returns one reservation; ErrNotFound when there is none.
// It reads the whole list: slurmrestd answers GET /reservation/{name} for
// a missing name with HTTP 200 and error 0 "No error".
func (c *Client) GetReservation(ctx context.Context, name string) (Reservation, error) {
	all, err := c.ListReservations(ctx)
	if err != nil {
		return Reservation{}, fmt.Errorf("get reservation %q: %w", name, err)
	}
	for _, r := range all {
		if r.Name == name {
			return r, nil
		}
	}
	return Reservation{}, fmt.Errorf("get reservation %q: %w", name, ErrNotFound)
}

type wReservationDesc struct {
	Name      string   `json:"name,omitempty"`
	Accounts  []string `json:"accounts,omitempty"`
	Users     []string `json:"users,omitempty"`
	NodeList  []string `json:"node_list,omitempty"`
	NodeCount *wNoVal  `json:"node_count,omitempty"`
	Partition string   `json:"partition,omitempty"`
	StartTime *wNoVal  `json:"start_time,omitempty"`
	EndTime   *wNoVal  `json:"end_time,omitempty"`
	Duration  *wNoVal  `json:"duration,omitempty"`
	Flags     []string `json:"flags,omitempty"`
	TRES      []wTRES  `json:"tres,omitempty"`
	Comment   string   `json:"comment,omitempty"`
}

func (s ReservationSpec) wire() (wReservationDesc, error) {
	d := wReservationDesc{
		Name: s.Name, Accounts: s.Accounts, Users: s.Users, NodeList: s.Nodes,
		Partition: s.Partition, Flags: s.Flags, Comment: s.Comment,
	}
	if s.NodeCount < 0 || s.Duration < 0 {
		return d, fmt.Errorf("%w: node count and duration must be >= 0", ErrInvalid)
	}
	if s.NodeCount > 0 {
		d.NodeCount = num(int64(s.NodeCount))
	}
	if !s.Start.IsZero() {
		d.StartTime = num(s.Start.Unix())
	}
	if !s.End.IsZero() {
		if !s.Start.IsZero() && !s.End.After(s.Start) {
			return d, fmt.Errorf("%w: reservation %q ends (%s) before it starts (%s)", ErrInvalid, s.Name, s.End.UTC().Format(time.RFC3339), s.Start.UTC().Format(time.RFC3339))
		}
		d.EndTime = num(s.End.Unix())
	}
	if s.Duration > 0 {
		if s.Duration%time.Minute != 0 {
			return d, fmt.Errorf("%w: reservation %q: duration %s is not whole minutes", ErrInvalid, s.Name, s.Duration)
		}
		d.Duration = num(int64(s.Duration / time.Minute))
	}
	tres, err := wireTRESList(s.TRES, nil, "TRES")
	if err != nil {
		return d, err
	}
	d.TRES = tres
	return d, nil
}

type reservationModResp struct {
	envelope
	Reservations []struct {
		Name string `json:"name"`
	} `json:"reservations"`
}

// CreateReservation creates a reservation (POST /slurm/{v}/reservation) and
// returns its name (Slurm picks one when s.Name is empty).
func (c *Client) CreateReservation(ctx context.Context, s ReservationSpec) (string, error) {
	d, err := s.wire()
	if err != nil {
		return "", fmt.Errorf("create reservation %q: %w", s.Name, err)
	}
	var resp reservationModResp
	if err := c.do(ctx, http.MethodPost, c.slurmPath("reservation"), nil, d, &resp); err != nil {
		return "", fmt.Errorf("create reservation %q: %w", s.Name, err)
	}
	name := s.Name
	if len(resp.Reservations) > 0 && resp.Reservations[0].Name != "" {
		name = resp.Reservations[0].Name
	}
	return name, nil
}

// UpdateReservations updates existing reservations in one request
// (POST /slurm/{v}/reservations/). Each spec needs a Name.
func (c *Client) UpdateReservations(ctx context.Context, specs []ReservationSpec) error {
	if len(specs) == 0 {
		return nil
	}
	body := struct {
		Reservations []wReservationDesc `json:"reservations"`
	}{}
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("update reservations: %w: a reservation has no name", ErrInvalid)
		}
		d, err := s.wire()
		if err != nil {
			return fmt.Errorf("update reservation %q: %w", s.Name, err)
		}
		body.Reservations = append(body.Reservations, d)
	}
	if err := c.do(ctx, http.MethodPost, c.slurmPath("reservations/"), nil, body, nil); err != nil {
		return fmt.Errorf("update reservations: %w", err)
	}
	return nil
}

// DeleteReservation deletes a reservation; ErrNotFound when there is none.
func (c *Client) DeleteReservation(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("delete reservation: %w: empty name", ErrInvalid)
	}
	if err := c.do(ctx, http.MethodDelete, c.slurmPath("reservation/%s", url.PathEscape(name)), nil, nil, nil); err != nil {
		return fmt.Errorf("delete reservation %q: %w", name, err)
	}
	return nil
}
