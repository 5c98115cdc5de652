package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // TZ names resolve on hosts without zoneinfo too

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	bmetrics "github.com/gpubridge/gpubridge/bridge/reserve/metrics"
	"github.com/gpubridge/gpubridge/bridge/reserve/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerBookings adds the booking commands: add/modify/delete/show
// booking(s), show availability, find slot, add/delete/show maintenance,
// and project (the reconcile step onto Slurm reservations).
func registerBookings(a *App, root, show, add, modify, del *cobra.Command) {
	var local bool
	show.AddCommand(showBookingsCmd(a, &local), showAvailabilityCmd(a, &local), showMaintenanceCmd(a, &local))
	add.AddCommand(addBookingCmd(a, &local), addMaintenanceCmd(a, &local))
	modify.AddCommand(modifyBookingCmd(a, &local))
	del.AddCommand(deleteBookingCmd(a), deleteMaintenanceCmd(a))
	root.AddCommand(findCmd(a, &local), projectCmd(a))
}

// auditSummaries say in one line what an audit row of a kind changed (show
// audit); the tenants' own kind is summarised in tenant.go.
var auditSummaries = map[string]func(before, after *string) string{
	store.AuditBooking:     bookingAuditSummary,
	store.AuditMaintenance: maintenanceAuditSummary,
}

func bookingAuditSummary(before, after *string) string {
	var b, a reserve.Booking
	if before != nil {
		_ = json.Unmarshal([]byte(*before), &b)
	}
	if after != nil {
		_ = json.Unmarshal([]byte(*after), &a)
	}
	line := func(x reserve.Booking) string {
		s := fmt.Sprintf("%s %s %s..%s", x.Tenant, x.What(), reserve.FormatTime(x.Start, reserve.Zone{}, false), reserve.FormatTime(x.End, reserve.Zone{}, false))
		if x.Purpose != "" {
			s += fmt.Sprintf(" %q", x.Purpose)
		}
		return s
	}
	held := func(x reserve.Booking) string {
		if x.Held.IsZero() {
			return "no reservation"
		}
		return fmt.Sprintf("%s %d %s..%s", x.Held.Reservation, x.Held.Count, reserve.FormatTime(x.Held.Start, reserve.Zone{}, false), reserve.FormatTime(x.Held.End, reserve.Zone{}, false))
	}
	switch {
	case before == nil && after != nil:
		return line(a)
	case after == nil:
		return "removed"
	}
	var parts []string
	if l, m := line(b), line(a); l != m {
		parts = append(parts, l+" -> "+m)
	}
	if b.State != a.State {
		parts = append(parts, fmt.Sprintf("state %s -> %s", b.State, a.State))
	}
	if h, g := held(b), held(a); h != g {
		parts = append(parts, h+" -> "+g)
	}
	if a.Note != "" && a.Note != b.Note {
		parts = append(parts, "note: "+a.Note)
	}
	return strings.Join(parts, "; ")
}

func maintenanceAuditSummary(before, after *string) string {
	var m reserve.Maintenance
	s := after
	if s == nil {
		s = before
	}
	if s == nil || json.Unmarshal([]byte(*s), &m) != nil {
		return ""
	}
	line := fmt.Sprintf("%s %s..%s", strings.Join(m.Nodes, ","), reserve.FormatTime(m.Start, reserve.Zone{}, false), reserve.FormatTime(m.End, reserve.Zone{}, false))
	if m.Reason != "" {
		line += fmt.Sprintf(" %q", m.Reason)
	}
	if after == nil {
		return "removed " + line
	}
	return line
}

// localFlag adds --local: print times in $TZ instead of UTC.
func localFlag(cmd *cobra.Command, local *bool) *cobra.Command {
	cmd.Flags().BoolVar(local, "local", false, "print times in $TZ with their offset instead of UTC")
	return cmd
}

// adminZone is $TZ, the zone of times written without an offset.
func adminZone() (reserve.Zone, error) {
	tz := strings.TrimPrefix(os.Getenv("TZ"), ":")
	if tz == "" {
		return reserve.Zone{}, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return reserve.Zone{}, usagef("TZ=%q is not a time zone (%v); set e.g. TZ=Europe/Berlin, or TZ=UTC", tz, err)
	}
	return reserve.Zone{Name: tz, Location: loc}, nil
}

// bookingSettings turns the configuration into reserve.Settings.
func bookingSettings(c config.Config) reserve.Settings {
	b := c.Bookings
	p := b.DefaultPolicy
	return reserve.Settings{
		Prefix: b.ReservationPrefix, LeadTime: b.LeadTime.Duration, UnbookablePercent: b.UnbookablePercent, NodeClasses: b.NodeClasses,
		DefaultPolicy: reserve.Policy{MaxGPUs: p.MaxGPUs, MaxWindow: reserve.Span(p.MaxWindow.Duration), MinLead: reserve.Span(p.MinLead.Duration), MaxHorizon: reserve.Span(p.MaxHorizon.Duration)},
	}
}

