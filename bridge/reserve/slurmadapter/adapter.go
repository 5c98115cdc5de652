package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Client is the part of the slurmrest client the adapter uses.
type Client interface {
	ListNodes(ctx context.Context) ([]slurmrest.Node, error)
	ListReservations(ctx context.Context) ([]slurmrest.Reservation, error)
	CreateReservation(ctx context.Context, s slurmrest.ReservationSpec) (string, error)
	UpdateReservations(ctx context.Context, specs []slurmrest.ReservationSpec) error
	DeleteReservation(ctx context.Context, name string) error
}

var _ Client = (*slurmrest.Client)(nil)

// Adapter is reserve.Slurm over slurmrestd.
type Adapter struct {
	c Client
	// Pool is the partition whose nodes make the bookable pool.
	Pool string
}

var _ reserve.Slurm = (*Adapter)(nil)

// New returns the adapter for the pool partition.
func New(c Client, pool string) *Adapter { return &Adapter{c: c, Pool: pool} }

// Slurm error numbers the port interprets (shared/notes/reservation-facts.md).
const (
	errnoBusy    = 2016 // Requested nodes are busy
	errnoOverlap = 2058 // Requested reservation overlaps with another reservation
	errnoInUse   = 2055 // Requested reservation is in use
)

// downStates are node states whose GPUs cannot be relied on.
var downStates = []string{"DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "FUTURE", "INVALID_REG", "INVAL"}

// Inventory reads the pool's nodes and every reservation (two GETs).
func (a *Adapter) Inventory(ctx context.Context) (reserve.Inventory, error) {
	// The two reads go out at once: a command's wall time is mostly waits.
	type resvs struct {
		rs  []slurmrest.Reservation
		err error
	}
	ch := make(chan resvs, 1)
	go func() {
		rs, err := a.c.ListReservations(ctx)
		ch <- resvs{rs, err}
	}()
	nodes, err := a.c.ListNodes(ctx)
	got := <-ch
	if err != nil {
		return reserve.Inventory{}, err
	}
	var inv reserve.Inventory
	for _, n := range nodes {
		if a.Pool != "" && !slices.Contains(n.Partitions, a.Pool) {
			continue
		}
		nd := reserve.Node{Name: n.Name, GPUs: map[string]int{}}
		for _, g := range n.GPUs() {
			if g.Type != "" && g.Total > 0 {
				nd.GPUs[g.Type] += int(g.Total)
			}
		}
		var bad []string
		for _, st := range n.State {
			if slices.Contains(downStates, strings.ToUpper(st)) {
				bad = append(bad, st)
			}
		}
		if len(bad) > 0 {
			nd.Down = strings.Join(n.State, "+")
			if n.Reason != "" {
				nd.Down += " (" + n.Reason + ")"
			}
		}
		inv.Nodes = append(inv.Nodes, nd)
	}
	rs, err := got.rs, got.err
	if err != nil {
		return reserve.Inventory{}, err
	}
	for _, r := range rs {
		res, err := reservation(r)
		if err != nil {
			return reserve.Inventory{}, err
		}
		inv.Reservations = append(inv.Reservations, res)
	}
	return inv, nil
}

// reservation turns a Slurm reservation into the port's view: typed GPUs
// from its TRES, the untyped count when there is no typed one, its nodes,
// and whether it holds them whole (no GPU in its TRES).
func reservation(r slurmrest.Reservation) (reserve.Reservation, error) {
	out := reserve.Reservation{Name: r.Name, Accounts: r.Accounts, Start: r.Start.UTC(), End: r.End.UTC(), Flags: r.Flags, GPUs: map[string]int{}}
	ts, err := slurmstr.ParseTRES(r.TRES)
	if err != nil {
		return out, fmt.Errorf("reservation %s: %w", r.Name, err)
	}
	untyped := 0
	for _, t := range ts {
		switch typ, ok := t.GPU(); {
		case !ok:
		case typ == "":
			untyped += int(t.Count)
		default:
			out.GPUs[typ] += int(t.Count)
		}
	}
	if len(out.GPUs) == 0 {
		out.UntypedGPUs = untyped
	}
	if out.Nodes, err = expandHostlist(r.Nodes); err != nil {
		return out, fmt.Errorf("reservation %s: %w", r.Name, err)
	}
	out.WholeNodes = len(out.Nodes) > 0 && len(out.GPUs) == 0 && untyped == 0
	return out, nil
}

func spec(r reserve.ReservationSpec) slurmrest.ReservationSpec {
	s := slurmrest.ReservationSpec{Name: r.Name, Accounts: r.Accounts, Nodes: r.Nodes, Start: r.Start, End: r.End, Flags: r.Flags}
	if r.GPUType != "" && r.Count > 0 {
		s.TRES = []slurmrest.TRES{slurmrest.GPU(r.GPUType, int64(r.Count))}
	}
	return s
}

// mapErr turns Slurm's refusals into the port's sentinels, keeping the text.
func mapErr(err error) error {
	var se *slurmrest.SlurmError
	if !errors.As(err, &se) {
		return err
	}
	switch {
	case se.HasNumber(errnoInUse):
		return fmt.Errorf("%w: %w", reserve.ErrInUse, err)
	case se.HasNumber(errnoBusy), se.HasNumber(errnoOverlap):
		return fmt.Errorf("%w: %w", reserve.ErrBusy, err)
	}
	return err
}

// CreateReservation creates a gpubridge reservation. Guard: a spec without
// IGNORE_JOBS, or with OVERLAP, is refused before sending.
func (a *Adapter) CreateReservation(ctx context.Context, r reserve.ReservationSpec) error {
	if err := checkFlags(r); err != nil {
		return err
	}
	if len(r.Nodes) == 0 && (r.GPUType == "" || r.Count <= 0) {
		return fmt.Errorf("create reservation %s: %w: neither GPUs nor nodes", r.Name, slurmrest.ErrInvalid)
	}
	_, err := a.c.CreateReservation(ctx, spec(r))
	return mapErr(err)
}

// UpdateReservation changes accounts, times and flags in place.
func (a *Adapter) UpdateReservation(ctx context.Context, r reserve.ReservationSpec) error {
	if err := checkFlags(r); err != nil {
		return err
	}
	s := spec(r)
	s.TRES, s.Nodes = nil, nil // Slurm cannot change them; never sent on update
	return mapErr(a.c.UpdateReservations(ctx, []slurmrest.ReservationSpec{s}))
}

func checkFlags(r reserve.ReservationSpec) error {
	if slices.Contains(r.Flags, "OVERLAP") || !slices.Contains(r.Flags, "IGNORE_JOBS") {
		return fmt.Errorf("reservation %s: %w: gpubridge's reservations always carry IGNORE_JOBS and never OVERLAP (flags %v)", r.Name, slurmrest.ErrInvalid, r.Flags)
	}
	return nil
}

// DeleteReservation deletes a reservation; a missing one is not an error.
func (a *Adapter) DeleteReservation(ctx context.Context, name string) error {
	err := a.c.DeleteReservation(ctx, name)
	if errors.Is(err, slurmrest.ErrNotFound) {
		return nil
	}
	return mapErr(err)
}

// expandHostlist expands the node list of a reservation
// (slurmstr.ExpandHostlist): "gpu-a,node[01-03,07],rack[1-2]n". slurmctld
// writes at most one bracket group per name; more is refused here rather
// than read as a product.
func expandHostlist(s string) ([]string, error) {
	for _, item := range slurmstr.SplitTop(s, '[', ']') {
		if strings.Count(item, "[") > 1 {
			return nil, fmt.Errorf("hostlist %q: want at most one [...] group per name", s)
		}
	}
	return slurmstr.ExpandHostlist(s)
}
