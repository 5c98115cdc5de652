package reserve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Service is the booking use cases: what the CLI and the tenant API call.
// Each method reads the cluster once (Source), checks the input, and makes
// its change in one Store.Atomic transaction.
type Service struct {
	Store    Store
	Source   Source
	Tenants  Tenants
	Settings Settings
	// Coster prices bookings for monthly spend limits; nil when no booked
	// rate is known (a spend limit then refuses).
	Coster Coster
	// Pricing, when set, gives the Coster of each admission that a spend
	// limit prices (the rate card in force then) in place of Coster; nil
	// from it: no booked rate is known. Its error fails the admission.
	Pricing func(ctx context.Context) (Coster, error)
	// Now is the clock; default time.Now.
	Now func() time.Time
	// SearchHorizon bounds how far ahead next-available windows and find
	// slot look when the policy sets no horizon; default 2 years.
	SearchHorizon time.Duration
}

// pastGrace is how far in the past a start may lie and still be taken as
// "now" (the time between parsing start=now and admitting it).
const pastGrace = time.Minute

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) horizon(p Policy) time.Duration {
	if p.MaxHorizon > 0 {
		return time.Duration(p.MaxHorizon)
	}
	if s.SearchHorizon > 0 {
		return s.SearchHorizon
	}
	return 2 * 365 * 24 * time.Hour
}

// policy returns the tenant's policy (or the default), or a problem.
func (s *Service) policy(ctx context.Context, tenant string, ps *Problems) (Policy, error) {
	p, _, err := s.tenant(ctx, tenant, ps)
	return p, err
}

// tenant returns the tenant's policy (or the default) and the GPU types
// its jobs may request (nil: not known), or a problem.
func (s *Service) tenant(ctx context.Context, tenant string, ps *Problems) (Policy, []string, error) {
	if tenant == "" {
		return Policy{}, nil, nil
	}
	info, err := s.Tenants.BookingTenant(ctx, tenant)
	switch {
	case errors.Is(err, ErrUnknownTenant):
		ps.Add("tenant", "%v (see `gpubridge show tenants`)", err)
		return Policy{}, nil, nil
	case err != nil:
		return Policy{}, nil, fmt.Errorf("read tenant %q: %w", tenant, err)
	}
	return effective(s.Settings.DefaultPolicy, info), info.GPUTypes, nil
}

// effective is the policy that binds a tenant: its own (or the default),
// and, where that sets no maxGPUs, its quota per type: a tenant may have
// booked at once at most what it may run.
func effective(def Policy, info TenantInfo) Policy {
	p := def
	if info.Own {
		p = info.Policy
	}
	if p.MaxGPUs == nil && info.Quota != nil {
		p.MaxGPUs, p.MaxGPUsFromQuota = maps.Clone(info.Quota), true
	}
	return p
}

// Policy returns the booking policy that binds tenant: what it may book
// (show it to the tenant). An unknown tenant is a Problems.
func (s *Service) Policy(ctx context.Context, tenant string) (Policy, error) {
	var ps Problems
	if tenant == "" {
		ps.Add("tenant", "required: the tenant whose booking policy to show (tenant=acme)")
		return Policy{}, ps
	}
	p, err := s.policy(ctx, tenant, &ps)
	if err != nil {
		return Policy{}, err
	}
	if len(ps) > 0 {
		return Policy{}, ps
	}
	return p, nil
}