// bookingTenants is reserve.Tenants over the tenant store: a tenant's
// booking policy (its spec's keys over the default) and its quota's GPU
// types.
type bookingTenants struct {
	st  *tenantstore.Store
	def reserve.Policy
}

func (t bookingTenants) BookingTenant(ctx context.Context, name string) (reserve.TenantInfo, error) {
	tn, err := t.st.Get(ctx, name)
	switch {
	case errors.Is(err, tenantstore.ErrNotFound):
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q: %w", name, reserve.ErrUnknownTenant)
	case err != nil:
		return reserve.TenantInfo{}, err
	case tn.IsDeleting():
		return reserve.TenantInfo{}, fmt.Errorf("tenant %q is being deleted: %w", name, reserve.ErrUnknownTenant)
	}
	types := tn.GPUs.Types()
	if types == nil {
		types = []string{}
	}
	return reserve.TenantInfo{Policy: tn.Bookings.Over(t.def), Own: !tn.Bookings.IsZero(), GPUTypes: types}, nil
}

// bookings wires the booking use cases: the store on gpubridge's database
// (for the cluster slurmrestd serves), slurmrestd, the tenant store.
func (a *App) bookings(ctx context.Context) (*reserve.Service, *slurmadapter.Adapter, *store.DB, error) {
	return a.bookingsWith(ctx, true)
}

// bookingStore wires the use cases that read or write the booking store
// only (show and cancel bookings, maintenance windows): slurmrestd is not
// contacted when the configuration names the cluster, so the command
// skips its negotiation. Its Service has no Source.
func (a *App) bookingStore(ctx context.Context) (*reserve.Service, *slurmadapter.Adapter, *store.DB, error) {
	return a.bookingsWith(ctx, false)
}

func (a *App) bookingsWith(ctx context.Context, needSlurm bool) (*reserve.Service, *slurmadapter.Adapter, *store.DB, error) {
	c, err := a.Config()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := bookingSettings(c).Validate().Err(); err != nil {
		return nil, nil, nil, err
	}
	// slurmrestd's negotiation and the database's connection and schema
	// check are both waits: they run at once (a command's wall time).
	if _, err := a.clients(); err != nil {
		return nil, nil, nil, err
	}
	type opened struct {
		db  *sqlx.DB
		err error
	}
	dbc := make(chan opened, 1)
	go func() {
		db, err := a.DB(ctx)
		dbc <- opened{db, err}
	}()
	var cl *slurmrest.Client
	cluster := c.Cluster
	if needSlurm || cluster == "" {
		cl, err = a.Slurm(ctx)
		if err == nil {
			cluster = cl.Cluster()
		}
	}
	o := <-dbc
	if err != nil {
		return nil, nil, nil, err
	}
	if o.err != nil {
		return nil, nil, nil, o.err
	}
	db := o.db
	st := store.New(db, cluster)
	set := bookingSettings(c)
	svc := &reserve.Service{Store: st, Tenants: bookingTenants{st: tenantstore.New(db), def: set.DefaultPolicy}, Settings: set}
	var src *slurmadapter.Adapter
	if needSlurm {
		src = slurmadapter.New(cl, c.Tenants.PoolPartition)
		svc.Source = src
	}
	return svc, src, st, nil
}

// bookingErr gives input problems exit status 2 and keeps refusals (1).
func bookingErr(err error) error {
	var ps reserve.Problems
	if errors.As(err, &ps) {
		return usageError{err}
	}
	if errors.Is(err, reserve.ErrNotFound) {
		return usageError{fmt.Errorf("%w (see `gpubridge show bookings`)", err)}
	}
	return err
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a booking id (a positive number; see `gpubridge show bookings`)", s)
	}
	return id, nil
}

const bookingArgsHelp = `Options (key=value):
  tenant=acme                  the tenant the booking is for
  gpus=h100:8                  N GPUs of a type or MIG profile, or
  nodes=dgx:2                  N whole nodes of a node class (config bookings.nodeClasses)
  start=TIME                   when the window starts
  end=TIME | duration=14d      when it ends (exclusive), or how long it lasts
  purpose="..."                what it is for (shown to the tenant)
TIME is RFC 3339 with an offset (2026-12-14T09:00:00+01:00, 2026-12-14T08:00Z),
now+DURATION (now+2d, now+90m), or a date and time without an offset, read in
$TZ (2026-12-14, 2026-12-14T09:00); daylight-saving gaps are refused, and an
ambiguous time needs an offset. Durations: w, d (24 hours), h, m, s. Times are
stored and printed in UTC (--local prints them in $TZ).`

func addBookingCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "booking tenant=NAME gpus=TYPE:N start=TIME end=TIME|duration=D [purpose=...]",
		Short: "Book GPUs (or whole nodes) for a tenant over a window; refused unless it fits at every instant",
		Long: `Book capacity for a tenant. Admission is atomic: the booking is stored only if
the sum of overlapping bookings stays within the pool's capacity at every
instant (across processes and daemon replicas). A refusal names the
conflicting bookings (the tenant's own in full, other tenants' as counts),
the shortfall per interval, and the next window of the same shape that fits.
The Slurm reservation (gpubridge-<id>) is made by ` + "`gpubridge project`" + ` (and the
daemon) bookings.leadTime before the start.

` + bookingArgsHelp + `

Example:
  gpubridge add booking tenant=acme gpus=h100:8 start=2026-12-14T00:00Z duration=14d purpose="pre-training"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: reserve.AddKeys})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("add booking takes key=value options only (got %q)", p.Names)
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			req, ps := reserve.ParseAdd(p.Where, time.Now(), zone)
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			if !a.immediate {
				b, err := svc.Check(ctx, actor(), req)
				if err != nil {
					return bookingErr(err)
				}
				if err := a.Confirm(describeBooking(" Adding booking", b, zone, *local)); err != nil {
					return err
				}
			}
			b, err := svc.Add(ctx, actor(), req)
			if err != nil {
				return bookingErr(err)
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: b})
			}
			fmt.Fprintf(a.out, "Booking %d added: %s for %s from %s to %s (%s). Its Slurm reservation %s is made %s before the start by `gpubridge project`.\n",
				b.ID, b.What(), b.Tenant, reserve.FormatTime(b.Start, zone, *local), reserve.FormatTime(b.End, zone, *local), b.StateAt(time.Now()),
				svc.Settings.ReservationName(b.ID), reserve.FormatDuration(svc.Settings.LeadTime))
			return nil
		},
	}
	return localFlag(cmd, local)
}

func describeBooking(title string, b reserve.Booking, zone reserve.Zone, local bool) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s\n  Tenant   = %s\n  GPUs     = %s\n  Start    = %s\n  End      = %s\n  Duration = %s\n",
		title, b.Tenant, b.What(), reserve.FormatTime(b.Start, zone, local), reserve.FormatTime(b.End, zone, local), reserve.FormatDuration(b.Duration()))
	if b.Purpose != "" {
		fmt.Fprintf(&s, "  Purpose  = %s\n", b.Purpose)
	}
	return s.String()
}

func modifyBookingCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "booking ID set end=TIME|duration=D|start=TIME|gpus=TYPE:N|purpose=...",
		Short: "Change a booking's window, count or purpose (growing or moving it is admitted like a new booking)",
		Long: `Change a booking. A change that takes more (a larger count, an earlier start,
a later end) is admitted atomically like a new booking; one that takes less
always succeeds. The GPU type or node class cannot change (delete the booking
and add a new one); an active booking's start cannot move. The Slurm
reservation follows at the next projection: times are changed in place, a new
count is delete + create, made only when no job runs inside (the tenant never
loses GPUs it holds; until then the booking shows why it waits).

