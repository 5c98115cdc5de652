package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // TZ names resolve on hosts without zoneinfo too

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/setup"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
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
	store.AuditBooking:     view.BookingAudit,
	store.AuditMaintenance: view.MaintenanceAudit,
}

// localFlag adds --local: print times in $TZ instead of UTC.
func localFlag(cmd *cobra.Command, local *bool) *cobra.Command {
	cmd.Flags().BoolVar(local, "local", false, "print times in $TZ with their offset instead of UTC")
	return cmd
}

// adminTimes are $TZ, the zone of times written without an offset, and
// how the command prints times (--local).
func adminTimes(local bool) (view.Times, error) {
	zone, err := reserve.LoadZone(os.Getenv("TZ"))
	if err != nil {
		return view.Times{}, usageError{err}
	}
	return view.Times{Zone: zone, Local: local}, nil
}

// bookings wires the booking use cases (bridge/reserve/setup) on the
// App's clients: the store on gpubridge's database (for the cluster
// slurmrestd serves), slurmrestd, the tenant store.
func (a *App) bookings(ctx context.Context) (setup.Bookings, error) {
	return a.bookingsWith(ctx, true)
}

// bookingStore wires the use cases that read or write the booking store
// only (show and cancel bookings, maintenance windows): slurmrestd is not
// contacted when the configuration names the cluster, so the command
// skips its negotiation. Its Service has no Source.
func (a *App) bookingStore(ctx context.Context) (setup.Bookings, error) {
	return a.bookingsWith(ctx, false)
}

func (a *App) bookingsWith(ctx context.Context, needSlurm bool) (setup.Bookings, error) {
	c, err := a.Config()
	if err != nil {
		return setup.Bookings{}, err
	}
	if _, err := a.Clients(); err != nil {
		return setup.Bookings{}, err
	}
	bk, err := setup.Open(ctx, c, setup.Connections{DB: a.DB, Slurm: a.Slurm}, needSlurm)
	if err == nil {
		// Bookings' costs (a tenant's monthly spend limit) at the rate
		// card's booked tier (charge.go).
		if db, derr := a.DB(ctx); derr == nil {
			bk.Service.Coster = bookingCoster(ctx, db)
		}
	}
	return bk, err
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

// problems makes input problems a usage error (nil when there are none).
func problems(ps reserve.Problems) error {
	if len(ps) == 0 {
		return nil
	}
	return usageError{ps}
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%q is not a booking id (a positive number; see `gpubridge show bookings`)", s)
	}
	return id, nil
}

func parseIDs(ss []string) ([]int64, error) {
	var ids []int64
	for _, s := range ss {
		id, err := parseID(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// optionsOnly parses the key=value options of a command that takes no
// names.
func optionsOnly(what string, args []string, keys []string) (map[string]string, error) {
	p, err := kv.Parse(args, kv.Spec{Keys: keys})
	if err != nil {
		return nil, usageError{err}
	}
	if len(p.Names) > 0 {
		return nil, usagef("%s takes key=value options only (got %q)", what, p.Names)
	}
	return p.Where, nil
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
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			where, err := optionsOnly("add booking", args, reserve.AddKeys)
			if err != nil {
				return err
			}
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			req, ps := reserve.ParseAdd(where, time.Now(), z.Zone)
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			svc := bk.Service
			if !a.immediate {
				b, err := svc.Check(ctx, actor(), req)
				if err != nil {
					return bookingErr(err)
				}
				if err := a.Confirm(view.Describe(" Adding booking", b, z)); err != nil {
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
			_, err = fmt.Fprint(a.out, view.Added(b, svc.Settings, z, time.Now()))
			return err
		},
	}
	return localFlag(cmd, local)
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
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			ch, ps := reserve.ParseChange(p.Set, time.Now(), z.Zone)
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			cur, err := bk.Service.Get(ctx, id)
			if err != nil {
				return bookingErr(err)
			}
			if !a.immediate {
				if err := a.Confirm(view.ModifyPrompt(cur, p.Set)); err != nil {
					return err
				}
			}
			before, after, err := bk.Service.Modify(ctx, actor(), id, ch)
			if err != nil {
				return bookingErr(err)
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: after})
			}
			_, err = fmt.Fprint(a.out, view.Modified(id, before, after, z))
			return err
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
			ids, err := parseIDs(args)
			if err != nil {
				return err
			}
			bk, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			var bs []reserve.Booking
			for _, id := range ids {
				b, err := bk.Service.Get(ctx, id)
				if err != nil {
					return bookingErr(err)
				}
				bs = append(bs, b)
			}
			if err := a.Confirm(view.CancelPrompt(bs)); err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := bk.Service.Cancel(ctx, actor(), id); err != nil {
					return bookingErr(err)
				}
				fmt.Fprint(a.out, view.Cancelled(id, bk.Service.Settings))
			}
			return nil
		},
	}
}

func showBookingsCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "bookings [ID ...] [tenant=NAME] [state=STATE,...] [from=TIME] [to=TIME] [format=id,tenant,...]",
		Aliases: []string{"booking"},
		Short:   "Show bookings with their present state and Slurm reservation",
		Long: "Show bookings. state= filters by " + reserve.StatesList() + `;
from=/to= keep bookings whose window overlaps [from, to). format= picks the
columns: ` + strings.Join(view.BookingColumns(), ",") + ` (default ` + strings.Join(view.DefaultBookingColumns, ",") + `),
and where COLUMN=VALUE filters the rows. --json prints the full records (of
the rows the filters keep).`,
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := a.showArgs(args, kv.Spec{Keys: reserve.ListKeys}, view.Bookings(nil, view.Times{}))
			if err != nil {
				return err
			}
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			lf, ps := reserve.ParseList(p.Where, time.Now(), z.Zone)
			ids, err := parseIDs(p.Names)
			if err != nil {
				return err
			}
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			bs, err := bk.Service.List(ctx, lf)
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				bs = slices.DeleteFunc(bs, func(b reserve.Booking) bool { return !slices.Contains(ids, b.ID) })
			}
			switch {
			case a.output.JSON:
				a.output.Format = nil // the full records, where filters pick which
			case a.output.Format == nil:
				a.output.Format = view.DefaultBookingColumns
			}
			return a.Print(view.Bookings(bs, z))
		},
	}
	return localFlag(cmd, local)
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
			p, err := a.showArgs(args, kv.Spec{Keys: reserve.AvailabilityKeys}, view.AvailabilityColumns()...)
			if err != nil {
				return err
			}
			if len(p.Names) > 0 {
				return usagef("show availability takes key=value options only (got %q)", p.Names)
			}
			if a.output.JSON && (p.Format != nil || p.Filters != nil) {
				return usagef("show availability --json prints one object (every step of every type): format= and where filters apply to its table only")
			}
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			q, ps := reserve.ParseAvailability(p.Where, time.Now(), z.Zone)
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			av, err := bk.Service.Availability(ctx, q)
			if err != nil {
				return bookingErr(err)
			}
			if a.output.JSON {
				return a.Print(table.Table{Raw: av})
			}
			// A year by the day is hundreds of rows: one write, not one per cell.
			return a.buffered(func() error {
				if err := a.Print(view.Availability(av, z, a.output.Parsable)); err != nil || a.output.Parsable {
					return err
				}
				_, err := fmt.Fprint(a.out, view.AvailabilityNotes(av, z))
				return err
			})
		},
	}
	return localFlag(cmd, local)
}

// buffered runs print with the App's output buffered, flushed at the end.
func (a *App) buffered(print func() error) error {
	out := a.out
	w := bufio.NewWriter(out)
	a.out = w
	err := print()
	a.out = out
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
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
		ValidArgsFunction: completeTenants(a, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			where, err := optionsOnly("find slot", args, reserve.SlotKeys)
			if err != nil {
				return err
			}
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			q, ps := reserve.ParseSlotQuery(where, time.Now(), z.Zone)
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			slots, err := bk.Service.FindSlots(ctx, q)
			if err != nil {
				return bookingErr(err)
			}
			if len(slots) == 0 && !a.output.JSON && !a.output.Parsable {
				_, err = fmt.Fprint(a.out, view.NoSlot(q))
				return err
			}
			return a.Print(view.Slots(slots, z))
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
			p, err := kv.Parse(args, kv.Spec{Keys: reserve.MaintenanceKeys})
			if err != nil {
				return usageError{err}
			}
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			m, ps := reserve.ParseMaintenance(p.Where, time.Now(), z.Zone)
			if err := problems(ps); err != nil {
				return err
			}
			bk, err := a.bookings(ctx)
			if err != nil {
				return err
			}
			if err := a.Confirm(view.MaintenancePrompt(m, z)); err != nil {
				return err
			}
			m, hit, err := bk.Service.AddMaintenance(ctx, actor(), m)
			if err != nil {
				return bookingErr(err)
			}
			_, err = fmt.Fprint(a.out, view.MaintenanceAdded(m, hit, z))
			return err
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
			bk, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			if err := a.Confirm(fmt.Sprintf(" Deleting maintenance %d", id)); err != nil {
				return err
			}
			m, err := bk.Service.DeleteMaintenance(ctx, actor(), id)
			if err != nil {
				return bookingErr(err)
			}
			_, err = fmt.Fprint(a.out, view.MaintenanceDeleted(m))
			return err
		},
	}
}

func showMaintenanceCmd(a *App, local *bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "maintenance [where COL=VALUE ...] [format=COL,...]",
		Short: "Show the maintenance windows",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.noNames(args, view.Maintenance(nil, view.Times{})); err != nil {
				return err
			}
			ctx := cmd.Context()
			z, err := adminTimes(*local)
			if err != nil {
				return err
			}
			bk, err := a.bookingStore(ctx)
			if err != nil {
				return err
			}
			ms, err := bk.Service.Maintenance(ctx)
			if err != nil {
				return err
			}
			return a.Print(view.Maintenance(ms, z))
		},
	}
	return localFlag(cmd, local)
}

// projector is the booking projector for actor (the reconcile step the
// daemon schedules and `gpubridge project` runs).
func (a *App) projector(ctx context.Context, actor string) (*reserve.Projector, error) {
	bk, err := a.bookings(ctx)
	if err != nil {
		return nil, err
	}
	return bk.Projector(actor), nil
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
				release, err := a.WriterLockFor(ctx, "gpubridge project")
				if err != nil {
					return err
				}
				defer release()
			}
			if a.Verbose {
				p.Logger = a.Logger().With("component", "bookings") // the actions are printed anyway
			}
			rep, perr := p.Project(ctx)
			if a.output.JSON {
				if err := a.Print(table.Table{Raw: rep}); err != nil {
					return err
				}
				return perr
			}
			reads, writes := a.Requests()
			if _, err := fmt.Fprint(a.out, view.ProjectReport(rep, dry, view.Requests{Reads: reads, Writes: writes})); err != nil {
				return err
			}
			return perr
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "show what would change, change nothing")
	cmd.Flags().BoolVar(&allow, "allow-mass-delete", false, "remove orphan reservations even when the store looks empty or wrong")
	return cmd
}
