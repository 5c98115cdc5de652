package main

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/internal/app"
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

// localFlag adds --local: print times in $TZ instead of UTC.
func localFlag(cmd *cobra.Command, local *bool) *cobra.Command {
	cmd.Flags().BoolVar(local, "local", false, "print times in $TZ with their offset instead of UTC")
	return cmd
}

// confirmer is what the use cases ask before a change: nil with
// -i/--immediate (they then skip what only the question needs).
func (a *App) confirmer() func(string) error {
	if a.immediate {
		return nil
	}
	return a.Confirm
}

// bookingOptions parses the key=value options of a booking command that
// takes no names, and the times of --local (app.BookingTimes).
func (a *App) bookingOptions(what string, args []string, keys []string, local bool) (map[string]string, view.Times, error) {
	p, err := kv.Parse(args, kv.Spec{Keys: keys})
	if err != nil {
		return nil, view.Times{}, app.Input(err)
	}
	if len(p.Names) > 0 {
		return nil, view.Times{}, usagef("%s takes key=value options only (got %q)", what, p.Names)
	}
	z, err := app.BookingTimes(local)
	return p.Where, z, err
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
			where, z, err := a.bookingOptions("add booking", args, reserve.AddKeys, *local)
			if err != nil {
				return err
			}
			b, set, err := a.AddBooking(cmd.Context(), app.Actor(), where, z, a.confirmer())
			if err != nil {
				return err
			}
			return a.printText(b, view.Added(b, set, z, time.Now()))
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
			p, err := kv.Parse(args, kv.Spec{Keys: []string{}, SetKeys: reserve.ModifyKeys})
			if err != nil {
				return app.Input(err)
			}
			if len(p.Names) != 1 || len(p.Set) == 0 {
				return usagef("usage: gpubridge modify booking ID set key=value ...")
			}
			id, err := app.ParseBookingID(p.Names[0])
			if err != nil {
				return err
			}
			z, err := app.BookingTimes(*local)
			if err != nil {
				return err
			}
			before, after, err := a.ModifyBooking(cmd.Context(), app.Actor(), id, p.Set, z, a.confirmer())
			if err != nil {
				return err
			}
			return a.printText(after, view.Modified(id, before, after, z))
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
			ids, set, err := a.CancelBookings(cmd.Context(), app.Actor(), args, a.confirmer())
			for _, id := range ids {
				fmt.Fprint(a.out, view.Cancelled(id, set))
			}
			return err
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
			p, err := a.showArgs(args, kv.Spec{Keys: reserve.ListKeys}, view.Bookings(nil, view.Times{}))
			if err != nil {
				return err
			}
			z, err := app.BookingTimes(*local)
			if err != nil {
				return err
			}
			bs, err := a.ListBookings(cmd.Context(), p.Names, p.Where, z)
			if err != nil {
				return err
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
			z, err := app.BookingTimes(*local)
			if err != nil {
				return err
			}
			av, err := a.Availability(cmd.Context(), p.Where, z)
			if err != nil {
				return err
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
			where, z, err := a.bookingOptions("find slot", args, reserve.SlotKeys, *local)
			if err != nil {
				return err
			}
			q, slots, err := a.FindSlots(cmd.Context(), where, z)
			if err != nil {
				return err
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
			p, err := kv.Parse(args, kv.Spec{Keys: reserve.MaintenanceKeys})
			if err != nil {
				return app.Input(err)
			}
			z, err := app.BookingTimes(*local)
			if err != nil {
				return err
			}
			m, hit, err := a.AddMaintenance(cmd.Context(), app.Actor(), p.Where, z, a.confirmer())
			if err != nil {
				return err
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
			return says(a, view.MaintenanceDeleted)(a.DeleteMaintenance(cmd.Context(), app.Actor(), args[0], a.confirmer()))
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
			z, err := app.BookingTimes(*local)
			if err != nil {
				return err
			}
			ms, err := a.MaintenanceWindows(cmd.Context())
			if err != nil {
				return err
			}
			return a.Print(view.Maintenance(ms, z))
		},
	}
	return localFlag(cmd, local)
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
			rep, perr := a.Project(cmd.Context(), app.Projection{Actor: app.Actor(), DryRun: dry, AllowMassRemoval: allow, Log: a.Verbose})
			if rep == nil {
				return perr
			}
			reads, writes := a.Requests()
			if err := a.printText(rep, view.ProjectReport(*rep, dry, view.Requests{Reads: reads, Writes: writes})); err != nil {
				return err
			}
			return perr
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "show what would change, change nothing")
	cmd.Flags().BoolVar(&allow, "allow-mass-delete", false, "remove orphan reservations even when the store looks empty or wrong")
	return cmd
}