Example:
  gpubridge modify booking 12 set end=2026-12-30T00:00Z`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{}, SetKeys: reserve.ModifyKeys})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) != 1 || len(p.Set) == 0 {
				return usagef("usage: gpubridge modify booking ID set key=value ...")
			}
			id, err := parseID(p.Names[0])
			if err != nil {
				return err
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			ch, ps := reserve.ParseChange(p.Set, time.Now(), zone)
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			cur, err := svc.Get(ctx, id)
			if err != nil {
				return bookingErr(err)
			}
			if !a.immediate {
				var b strings.Builder
				fmt.Fprintf(&b, " Modifying booking %d (%s, %s)\n", id, cur.Tenant, cur.What())
				for _, k := range reserve.ModifyKeys {
					if v, ok := p.Set[k]; ok {
						fmt.Fprintf(&b, "  %-8s -> %s\n", k, v)
					}
				}
				if err := a.Confirm(b.String()); err != nil {
					return err
				}
			}
			before, after, err := svc.Modify(ctx, actor(), id, ch)
			if err != nil {
				return bookingErr(err)
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: after})
			}
			if before.Start.Equal(after.Start) && before.End.Equal(after.End) && before.Count == after.Count && before.Purpose == after.Purpose {
				fmt.Fprintf(a.out, "Booking %d: nothing to change.\n", id)
				return nil
			}
			fmt.Fprintf(a.out, "Booking %d modified: %s from %s to %s (was %s from %s to %s). `gpubridge project` makes the change in Slurm.\n", id,
				after.What(), reserve.FormatTime(after.Start, zone, *local), reserve.FormatTime(after.End, zone, *local),
				before.What(), reserve.FormatTime(before.Start, zone, *local), reserve.FormatTime(before.End, zone, *local))
			return nil
		},
	}
	return localFlag(cmd, local)
}

func deleteBookingCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "booking ID ...",
		Short: "Cancel bookings; their Slurm reservations go at the next projection (once no job runs inside)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var ids []int64
			for _, s := range args {
				id, err := parseID(s)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			svc, _, _, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			var lines []string
			for _, id := range ids {
				b, err := svc.Get(ctx, id)
				if err != nil {
					return bookingErr(err)
				}
				lines = append(lines, b.Summary())
			}
			if err := a.Confirm(" Cancelling booking(s)\n  " + strings.Join(lines, "\n  ")); err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := svc.Cancel(ctx, actor(), id); err != nil {
					return bookingErr(err)
				}
				fmt.Fprintf(a.out, "Booking %d cancelled. `gpubridge project` deletes its Slurm reservation %s (it waits while jobs run inside).\n", id, svc.Settings.ReservationName(id))
			}
			return nil
		},
	}
}

// bookingColumns are show bookings' columns: key, title, value.
var bookingColumns = []struct {
	key, title string
	value      func(b reserve.Booking, zone reserve.Zone, local bool) string
}{
	{"id", "ID", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return strconv.FormatInt(b.ID, 10) }},
	{"tenant", "Tenant", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.Tenant }},
	{"gpus", "GPUs", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.What() }},
	{"start", "Start", func(b reserve.Booking, z reserve.Zone, l bool) string { return reserve.FormatTime(b.Start, z, l) }},
	{"end", "End", func(b reserve.Booking, z reserve.Zone, l bool) string { return reserve.FormatTime(b.End, z, l) }},
	{"duration", "Duration", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return reserve.FormatDuration(b.Duration()) }},
	{"state", "State", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return string(b.State) }},
	{"reservation", "Reservation", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.Held.Reservation }},
	{"held", "Held", func(b reserve.Booking, _ reserve.Zone, _ bool) string {
		if b.Held.IsZero() {
			return ""
		}
		return strconv.Itoa(b.Held.Count) + "@" + strings.Join(b.Held.Nodes, ",")
	}},
	{"purpose", "Purpose", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.Purpose }},
	{"note", "Note", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.Note }},
	{"createdby", "CreatedBy", func(b reserve.Booking, _ reserve.Zone, _ bool) string { return b.CreatedBy }},
	{"createdat", "CreatedAt", func(b reserve.Booking, z reserve.Zone, l bool) string {
		return reserve.FormatTime(b.CreatedAt.Truncate(time.Second), z, l)
	}},
}

func bookingColumnKeys() []string {
	var ks []string
	for _, c := range bookingColumns {
		ks = append(ks, c.key)
	}
	return ks
}

func showBookingsCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "bookings [ID ...] [tenant=NAME] [state=STATE,...] [from=TIME] [to=TIME] [format=id,tenant,...]",
		Aliases: []string{"booking"},
		Short:   "Show bookings with their present state and Slurm reservation",
		Long: "Show bookings. state= filters by " + statesList() + `;
from=/to= keep bookings whose window overlaps [from, to). format= picks the
columns: ` + strings.Join(bookingColumnKeys(), ",") + `. --json prints the full records.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"tenant", "state", "from", "to", "format"}})
			if err != nil {
				return usageError{err}
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			now := time.Now()
			lf := reserve.ListFilter{Tenant: p.Where["tenant"]}
			var ps reserve.Problems
			for _, s := range kv.List(p.Where["state"]) {
				if !slices.Contains(reserve.States, reserve.State(s)) {
					ps = append(ps, reserve.Problem{Field: "state", Msg: fmt.Sprintf("%q is not a state (%s)", s, statesList())})
				}
				lf.States = append(lf.States, reserve.State(s))
			}
			for k, dst := range map[string]*time.Time{"from": &lf.From, "to": &lf.To} {
				if v, ok := p.Where[k]; ok {
					t, err := reserve.ParseTime(v, now, zone)
					if err != nil {
						ps = append(ps, reserve.Problem{Field: k, Msg: err.Error()})
					}
					*dst = t
				}
			}
			cols := []string{"id", "tenant", "gpus", "start", "end", "state", "reservation", "purpose", "note"}
			if f, ok := p.Where["format"]; ok {
				cols = nil
				for _, c := range kv.List(strings.ToLower(f)) {
					if !slices.Contains(bookingColumnKeys(), c) {
						ps = append(ps, reserve.Problem{Field: "format", Msg: fmt.Sprintf("unknown column %q; columns: %s", c, strings.Join(bookingColumnKeys(), ","))})
					}
					cols = append(cols, c)
				}
			}
			var ids []int64
			for _, n := range p.Names {
				id, err := parseID(n)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			bs, err := svc.List(ctx, lf)
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				bs = slices.DeleteFunc(bs, func(b reserve.Booking) bool { return !slices.Contains(ids, b.ID) })
			}
			t := table.Table{Raw: bs}
			if bs == nil {
				t.Raw = []reserve.Booking{}
			}
			for _, c := range cols {
				for _, bc := range bookingColumns {
					if bc.key == c {
						t.Header, t.Keys = append(t.Header, bc.title), append(t.Keys, bc.key)
					}
				}
			}
			for _, b := range bs {
				var row []string
				for _, c := range cols {
					for _, bc := range bookingColumns {
						if bc.key == c {
							row = append(row, bc.value(b, zone, *local))
						}
					}
				}
				t.Rows = append(t.Rows, row)
			}
			return a.Print(t)
		},
	}
	return localFlag(cmd, local)
}

