package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// registerBookings adds the booking commands: add/modify/delete/show
// booking(s), show availability, find slot, add/delete/show maintenance,
// and project (the reconcile step onto Slurm reservations).
func registerBookings(a *App, root, show, add, modify, del *cobra.Command) {
	var local bool
	show.AddCommand(showBookingsCmd(a, &local), showAvailabilityCmd(a, &local), showMaintenanceCmd(a, &local), showBookingPolicyCmd(a))
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
	return localFlag(&cobra.Command{
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
		RunE: a.do(takes{Spec: kv.Spec{Keys: reserve.AddKeys}, names: noName, usage: "add booking takes key=value options only (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseAddBooking(p.Where, *local)
				if err != nil {
					return err
				}
				r.Actor, r.Confirm = app.Actor(), a.confirmer()
				return says(a, app.AddedBooking.Text)(a.AddBooking(ctx, r))
			}),
	}, local)
}

func modifyBookingCmd(a *App, local *bool) *cobra.Command {
	return localFlag(&cobra.Command{
		Use:   "booking ID|where id=ID set end=TIME|duration=D|start=TIME|gpus=TYPE:N|purpose=...|pernode=TYPE:N",
		Short: "Change a booking's window, count or purpose (growing or moving it is admitted like a new booking)",
		Long: `Change a booking. A change that takes more (a larger count, an earlier start,
a later end) is admitted atomically like a new booking; one that takes less
always succeeds. The GPU type or node class cannot change (delete the booking
and add a new one); an active booking's start cannot move. The Slurm
reservation follows at the next projection: times are changed in place, a new
count is delete + create, made only when no job runs inside (the tenant never
loses GPUs it holds; until then the booking shows why it waits).

A whole-node booking stored before gpubridge recorded the GPUs per node of
its class (before migration 00480) is not charged until it has them:
set pernode=TYPE:COUNT[,...] records them, given alone, also once the
booking has ended; a figure already recorded is never rewritten.

Examples:
  gpubridge modify booking 12 set end=2026-12-30T00:00Z
  gpubridge modify booking where id=12 set end=2026-12-30T00:00Z
  gpubridge modify booking 7 set pernode=h100:8`,
		Args: cobra.MinimumNArgs(2),
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{}, SetKeys: append(slices.Clone(reserve.ModifyKeys), reserve.PerNodeKey)}, names: oneName, usage: "usage: gpubridge modify booking ID set key=value ... (or where id=ID set key=value ...)", whereName: "id"},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseModifyBooking(p.Names[0], p.Set, *local)
				if err != nil {
					return err
				}
				r.Actor, r.Confirm = app.Actor(), a.confirmer()
				return says(a, app.ModifiedBooking.Text)(a.ModifyBooking(ctx, r))
			}),
	}, local)
}

func deleteBookingCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "booking ID ...",
		Short: "Cancel bookings; their Slurm reservations go at the next projection (once no job runs inside)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := app.ParseBookingIDs(args)
			if err != nil {
				return err
			}
			r := app.CancelBookingsRequest{Actor: app.Actor(), IDs: ids, Confirm: a.confirmer()}
			return partly(tells(a, app.CancelledBookings.Text))(a.CancelBookings(cmd.Context(), r))
		},
	}
}

func showBookingsCmd(a *App, local *bool) *cobra.Command {
	return localFlag(&cobra.Command{
		Use:     "bookings [ID ...] [tenant=NAME] [state=STATE,...] [from=TIME] [to=TIME] [format=id,tenant,...]",
		Aliases: []string{"booking"},
		Short:   "Show bookings with their present state and Slurm reservation",
		Long: "Show bookings. state= filters by " + reserve.StatesList() + `;
from=/to= keep bookings whose window overlaps [from, to). format= picks the
columns: ` + strings.Join(view.BookingColumns(), ",") + ` (default ` + strings.Join(view.DefaultBookingColumns, ",") + `),
and where COLUMN=VALUE filters the rows. --json prints the full records (of
the rows the filters keep).`,
		ValidArgsFunction: completeTenants(a, false),
		RunE: a.do(takes{Spec: kv.Spec{Keys: reserve.ListKeys}, views: views(view.Bookings(nil, view.Times{}))},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseListBookings(p.Names, p.Where, *local)
				if err != nil {
					return err
				}
				return showsRecordsBy(a, view.DefaultBookingColumns, app.BookingList.Table)(a.ListBookings(ctx, r))
			}),
	}, local)
}

func showBookingPolicyCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "booking-policy tenant=NAME [where COL=VALUE ...] [format=COL,...]",
		Short: "Show the booking policy that binds a tenant (its own keys over bookings.defaultPolicy; maxGPUs its quota where unset)",
		RunE: a.do(takes{Spec: kv.Spec{Keys: []string{"tenant"}}, views: views(view.Policy(nil)), names: noName, usage: "show booking-policy takes key=value options only (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				return shows(a, app.BookingPolicy.Table)(a.BookingPolicy(ctx, p.Where["tenant"]))
			}),
	}
}

func showAvailabilityCmd(a *App, local *bool) *cobra.Command {
	return localFlag(&cobra.Command{
		Use:   "availability [type=h100,...] [from=TIME] [to=TIME] [step=1h|1d]",
		Short: "Show free and booked capacity per GPU type (and node class) over time",
		Long: `Show availability: for each step, the least capacity, the most booked and the
least free, per GPU type or MIG profile (type=node:CLASS for whole nodes).
Default: every type of the pool, from now for 14 days, step 1d (1h when the
window is 2 days or shorter). Capacity is the pool's GPUs less drained or down
nodes, maintenance windows, reservations gpubridge does not own and
bookings.unbookablePercent. Runs of equal steps are printed as one row;
--json prints every step.`,
		RunE: a.do(takes{Spec: kv.Spec{Keys: reserve.AvailabilityKeys}, views: view.AvailabilityColumns(), names: noName,
			usage: "show availability takes key=value options only (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				if a.output.JSON && (p.Format != nil || p.Filters != nil) {
					return usagef("show availability --json prints one object (every step of every type): format= and where filters apply to its table only")
				}
				r, err := app.ParseAvailability(p.Where, *local)
				if err != nil {
					return err
				}
				return atOnce(a, prints(a, app.BookingAvailability.Printout))(a.Availability(ctx, r))
			}),
	}, local)
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
		RunE: a.do(takes{Spec: kv.Spec{Keys: reserve.SlotKeys}, names: noName, usage: "find slot takes key=value options only (got %q)"},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseFindSlots(p.Where, *local)
				if err != nil {
					return err
				}
				f, err := a.FindSlots(ctx, r)
				if err == nil && len(f.Slots) == 0 && !a.output.JSON && !a.output.Parsable {
					return says(a, app.FoundSlots.Text)(f, nil)
				}
				return shows(a, app.FoundSlots.Table)(f, err)
			}),
	}
	find.AddCommand(localFlag(slot, local))
	return find
}

func addMaintenanceCmd(a *App, local *bool) *cobra.Command {
	return localFlag(&cobra.Command{
		Use:   "maintenance nodes=NODE,... start=TIME end=TIME|duration=D [reason=...]",
		Short: "Record a maintenance window: the nodes' GPUs cannot be booked in it",
		Long: `Record an admin maintenance window. The nodes' GPUs (and whole nodes) are taken
out of the bookable capacity for [start, end). Bookings that no longer fit are
listed: the window is recorded anyway (the admin's call) and they are shown at
risk. The window lives in gpubridge only; drain the nodes in Slurm as usual.`,
		Args: cobra.MinimumNArgs(1),
		RunE: a.do(takes{Spec: kv.Spec{Keys: reserve.MaintenanceKeys}},
			func(ctx context.Context, p kv.Args) error {
				r, err := app.ParseAddMaintenance(p.Where, *local)
				if err != nil {
					return err
				}
				r.Actor, r.Confirm = app.Actor(), a.confirmer()
				return tells(a, app.AddedMaintenance.Text)(a.AddMaintenance(ctx, r))
			}),
	}, local)
}

func deleteMaintenanceCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "maintenance ID",
		Short: "Remove a maintenance window",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := app.ParseMaintenanceID(args[0])
			if err != nil {
				return err
			}
			return says(a, view.MaintenanceDeleted)(a.DeleteMaintenance(cmd.Context(), app.Actor(), n, a.confirmer()))
		},
	}
}

func showMaintenanceCmd(a *App, local *bool) *cobra.Command {
	return localFlag(&cobra.Command{
		Use:   "maintenance [where COL=VALUE ...] [format=COL,...]",
		Short: "Show the maintenance windows",
		RunE: a.do(onlyFilters(view.Maintenance(nil, view.Times{})), func(ctx context.Context, _ kv.Args) error {
			return shows(a, app.MaintenanceList.Table)(a.MaintenanceWindows(ctx, *local))
		}),
	}, local)
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
			return saysPartly(a, app.Projected.Text)(a.Project(cmd.Context(), app.Projection{Actor: app.Actor(), DryRun: dry, AllowMassRemoval: allow, Log: a.Verbose}))
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "show what would change, change nothing")
	cmd.Flags().BoolVar(&allow, "allow-mass-delete", false, "remove orphan reservations even when the store looks empty or wrong")
	return cmd
}