// checkUsable refuses a booking of GPU types the tenant's jobs may not
// request: the job_submit guard refuses GPU types outside a tenant's
// quota, inside its bookings too, so such a booking could not be used.
func (s *Service) checkUsable(b Booking, types []string, inv Inventory, f Fields, ps *Problems) {
	if types == nil {
		return
	}
	var need []string
	if b.Kind == KindNode {
		for t := range s.Settings.classPerNode(inv, b.NodeClass) {
			need = append(need, t)
		}
	} else if b.GPUType != "" {
		need = []string{b.GPUType}
	}
	slices.Sort(need)
	var missing []string
	for _, t := range need {
		if !slices.Contains(types, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return
	}
	have := "none"
	if len(types) > 0 {
		have = strings.Join(types, ", ")
	}
	ps.Add(f.GPUs, "tenant %s's jobs may request only the GPU types of its quota (%s), so they could not use booked %s; add %s to its quota first (`gpubridge modify tenant %s set gpus=%s:0` is enough: jobs inside a booking do not count against the quota)",
		b.Tenant, have, strings.Join(missing, ", "), strings.Join(missing, ", "), b.Tenant, strings.Join(missing, ":0,"))
}

// checkAlike refuses to admit a node booking of a class whose nodes differ
// in their GPUs (mixedClass): it would be counted and charged per node as
// the largest of them. What a booking already holds stays; only an
// admission (a new booking, or a change that takes more) is refused.
func (s *Service) checkAlike(b Booking, inv Inventory, f Fields, ps *Problems) {
	if b.Kind != KindNode {
		return
	}
	if a, z := mixedClass(s.Settings.classNodes(inv, b.NodeClass)); a != "" {
		ps.Add(f.GPUs, "node class %s mixes nodes of different GPUs (%s; %s): a whole-node booking is counted and charged per node, so the nodes of a class must be alike; split the class in bookings.nodeClasses", b.NodeClass, a, z)
	}
}

// checkShape validates b against the cluster: the type or class exists
// in the pool, the count fits the pool, whole seconds, not in the past.
func (s *Service) checkShape(b Booking, inv Inventory, now time.Time, f Fields, ps *Problems) {
	switch b.Kind {
	case KindGPU:
		if b.GPUType == "" {
			break
		}
		total := inv.Total(b.GPUType)
		switch {
		case total == 0:
			ps.Add(f.GPUs, "the pool has no GPUs of type %q (types: %s)", b.GPUType, strings.Join(inv.Types(), ", "))
		case b.Count > total:
			ps.Add(f.GPUs, "%d %s is more than the pool holds (%d)", b.Count, b.GPUType, total)
		}
	case KindNode:
		if b.NodeClass == "" {
			break
		}
		nodes := s.Settings.classNodes(inv, b.NodeClass)
		switch {
		case len(s.Settings.NodeClasses[b.NodeClass]) == 0:
			ps.Add(f.GPUs, "no node class %q (classes: %s; config bookings.nodeClasses)", b.NodeClass, strings.Join(slices.Sorted(maps.Keys(s.Settings.NodeClasses)), ", "))
		case b.Count > len(nodes):
			ps.Add(f.GPUs, "%d node(s) of class %s is more than the pool holds (%d)", b.Count, b.NodeClass, len(nodes))
		}
	}
	if !b.Start.IsZero() && b.Start.Before(now.Add(-pastGrace)) {
		ps.Add(f.Start, "%s is in the past (now is %s); a booking starts now or later", FormatTime(b.Start, Zone{}, false), FormatTime(now, Zone{}, false))
	}
	if !b.End.IsZero() && !b.End.After(now) {
		ps.Add(f.End, "%s is in the past (now is %s)", FormatTime(b.End, Zone{}, false), FormatTime(now, Zone{}, false))
	}
	if b.Start.Nanosecond() != 0 || b.End.Nanosecond() != 0 {
		ps.Add(f.Start, "times have second resolution")
	}
}

// Add admits a booking atomically, or returns Problems (bad input, policy;
// errors.Is ErrInvalid) or a *Refusal (it does not fit; ErrNoCapacity).
func (s *Service) Add(ctx context.Context, actor string, r Request) (Booking, error) {
	return s.add(ctx, actor, r, false)
}

// Check is Add without storing: the booking as Add would store it (no id),
// or Add's error. Nothing is held between Check and Add, which checks
// again.
func (s *Service) Check(ctx context.Context, actor string, r Request) (Booking, error) {
	return s.add(ctx, actor, r, true)
}

// errDryRun rolls Check's transaction back.
var errDryRun = errors.New("dry run")

func (s *Service) add(ctx context.Context, actor string, r Request, dry bool) (Booking, error) {
	now := s.now()
	f := r.fields()
	b := Booking{Tenant: r.Tenant, Kind: r.Kind, GPUType: r.GPUType, NodeClass: r.NodeClass, Count: r.Count,
		Start: r.Start.UTC(), End: r.End.UTC(), Purpose: r.Purpose, State: StateRequested, CreatedBy: actor, CreatedAt: now, UpdatedAt: now}
	var ps Problems
	if b.Kind != KindGPU && b.Kind != KindNode {
		ps.Add(f.GPUs, "what to book: gpus=TYPE:COUNT or nodes=CLASS:COUNT")
	}
	if b.Count <= 0 {
		ps.Add(f.GPUs, "count %d: book at least 1", b.Count)
	}
	if b.Start.IsZero() || b.End.IsZero() || !b.End.After(b.Start) {
		ps.Add(f.End, "the window must end after it starts")
	}
	checkRange(&ps, f.Start, b.Start)
	if checkRange(&ps, f.End, b.End); len(ps) > 0 {
		return Booking{}, dedupe(ps) // before anything is read
	}
	inv, err := s.Source.Inventory(ctx)
	if err != nil {
		return Booking{}, fmt.Errorf("read the cluster: %w", err)
	}
	s.checkShape(b, inv, now, f, &ps)
	s.checkAlike(b, inv, f, &ps)
	if b.Tenant == "" {
		ps.Add("tenant", "required")
	}
	p, types, err := s.tenant(ctx, b.Tenant, &ps)
	if err != nil {
		return Booking{}, err
	}
	if len(ps) == 0 {
		s.checkUsable(b, types, inv, f, &ps)
	}
	if len(ps) > 0 {
		return Booking{}, dedupe(ps)
	}
	if b.Kind == KindNode {
		b.PerNode = s.Settings.PerNode(inv, b.NodeClass)
	}
	rs := s.Settings.Resources(b, inv)
	related := s.Settings.Related(rs, inv)
	// The transaction may run more than once (a conflict on Galera is
	// retried from the start): each attempt admits b as asked, and only the
	// attempt that commits sets stored.
	var stored Booking
	err = s.Store.Atomic(ctx, withTenantLock(rs, b.Tenant), func(tx Tx) error {
		ref, err := s.admit(ctx, tx, b, p, inv, now, related, f)
		if err != nil {
			return err
		}
		if ref != nil {
			return ref
		}
		if dry {
			return errDryRun
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("add booking: not stored, the request was given up: %w", err)
		}
		stored, err = tx.Insert(ctx, actor, b)
		return err
	})
	switch {
	case dry && errors.Is(err, errDryRun):
		return b, nil
	case err != nil:
		return Booking{}, err
	}
	return stored, nil
}

// admit runs the policy and capacity checks inside the transaction.
func (s *Service) admit(ctx context.Context, tx Tx, b Booking, p Policy, inv Inventory, now time.Time, related []Resource, f Fields) (*Refusal, error) {
	maint, err := tx.Maintenance(ctx)
	if err != nil {
		return nil, err
	}
	from, to := b.Start, b.End
	if !b.Held.IsZero() {
		from, to = b.Span()
	}
	others, err := tx.Bookings(ctx, Filter{Resources: related, From: from, To: to})
	if err != nil {
		return nil, err
	}
	var own []Booking
	coster := s.Coster
	if p.MonthlySpendLimit != nil {
		if s.Pricing != nil {
			if coster, err = s.Pricing(ctx); err != nil {
				return nil, fmt.Errorf("price the booking for the monthly spend limit: %w", err)
			}
		}
		// Whole months: the spend limit prices every booking of the tenant
		// in each month the window touches.
		own, err = tx.Bookings(ctx, Filter{Tenant: b.Tenant, From: monthOf(b.Start), To: monthOf(b.End).AddDate(0, 1, 0)})
		if err != nil {
			return nil, err
		}
	} else {
		for _, o := range others {
			if o.Tenant == b.Tenant {
				own = append(own, o)
			}
		}
	}
	if pps := s.Settings.CheckPolicy(p, b, own, inv, now, coster, f); len(pps) > 0 {
		return nil, dedupe(pps)
	}
	adm := Admission{Settings: s.Settings, Inventory: inv, Maintenance: maint, Now: now}
	ref := adm.Check(b, others)
	if ref == nil {
		return nil, nil
	}
	// The next window of the same shape: from the asked start (or the
	// earliest the policy allows) up to the policy's horizon; for a
	// tenant without one, up to the search horizon from that start (from
	// now, a start beyond the search horizon left nothing to search, and
	// the refusal said "none before" a time earlier than the asked start).
	start := b.Start
	if min := now.Add(time.Duration(p.MinLead)); start.Before(min) {
		start = min.Truncate(time.Second)
	}
	last := now.Add(s.horizon(p)).Add(-b.Duration())
	if p.MaxHorizon <= 0 {
		last = start.Add(s.horizon(p)).Add(-b.Duration())
	}
	wider, err := tx.Bookings(ctx, Filter{Resources: related, From: start, To: last.Add(b.Duration())})
	if err != nil {
		return nil, err
	}
	ref.Next = adm.NextWindows(b, wider, start, last, 1)
	ref.NextSearched = last
	return ref, nil
}

// dedupe drops repeated problems (the same field and message).
func dedupe(ps Problems) Problems {
	var out Problems
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Modify changes a booking's window, count or purpose, atomically. The GPU
// type or node class cannot change (cancel and book anew); an active
// booking's start cannot move.
//
// Everything it reads outside the store (the cluster, the tenant) is read
// before the transaction: no use case takes a second pooled connection
// while it holds one and its locks. Inside, the booking's row is read
// locked (Tx.Get) and written only over the version read (Tx.Update), so
// a cancel or another modify racing it is never lost: one of them waits
// for the other, and a change computed from a version that is no longer
// stored is refused (ErrChanged).
func (s *Service) Modify(ctx context.Context, actor string, id int64, c Change) (before, after Booking, err error) {
	now := s.now()
	f := c.Fields
	if f.Start == "" {
		f = DefaultFields
	}
	old, err := s.Store.Get(ctx, id)
	if err != nil {
		return Booking{}, Booking{}, err
	}
	if ps := changeRange(old, c, f); len(ps) > 0 {
		return Booking{}, Booking{}, ps
	}
	inv, err := s.Source.Inventory(ctx)
	if err != nil {
		return Booking{}, Booking{}, fmt.Errorf("read the cluster: %w", err)
	}
	var tps Problems
	p, err := s.policy(ctx, old.Tenant, &tps)
	if err != nil {
		return Booking{}, Booking{}, err
	}
	rs := s.Settings.Resources(old, inv)
	m := modification{s: s, read: old, actor: actor, id: id, c: c, f: f, now: now, inv: inv, policy: p, tenantProblems: tps, related: s.Settings.Related(rs, inv)}
	err = s.Store.Atomic(ctx, withTenantLock(rs, old.Tenant), func(tx Tx) error {
		var err error
		before, after, err = m.apply(ctx, tx)
		return err
	})
	if err != nil {
		return Booking{}, Booking{}, err
	}
	return before, after, nil
}

// changeRange refuses, before anything else is read, a change whose times
// fall outside what the store holds (MinTime, MaxTime), computed from the
// booking as first read.
func changeRange(old Booking, c Change, f Fields) Problems {
	var ps Problems
	start := old.Start
	if c.Start != nil {
		start = c.Start.UTC()
		checkRange(&ps, f.Start, start)
	}
	if c.End != nil {
		checkRange(&ps, f.End, c.End.UTC())
	}
	if c.Duration != nil && len(ps) == 0 {
		checkRange(&ps, f.End, start.Add(*c.Duration))
	}
	return ps
}

// withTenantLock adds the tenant's lock to the resources' locks: what a
// tenant's policy sums across resources (the monthly spend limit prices
// every type) is read and written under it, so two admissions of one
// tenant never both pass a limit that only one of them fits.
func withTenantLock(rs []Resource, tenant string) []Resource {
	if tenant == "" {
		return rs
	}
	out := append(slices.Clone(rs), Resource("tenant:"+tenant))
	slices.Sort(out)
	return slices.Compact(out)
}

// modification is one Modify's inputs, read before its transaction.
type modification struct {
	s              *Service
	read           Booking // the booking as read before the transaction
	actor          string
	id             int64
	c              Change
	f              Fields
	now            time.Time
	inv            Inventory
	policy         Policy
	tenantProblems Problems
	related        []Resource
}

// apply runs inside the transaction: it reads the booking locked, checks
// the change and re-admits what grows, and writes over the version read.
func (m modification) apply(ctx context.Context, tx Tx) (before, after Booking, err error) {
	s, f, now, inv, id := m.s, m.f, m.now, m.inv, m.id
	cur, err := tx.Get(ctx, id)
	if err != nil {
		return Booking{}, Booking{}, err
	}
	if err := changedSince(m.read, cur, now); err != nil {
		return cur, Booking{}, err
	}
	nb, ps := m.changed(cur)
	if len(ps) > 0 {
		return cur, Booking{}, dedupe(ps)
	}
	if len(m.tenantProblems) > 0 {
		return cur, Booking{}, m.tenantProblems
	}
	nb.UpdatedAt = now
	if nb.Start.Equal(cur.Start) && nb.End.Equal(cur.End) && nb.Count == cur.Count && nb.Purpose == cur.Purpose {
		return cur, cur, nil
	}
	// Growing or moving is admitted like a new booking; the stored row
	// is left out of the others, what Slurm holds for it is not.
	if nb.Count > cur.Count || nb.Start.Before(cur.Start) || nb.End.After(cur.End) {
		p := m.policy
		if nb.Start.Equal(cur.Start) {
			p.MinLead = 0 // the lead time binds a start that moves, not one that stays
		}
		if s.checkAlike(nb, inv, f, &ps); len(ps) > 0 {
			return cur, Booking{}, ps
		}
		if nb.Kind == KindNode {
			nb.PerNode = s.Settings.PerNode(inv, nb.NodeClass) // what this admission counts
		}
		ref, err := s.admit(ctx, tx, nb, p, inv, now, m.related, f)
		if err != nil {
			return cur, Booking{}, err
		}
		if ref != nil {
			return cur, Booking{}, ref
		}
	}
	if nb.Kind == KindNode && nb.PerNode == nil {
		// Stored before admission recorded the figure: any change
		// records what admission counts now (the charge needs it).
		nb.PerNode = s.Settings.PerNode(inv, nb.NodeClass)
	}
	if err := ctx.Err(); err != nil {
		return cur, Booking{}, fmt.Errorf("modify booking %d: not stored, the request was given up: %w", id, err)
	}
	if err := tx.Update(ctx, m.actor, "modify", nb); err != nil {
		return cur, Booking{}, err
	}
	nb.Version++
	return cur, nb, nil
}

// changed is cur with the change applied, and what is wrong with it.
func (m modification) changed(cur Booking) (Booking, Problems) {
	s, c, f, now, id := m.s, m.c, m.f, m.now, m.id
	var ps Problems
	switch st := cur.StateAt(now); st {
	case StateCancelled, StateEnded:
		ps.Add("id", "booking %d is %s; it cannot change", id, st)
		return cur, ps
	}
	nb := cur
	if c.Type != nil {
		name := cur.GPUType
		if cur.Kind == KindNode {
			name = cur.NodeClass
		}
		if *c.Type != name || (f.GPUs == "nodes") != (cur.Kind == KindNode) {
			ps.Add(f.GPUs, "booking %d holds %s; its type or class cannot change (delete it and add a new booking)", id, cur.What())
		}
	}
	if c.Count != nil {
		nb.Count = *c.Count
		if nb.Count <= 0 {
			ps.Add(f.GPUs, "count %d: book at least 1", nb.Count)
		}
	}
	if c.Start != nil {
		nb.Start = c.Start.UTC()
		if !now.Before(cur.Start) && !nb.Start.Equal(cur.Start) {
			ps.Add(f.Start, "booking %d started at %s; an active booking's start cannot move", id, FormatTime(cur.Start, Zone{}, false))
		}
	}
	if c.End != nil {
		nb.End = c.End.UTC()
	}
	if c.Duration != nil {
		nb.End = nb.Start.Add(*c.Duration)
	}
	if c.Purpose != nil {
		nb.Purpose = *c.Purpose
	}
	checkRange(&ps, f.End, nb.End)
	if !nb.End.After(nb.Start) {
		ps.Add(f.End, "%s is not after start %s: a window must end after it starts", FormatTime(nb.End, Zone{}, false), FormatTime(nb.Start, Zone{}, false))
	}
	shapeStart := nb
	if nb.Start.Equal(cur.Start) {
		shapeStart.Start = now.Truncate(time.Second) // an unchanged start is never "in the past"
	}
	s.checkShape(shapeStart, m.inv, now, f, &ps)
	return nb, ps
}

// changedSince refuses a change of a booking that another change made
// final (cancelled, or ended by a new end) after the request read it
// (read): the request was made on what it read, which no longer holds.
func changedSince(read, cur Booking, now time.Time) error {
	if read.Version == cur.Version {
		return nil
	}
	was, is := read.StateAt(now), cur.StateAt(now)
	if is == was || (is != StateCancelled && is != StateEnded) {
		return nil
	}
	by := ""
	if cur.CancelledBy != "" {
		by = " by " + cur.CancelledBy
	}
	return Changed{Problems: Problems{{Field: "id", Msg: fmt.Sprintf("booking %d changed since you read it: it is %s now (changed%s at %s); nothing was changed",
		cur.ID, is, by, FormatTime(cur.UpdatedAt, Zone{}, false))}}}
}

// Changed is the refusal of a change of a booking that changed since the
// request read it: it matches ErrChanged and, for front ends that know
// only input problems, is a Problems too (the tenant API answers 409 for
// ErrChanged, 400 for other problems; the CLI exits non-zero).
type Changed struct{ Problems Problems }

func (c Changed) Error() string   { return c.Problems.Error() }
func (c Changed) Unwrap() []error { return []error{c.Problems, ErrChanged} }

// Cancel cancels a booking. Its Slurm reservation is deleted by the next
// projection (which waits while jobs run inside); until then what Slurm
// holds still counts. The row is read locked and written over the version
// read: of two cancels at once, the second is refused (cancelled already).
func (s *Service) Cancel(ctx context.Context, actor string, id int64) (Booking, error) {
	now := s.now()
	read, err := s.Store.Get(ctx, id)
	if err != nil {
		return Booking{}, err
	}
	var out Booking
	err = s.Store.Atomic(ctx, nil, func(tx Tx) error {
		b, err := tx.Get(ctx, id)
		if err != nil {
			return err
		}
		if err := changedSince(read, b, now); err != nil {
			return err
		}
		switch st := b.StateAt(now); st {
		case StateCancelled, StateEnded:
			return Problems{{Field: "id", Msg: fmt.Sprintf("booking %d is %s already", id, st)}}
		}
		b.State, b.CancelledAt, b.CancelledBy, b.UpdatedAt = StateCancelled, now, actor, now
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cancel booking %d: not stored, the request was given up: %w", id, err)
		}
		if err := tx.Update(ctx, actor, "cancel", b); err != nil {
			return err
		}
		b.Version++
		out = b
		return nil
	})
	if err != nil {
		// out may hold an attempt that was rolled back (Atomic may run
		// fn more than once).
		return Booking{}, err
	}
	return out, nil
}

// ListFilter selects bookings to show.
type ListFilter struct {
	Tenant string
	States []State
	// From, To: bookings whose window overlaps [From, To).
	From, To time.Time
}

// List returns bookings with their present state (Booking.StateAt).
func (s *Service) List(ctx context.Context, lf ListFilter) ([]Booking, error) {
	now := s.now()
	bs, err := s.Store.List(ctx, Filter{Tenant: lf.Tenant})
	if err != nil {
		return nil, err
	}
	out := make([]Booking, 0, len(bs))
	for _, b := range bs {
		b.State = b.StateAt(now)
		if len(lf.States) > 0 && !slices.Contains(lf.States, b.State) {
			continue
		}
		if !lf.From.IsZero() && !b.End.After(lf.From) || !lf.To.IsZero() && !b.Start.Before(lf.To) {
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// Get returns one booking with its present state.
func (s *Service) Get(ctx context.Context, id int64) (Booking, error) {
	b, err := s.Store.Get(ctx, id)
	if err != nil {
		return Booking{}, err
	}
	b.State = b.StateAt(s.now())
	return b, nil
}

// Availability is free and booked capacity per resource over a window.
type Availability struct {
	From      time.Time              `json:"from"`
	To        time.Time              `json:"to"`
	Step      Span                   `json:"step"`
	Resources []ResourceAvailability `json:"resources"`
}

// ResourceAvailability is one resource's timeline.
type ResourceAvailability struct {
	Resource   Resource    `json:"resource"`
	Type       string      `json:"type"`
	Pool       int         `json:"pool"` // what the pool holds, before reductions
	Buckets    []Bucket    `json:"buckets"`
	Reductions []Reduction `json:"reductions,omitempty"`
}

// AvailabilityQuery asks for the timeline of some resources.
type AvailabilityQuery struct {
	// Types are GPU types or MIG profiles ("h100"), or node classes as
	// "node:dgx"; empty means every type of the pool and every class.
	Types    []string
	From, To time.Time
	Step     time.Duration
}

// Availability returns the timeline per resource: for each step, the
// least capacity, the most booked and the least free.
func (s *Service) Availability(ctx context.Context, q AvailabilityQuery) (Availability, error) {
	var ps Problems
	if !q.To.After(q.From) {
		ps.Add("to", "%s is not after from %s", FormatTime(q.To, Zone{}, false), FormatTime(q.From, Zone{}, false))
	}
	if q.Step <= 0 || q.Step%time.Second != 0 {
		ps.Add("step", "must be a positive whole number of seconds, e.g. 1h or 1d")
	} else if q.To.After(q.From) && q.To.Sub(q.From)/q.Step > 100_000 {
		ps.Add("step", "%s over %s is more than 100000 steps; use a longer step", FormatDuration(q.Step), FormatDuration(q.To.Sub(q.From)))
	}
	checkRange(&ps, "from", q.From)
	if checkRange(&ps, "to", q.To); len(ps) > 0 {
		return Availability{}, ps // before anything is read
	}
	inv, err := s.Source.Inventory(ctx)
	if err != nil {
		return Availability{}, fmt.Errorf("read the cluster: %w", err)
	}
	rs, err := s.resources(q.Types, inv, &ps)
	if err != nil {
		return Availability{}, err
	}
	if len(ps) > 0 {
		return Availability{}, ps
	}
	maint, err := s.Store.Maintenance(ctx)
	if err != nil {
		return Availability{}, err
	}
	bs, err := s.Store.List(ctx, Filter{Resources: s.Settings.Related(rs, inv), From: q.From, To: q.To})
	if err != nil {
		return Availability{}, err
	}
	adm := Admission{Settings: s.Settings, Inventory: inv, Maintenance: maint, Now: s.now()}
	// Node classes also need the calendars of their GPU types: a node is
	// free only when its GPUs are.
	all := slices.Clone(rs)
	for _, r := range rs {
		if k, c := r.Split(); k == KindNode {
			all = append(all, s.Settings.Resources(Booking{Kind: KindNode, NodeClass: c}, inv)...)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > len(rs) {
		if bs, err = s.Store.List(ctx, Filter{Resources: s.Settings.Related(all, inv), From: q.From, To: q.To}); err != nil {
			return Availability{}, err
		}
	}
	caps := adm.Capacities(bs)
	cals := adm.calendars(caps, all, bs)
	out := Availability{From: q.From, To: q.To, Step: Span(q.Step)}
	for _, r := range rs {
		k, name := r.Split()
		ra := ResourceAvailability{Resource: r, Type: name, Pool: caps[r].Total, Buckets: cals[r].Timeline(q.From, q.To, q.Step)}
		if k == KindNode {
			for t, per := range s.Settings.classPerNode(inv, name) {
				if per <= 0 {
					continue
				}
				for i, b := range cals[GPU(t)].Timeline(q.From, q.To, q.Step) {
					if whole := b.Free / per; whole < ra.Buckets[i].Free {
						ra.Buckets[i].Free = max(whole, min(b.Free, 0))
					}
				}
			}
		}
		for _, red := range caps[r].Reductions {
			if unix(red.Start) < q.To.Unix() && unixEnd(red.End) > q.From.Unix() {
				ra.Reductions = append(ra.Reductions, red)
			}
		}
		out.Resources = append(out.Resources, ra)
	}
	return out, nil
}

// resources turns type names into resources, checking they exist.
func (s *Service) resources(types []string, inv Inventory, ps *Problems) ([]Resource, error) {
	if len(types) == 0 {
		var rs []Resource
		for _, t := range inv.Types() {
			rs = append(rs, GPU(t))
		}
		for _, c := range slices.Sorted(maps.Keys(s.Settings.NodeClasses)) {
			rs = append(rs, NodeClass(c))
		}
		return rs, nil
	}
	var rs []Resource
	for _, t := range types {
		if c, ok := strings.CutPrefix(t, "node:"); ok {
			if _, known := s.Settings.NodeClasses[c]; !known {
				ps.Add("type", "no node class %q (config bookings.nodeClasses)", c)
				continue
			}
			rs = append(rs, NodeClass(c))
			continue
		}
		if inv.Total(t) == 0 {
			ps.Add("type", "the pool has no GPUs of type %q (types: %s)", t, strings.Join(inv.Types(), ", "))
			continue
		}
		rs = append(rs, GPU(t))
	}
	slices.Sort(rs)
	return slices.Compact(rs), nil
}

// SlotQuery asks for the earliest windows of a shape.
type SlotQuery struct {
	Type     string // GPU type, or node:CLASS
	Count    int
	Duration time.Duration
	After    time.Time // zero: now
	Tenant   string    // optional: apply the tenant's policy (lead time, horizon)
	Limit    int       // default 3
}

// FindSlots returns the earliest windows of q's shape that fit now.
func (s *Service) FindSlots(ctx context.Context, q SlotQuery) ([]Slot, error) {
	now := s.now()
	var ps Problems
	if q.Count <= 0 {
		ps.Add("count", "%d: ask for at least 1", q.Count)
	}
	if q.Duration <= 0 {
		ps.Add("duration", "required: how long the window lasts, e.g. 14d")
	}
	if q.Limit <= 0 {
		q.Limit = 3
	}
	after := q.After
	if after.IsZero() || after.Before(now) {
		after = now
	}
	checkRange(&ps, "after", q.After)
	if q.Duration > 0 {
		checkRange(&ps, "duration", after.Add(q.Duration))
	}
	if len(ps) > 0 {
		return nil, dedupe(ps) // before anything is read
	}
	inv, err := s.Source.Inventory(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the cluster: %w", err)
	}
	if q.Type == "" {
		ps.Add("type", "required: a GPU type (type=h100) or node class (type=node:dgx)")
	}
	probe := Booking{Tenant: q.Tenant, Kind: KindGPU, GPUType: q.Type, Count: q.Count, Start: after, End: after.Add(q.Duration)}
	if c, ok := strings.CutPrefix(q.Type, "node:"); ok {
		probe.Kind, probe.GPUType, probe.NodeClass = KindNode, "", c
	}
	if q.Type != "" {
		s.checkShape(Booking{Kind: probe.Kind, GPUType: probe.GPUType, NodeClass: probe.NodeClass, Count: q.Count}, inv, now, Fields{Start: "after", End: "duration", GPUs: "type"}, &ps)
	}
	p, err := s.policy(ctx, q.Tenant, &ps)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		return nil, dedupe(ps)
	}
	if lead := now.Add(time.Duration(p.MinLead)); after.Before(lead) {
		after = lead.Truncate(time.Second)
	}
	last := now.Add(s.horizon(p)).Add(-q.Duration)
	rs := s.Settings.Resources(probe, inv)
	maint, err := s.Store.Maintenance(ctx)
	if err != nil {
		return nil, err
	}
	bs, err := s.Store.List(ctx, Filter{Resources: s.Settings.Related(rs, inv), From: after, To: last.Add(q.Duration)})
	if err != nil {
		return nil, err
	}
	adm := Admission{Settings: s.Settings, Inventory: inv, Maintenance: maint, Now: now}
	return adm.NextWindows(probe, bs, after, last, q.Limit), nil
}

// AddMaintenance records a maintenance window on pool nodes and returns it
// with the bookings it puts at risk (those that no longer fit: the window
// is the admin's call, so it is recorded anyway, and the projector marks
// them).
func (s *Service) AddMaintenance(ctx context.Context, actor string, m Maintenance) (Maintenance, []Booking, error) {
	now := s.now()
	var ps Problems
	checkRange(&ps, "start", m.Start)
	if checkRange(&ps, "end", m.End); len(ps) > 0 {
		return Maintenance{}, nil, ps // before anything is read
	}
	inv, err := s.Source.Inventory(ctx)
	if err != nil {
		return Maintenance{}, nil, fmt.Errorf("read the cluster: %w", err)
	}
	if len(m.Nodes) == 0 {
		ps.Add("nodes", "required: the nodes under maintenance (nodes=gpu-a,gpu-b)")
	}
	var rs []Resource
	for _, n := range m.Nodes {
		nd, ok := inv.node(n)
		if !ok {
			var names []string
			for _, x := range inv.Nodes {
				names = append(names, x.Name)
			}
			ps.Add("nodes", "%q is not a node of the pool (nodes: %s)", n, strings.Join(names, ", "))
			continue
		}
		for t := range nd.GPUs {
			rs = append(rs, GPU(t))
		}
		for c, ns := range s.Settings.NodeClasses {
			if slices.Contains(ns, n) {
				rs = append(rs, NodeClass(c))
			}
		}
	}
	if m.Start.IsZero() || m.End.IsZero() || !m.End.After(m.Start) {
		ps.Add("end", "the window must end after it starts")
	} else if !m.End.After(now) {
		ps.Add("end", "%s is in the past", FormatTime(m.End, Zone{}, false))
	}
	checkPurpose(&ps, m.Reason)
	if len(ps) > 0 {
		for i := range ps {
			if ps[i].Field == "purpose" {
				ps[i].Field = "reason"
			}
		}
		return Maintenance{}, nil, dedupe(ps)
	}
	slices.Sort(rs)
	rs = slices.Compact(rs)
	m.CreatedBy, m.CreatedAt = actor, now
	// Atomic may run fn more than once (a conflict is run again from the
	// start): each attempt inserts m as asked, and what is returned is the
	// committed attempt's (one rolled back leaves an id that no row has).
	var stored Maintenance
	var hit []Booking
	err = s.Store.Atomic(ctx, rs, func(tx Tx) error {
		ins, err := tx.InsertMaintenance(ctx, actor, m)
		if err != nil {
			return err
		}
		stored = ins
		maint, err := tx.Maintenance(ctx)
		if err != nil {
			return err
		}
		bs, err := tx.Bookings(ctx, Filter{Resources: s.Settings.Related(rs, inv), From: m.Start, To: m.End})
		if err != nil {
			return err
		}
		hit = s.unfit(bs, inv, maint, now)
		return nil
	})
	if err != nil {
		return Maintenance{}, nil, err
	}
	return stored, hit, nil
}

// unfit returns the bookings that do not fit the capacity, taking them
// in start order (the earliest admitted keep their place).
func (s *Service) unfit(bs []Booking, inv Inventory, maint []Maintenance, now time.Time) []Booking {
	adm := Admission{Settings: s.Settings, Inventory: inv, Maintenance: maint, Now: now}
	sorted := slices.Clone(bs)
	slices.SortFunc(sorted, func(a, b Booking) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	var kept, out []Booking
	for _, b := range sorted {
		if b.Cancelled() || !b.End.After(now) {
			kept = append(kept, b)
			continue
		}
		if adm.Check(b, kept) != nil {
			out = append(out, b)
			continue
		}
		kept = append(kept, b)
	}
	return out
}

// DeleteMaintenance removes a maintenance window.
func (s *Service) DeleteMaintenance(ctx context.Context, actor string, id int64) (Maintenance, error) {
	var m Maintenance
	err := s.Store.Atomic(ctx, nil, func(tx Tx) error {
		var err error
		m, err = tx.DeleteMaintenance(ctx, actor, id)
		return err
	})
	if err != nil {
		return Maintenance{}, err
	}
	return m, nil
}

// Maintenance lists the maintenance windows.
func (s *Service) Maintenance(ctx context.Context) ([]Maintenance, error) {
	return s.Store.Maintenance(ctx)
}