func statesList() string {
	var s []string
	for _, st := range reserve.States {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

func showAvailabilityCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "availability [type=h100,...] [from=TIME] [to=TIME] [step=1h|1d]",
		Short: "Show free and booked capacity per GPU type (and node class) over time",
		Long: `Show availability: for each step, the least capacity, the most booked and the
least free, per GPU type or MIG profile (type=node:CLASS for whole nodes).
Default: every type of the pool, from now for 14 days, step 1d (1h when the
window is 2 days or shorter). Capacity is the pool's GPUs less drained or down
nodes, maintenance windows, reservations gpubridge does not own and
bookings.unbookablePercent. Runs of equal steps are printed as one row;
--json prints every step.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"type", "from", "to", "step"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("show availability takes key=value options only (got %q)", p.Names)
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			now := time.Now().UTC().Truncate(time.Second)
			q := reserve.AvailabilityQuery{Types: kv.List(p.Where["type"]), From: now, To: now.Add(14 * 24 * time.Hour)}
			var ps reserve.Problems
			for k, dst := range map[string]*time.Time{"from": &q.From, "to": &q.To} {
				if v, ok := p.Where[k]; ok {
					t, err := reserve.ParseTime(v, now, zone)
					if err != nil {
						ps = append(ps, reserve.Problem{Field: k, Msg: err.Error()})
					}
					*dst = t
				}
			}
			if _, ok := p.Where["to"]; !ok {
				q.To = q.From.Add(14 * 24 * time.Hour)
			}
			q.Step = 24 * time.Hour
			if q.To.Sub(q.From) <= 48*time.Hour {
				q.Step = time.Hour
			}
			if v, ok := p.Where["step"]; ok {
				d, err := reserve.ParseDuration(v)
				if err != nil {
					ps = append(ps, reserve.Problem{Field: "step", Msg: err.Error()})
				}
				q.Step = d
			}
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			av, err := svc.Availability(ctx, q)
			if err != nil {
				return bookingErr(err)
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: av})
			}
			return a.printAvailability(av, zone, *local)
		},
	}
	return localFlag(cmd, local)
}

// barWidth is the most characters a capacity bar takes (80 columns).
const barWidth = 20

// printAvailability writes one row per run of equal steps: from, free,
// booked, capacity and a bar (# booked, . free, x unavailable, ! booked
// beyond capacity); a row holds until the next one's From. -P adds To and
// Pool and drops the bar.
func (a *App) printAvailability(av reserve.Availability, zone reserve.Zone, local bool) (err error) {
	// A year by the day is hundreds of rows: one write, not one per cell.
	w := bufio.NewWriter(a.out)
	defer func() {
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}()
	t := table.Table{Header: []string{"Type", "From", "Free", "Booked", "Cap", "Bar"}}
	if a.output.Parsable {
		t.Header = []string{"Type", "From", "To", "Free", "Booked", "Cap", "Pool"}
	}
	for _, r := range av.Resources {
		bs := r.Buckets
		name := r.Type
		if r.Resource != reserve.GPU(r.Type) {
			name = string(r.Resource)
		}
		for i := 0; i < len(bs); {
			j := i
			for j+1 < len(bs) && bs[j+1].Free == bs[i].Free && bs[j+1].Committed == bs[i].Committed && bs[j+1].Capacity == bs[i].Capacity {
				j++
			}
			free, booked, cp := strconv.Itoa(max(bs[i].Free, 0)), strconv.Itoa(bs[i].Committed), strconv.Itoa(bs[i].Capacity)
			if a.output.Parsable {
				t.Rows = append(t.Rows, []string{name, reserve.FormatTime(bs[i].From, zone, local), reserve.FormatTime(bs[j].To, zone, local), free, booked, cp, strconv.Itoa(r.Pool)})
			} else {
				t.Rows = append(t.Rows, []string{name, reserve.FormatTime(bs[i].From, zone, local), free, booked, cp, bar(r.Pool, bs[i])})
			}
			i = j + 1
		}
	}
	if err := table.Write(w, a.output, t); err != nil || a.output.Parsable {
		return err
	}
	var pools []string
	for _, r := range av.Resources {
		pools = append(pools, fmt.Sprintf("%s %d", strings.TrimPrefix(string(r.Resource), "gpu:"), r.Pool))
	}
	fmt.Fprintf(w, "Each row holds until the next row's From; the last until %s.\n", reserve.FormatTime(av.To, zone, local))
	fmt.Fprintf(w, "Per %s step: least free, most booked. Bar: # booked . free x unavailable ! over.\n", reserve.FormatDuration(time.Duration(av.Step)))
	fmt.Fprintf(w, "Pool: %s.\n", strings.Join(pools, ", "))
	var notes []string
	for _, r := range av.Resources {
		for _, red := range r.Reductions {
			w := "always"
			switch {
			case !red.Start.IsZero() && !red.End.IsZero():
				w = reserve.FormatTime(red.Start, zone, local) + ".." + reserve.FormatTime(red.End, zone, local)
			case !red.Start.IsZero():
				w = "from " + reserve.FormatTime(red.Start, zone, local)
			case !red.End.IsZero():
				w = "until " + reserve.FormatTime(red.End, zone, local)
			}
			notes = append(notes, fmt.Sprintf("  %s -%d: %s (%s)", r.Type, red.Count, red.Reason, w))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "Capacity reduced by:\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}

// bar draws a bucket at one character per ceil(pool/barWidth) units.
func bar(pool int, b reserve.Bucket) string {
	if pool <= 0 {
		return ""
	}
	per := (pool + barWidth - 1) / barWidth
	cells := (pool + per - 1) / per
	booked := (b.Committed + per - 1) / per
	unavail := (pool - b.Capacity) / per
	var s strings.Builder
	for i := 0; i < cells; i++ {
		switch {
		case i < min(booked, cells):
			if b.Committed > b.Capacity && i >= cells-unavail {
				s.WriteByte('!')
			} else {
				s.WriteByte('#')
			}
		case i >= cells-unavail:
			s.WriteByte('x')
		default:
			s.WriteByte('.')
		}
	}
	return s.String()
}

func findCmd(a *App, local *bool) *cobra.Command {
	find := &cobra.Command{
		Use:   "find <slot> ...",
		Short: "Find things (slot: the earliest windows that fit)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("find needs an entity: slot")
		},
	}
	slot := &cobra.Command{
		Use:   "slot type=TYPE count=N duration=D [after=TIME] [tenant=NAME] [limit=3]",
		Short: "Show the earliest windows of a shape that fit (type=h100 count=8 duration=14d)",
		Long: `Find the earliest windows of count GPUs of a type (type=node:CLASS for whole
nodes) lasting duration, starting at or after after= (default now). Each window
is a range of starts: any start from Start to LatestStart fits (an empty
LatestStart: any later start fits too, up to the booking horizon). tenant=
applies that tenant's policy (lead time, horizon).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"type", "count", "duration", "after", "tenant", "limit"}})
			if err != nil {
				return usageError{err}
			}
			if len(p.Names) > 0 {
				return usagef("find slot takes key=value options only (got %q)", p.Names)
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			q := reserve.SlotQuery{Type: p.Where["type"], Tenant: p.Where["tenant"], Limit: 3}
			var ps reserve.Problems
			if v, ok := p.Where["count"]; ok {
				if q.Count, err = strconv.Atoi(v); err != nil {
					ps = append(ps, reserve.Problem{Field: "count", Msg: fmt.Sprintf("%q is not a whole number", v)})
				}
			} else {
				ps = append(ps, reserve.Problem{Field: "count", Msg: "required: how many GPUs (or nodes)"})
			}
			if v, ok := p.Where["duration"]; ok {
				if q.Duration, err = reserve.ParseDuration(v); err != nil {
					ps = append(ps, reserve.Problem{Field: "duration", Msg: err.Error()})
				}
			}
			if v, ok := p.Where["after"]; ok {
				if q.After, err = reserve.ParseTime(v, time.Now(), zone); err != nil {
					ps = append(ps, reserve.Problem{Field: "after", Msg: err.Error()})
				}
			}
			if v, ok := p.Where["limit"]; ok {
				if q.Limit, err = strconv.Atoi(v); err != nil || q.Limit < 1 || q.Limit > 100 {
					ps = append(ps, reserve.Problem{Field: "limit", Msg: fmt.Sprintf("%q is not a number from 1 to 100", v)})
				}
			}
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			slots, err := svc.FindSlots(ctx, q)
			if err != nil {
				return bookingErr(err)
			}
			if slots == nil {
				slots = []reserve.Slot{}
			}
			t := table.Table{Header: []string{"Start", "End", "LatestStart"}, Keys: []string{"start", "end", "latestStart"}, Raw: slots}
			for _, s := range slots {
				t.Rows = append(t.Rows, []string{reserve.FormatTime(s.Start, zone, *local), reserve.FormatTime(s.End, zone, *local), reserve.FormatTime(s.Latest, zone, *local)})
			}
			if len(slots) == 0 && !a.output.JSON && !a.output.Parsable {
				fmt.Fprintf(a.out, "No window of %d %s for %s fits before the booking horizon.\n", q.Count, q.Type, reserve.FormatDuration(q.Duration))
				return nil
			}
			return a.Print(t)
		},
	}
	find.AddCommand(localFlag(slot, local))
	return find
}

func addMaintenanceCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "maintenance nodes=NODE,... start=TIME end=TIME|duration=D [reason=...]",
		Short: "Record a maintenance window: the nodes' GPUs cannot be booked in it",
		Long: `Record an admin maintenance window. The nodes' GPUs (and whole nodes) are taken
out of the bookable capacity for [start, end). Bookings that no longer fit are
listed: the window is recorded anyway (the admin's call) and they are shown at
risk. The window lives in gpubridge only; drain the nodes in Slurm as usual.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := kv.Parse(args, kv.Spec{Keys: []string{"nodes", "start", "end", "duration", "reason"}})
			if err != nil {
				return usageError{err}
			}
			zone, err := adminZone()
			if err != nil {
				return err
			}
			now := time.Now()
			m := reserve.Maintenance{Nodes: kv.List(p.Where["nodes"]), Reason: strings.TrimSpace(p.Where["reason"])}
			var ps reserve.Problems
			if v, ok := p.Where["start"]; ok {
				if m.Start, err = reserve.ParseTime(v, now, zone); err != nil {
					ps = append(ps, reserve.Problem{Field: "start", Msg: err.Error()})
				}
			} else {
				ps = append(ps, reserve.Problem{Field: "start", Msg: "required"})
			}
			e, hasE := p.Where["end"]
			d, hasD := p.Where["duration"]
			switch {
			case hasE == hasD:
				ps = append(ps, reserve.Problem{Field: "end", Msg: "give end= or duration= (one of them)"})
			case hasE:
				if m.End, err = reserve.ParseTime(e, now, zone); err != nil {
					ps = append(ps, reserve.Problem{Field: "end", Msg: err.Error()})
				}
			default:
				dur, err := reserve.ParseDuration(d)
				if err != nil {
					ps = append(ps, reserve.Problem{Field: "duration", Msg: err.Error()})
				}
				m.End = m.Start.Add(dur)
			}
			if len(ps) > 0 {
				return usageError{ps}
			}
			svc, _, _, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			if err := a.Confirm(fmt.Sprintf(" Adding maintenance\n  Nodes  = %s\n  Start  = %s\n  End    = %s\n  Reason = %s", strings.Join(m.Nodes, ","),
				reserve.FormatTime(m.Start, zone, *local), reserve.FormatTime(m.End, zone, *local), m.Reason)); err != nil {
				return err
			}
			m, hit, err := svc.AddMaintenance(ctx, actor(), m)
			if err != nil {
				return bookingErr(err)
			}
			fmt.Fprintf(a.out, "Maintenance %d added: %s from %s to %s.\n", m.ID, strings.Join(m.Nodes, ","), reserve.FormatTime(m.Start, zone, *local), reserve.FormatTime(m.End, zone, *local))
			for _, b := range hit {
				fmt.Fprintf(a.out, "  no longer fits: %s\n", b.Summary())
			}
			return nil
		},
	}
	return localFlag(cmd, local)
}

func deleteMaintenanceCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "maintenance ID",
		Short: "Remove a maintenance window",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usagef("%q is not a maintenance id (see `gpubridge show maintenance`)", args[0])
			}
			svc, _, _, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			if err := a.Confirm(fmt.Sprintf(" Deleting maintenance %d", id)); err != nil {
				return err
			}
			m, err := svc.DeleteMaintenance(ctx, actor(), id)
			if err != nil {
				return bookingErr(err)
			}
			fmt.Fprintf(a.out, "Maintenance %d (%s) deleted.\n", m.ID, strings.Join(m.Nodes, ","))
			return nil
		},
	}
}

func showMaintenanceCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "maintenance",
		Short: "Show the maintenance windows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			zone, err := adminZone()
			if err != nil {
				return err
			}
			svc, _, _, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			ms, err := svc.Maintenance(ctx)
			if err != nil {
				return err
			}
			if ms == nil {
				ms = []reserve.Maintenance{}
			}
			t := table.Table{Header: []string{"ID", "Nodes", "Start", "End", "Reason", "CreatedBy"}, Raw: ms}
			for _, m := range ms {
				t.Rows = append(t.Rows, []string{strconv.FormatInt(m.ID, 10), strings.Join(m.Nodes, ","), reserve.FormatTime(m.Start, zone, *local), reserve.FormatTime(m.End, zone, *local), m.Reason, m.CreatedBy})
			}
			return a.Print(t)
		},
	}
	return localFlag(cmd, local)
}

// projector is the booking projector for actor (the reconcile step the
// daemon schedules and `gpubridge project` runs).
func (a *App) projector(ctx context.Context, actor string) (*reserve.Projector, error) {
	svc, src, st, err := a.bookings(ctx)
	if err != nil {
		return nil, err
	}
	return &reserve.Projector{Store: st, Slurm: src, Settings: svc.Settings, Actor: actor}, nil
}

// bookingsJob is the daemon's projection of bookings onto Slurm
// reservations (wired in jobs.go under the writer lock), recording each
// run's report as metrics.
type bookingsJob struct {
	p   *reserve.Projector
	rec *bmetrics.Recorder
}

func (j bookingsJob) Name() string { return "bookings" }

func (j bookingsJob) Run(ctx context.Context) error {
	rep, err := j.p.Project(ctx)
	if j.rec != nil {
		j.rec.Observe(rep, err)
	}
	for _, b := range rep.AtRisk {
		j.p.Logger.Warn("booking at risk", "booking", b.ID, "tenant", b.Tenant, "gpus", b.What(), "why", b.Note)
	}
	return err
}

func projectCmd(a *App) *cobra.Command {
	var dry, allow bool
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Make Slurm's reservations match the bookings (what the daemon does on its schedule)",
		Long: `Project bookings onto Slurm: one reservation <bookings.reservationPrefix><id>
per booking (Accounts=<tenant>, TRES=gres/gpu:<type>=N or whole nodes,
IGNORE_JOBS, never OVERLAP), made bookings.leadTime before its start. Drift is
repaired: a reservation deleted or changed out of band is recreated or fixed;
one whose booking is cancelled or over is deleted once no job runs inside; an
orphan (no booking) is removed, unless the store holds no booking at all or
most of gpubridge's reservations are orphans (--allow-mass-delete). A booking
whose reservation sits on a down node is marked at-risk. Exit status 1 when an
action failed; Slurm refusing for now (jobs inside, no room) is shown and
retried at the next run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			p, err := a.projector(ctx, actor())
			if err != nil {
				return err
			}
			p.DryRun, p.AllowMassRemoval = dry, allow
			if !dry {
				// One writer at a time, like apply and the daemon.
				release, err := a.writerLockFor(ctx, "gpubridge project")
				if err != nil {
					return err
				}
				defer release()
			}
			if a.verbose {
				p.Logger = a.Logger().With("component", "bookings") // the actions are printed anyway
			}
			rep, perr := p.Project(ctx)
			if a.output.JSON {
				if err := a.Print(table.Table{Raw: rep}); err != nil {
					return err
				}
				return perr
			}
			for _, r := range rep.Actions {
				line := fmt.Sprintf("%s %s", r.Action, r.Outcome)
				if r.Error != "" {
					line += ": " + r.Error
				}
				fmt.Fprintln(a.out, line)
			}
			for _, b := range rep.AtRisk {
				fmt.Fprintf(a.out, "at risk: %s: %s\n", b.Summary(), b.Note)
			}
			if rep.KeptWhy != "" {
				fmt.Fprintf(a.out, "kept orphans %s: %s\n", strings.Join(rep.KeptOrphans, ","), rep.KeptWhy)
			}
			var counts []string
			for _, s := range reserve.States {
				if n := rep.States[s]; n > 0 {
					counts = append(counts, fmt.Sprintf("%d %s", n, s))
				}
			}
			verb := "Projection complete"
			if dry {
				verb = "Dry run (nothing changed)"
			}
			reads, writes := a.requests()
			fmt.Fprintf(a.out, "%s: %d action(s), %d failed; bookings: %s; slurmrestd requests: %d read(s), %d write(s).\n",
				verb, len(rep.Actions), rep.Failed(), orNone(strings.Join(counts, ", ")), reads, writes)
			var now []string
			for _, n := range rep.Now {
				line := fmt.Sprintf("%s %d/%d booked, %d free", strings.TrimPrefix(string(n.Resource), "gpu:"), n.Booked, n.Capacity, n.Free)
				if n.AtRisk > 0 {
					line += fmt.Sprintf(", %d at risk", n.AtRisk)
				}
				now = append(now, line)
			}
			if len(now) > 0 {
				fmt.Fprintf(a.out, "Now: %s.\n", strings.Join(now, "; "))
			}
			return perr
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "show what would change, change nothing")
	cmd.Flags().BoolVar(&allow, "allow-mass-delete", false, "remove orphan reservations even when the store looks empty or wrong")
	return cmd
}
