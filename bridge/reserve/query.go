package reserve

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/kv"
)

// The readers of the typed arguments of the booking commands other than
// add and modify (ParseAdd, ParseChange): show bookings, show
// availability, find slot and add maintenance. Each reports every problem
// at once, each naming its field; the front end has split the key=value
// pairs already.

// LoadZone resolves tz (the TZ environment variable; a leading ':' is
// dropped) to the zone of times written without an offset. An empty tz is
// no zone.
func LoadZone(tz string) (Zone, error) {
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" {
		return Zone{}, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return Zone{}, fmt.Errorf("TZ=%q is not a time zone (%v); set e.g. TZ=Europe/Berlin, or TZ=UTC", tz, err)
	}
	return Zone{Name: tz, Location: loc}, nil
}

// StatesList names the states, comma-separated (for help and problems).
func StatesList() string {
	var s []string
	for _, st := range States {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

// ListKeys are the keys ParseList reads.
var ListKeys = []string{"tenant", "state", "from", "to"}

// ParseList reads show bookings' filters: tenant=, state=S,... (each one
// of States), from= and to= (bookings whose window overlaps [from, to)).
func ParseList(args map[string]string, now time.Time, zone Zone) (ListFilter, Problems) {
	lf := ListFilter{Tenant: args["tenant"]}
	var ps Problems
	if strings.Contains(lf.Tenant, ",") {
		// A list would silently match no tenant: refuse it.
		ps.Add("tenant", "one tenant at a time (got %q): give tenant=NAME once per query, or leave tenant= out for every tenant's bookings", lf.Tenant)
	}
	for _, s := range kv.List(args["state"]) {
		if !slices.Contains(States, State(s)) {
			ps.Add("state", "%q is not a state (%s)", s, StatesList())
		}
		lf.States = append(lf.States, State(s))
	}
	lf.From = parseOptionalTime(&ps, args, "from", now, zone)
	lf.To = parseOptionalTime(&ps, args, "to", now, zone)
	return lf, ps
}

// AvailabilityKeys are the keys ParseAvailability reads.
var AvailabilityKeys = []string{"type", "from", "to", "step"}

// ParseAvailability reads show availability's arguments: type=T,... (every
// type of the pool when empty), from= (default now), to= (default from +
// 14 days) and step= (default 1d, 1h for a window of 2 days or less).
func ParseAvailability(args map[string]string, now time.Time, zone Zone) (AvailabilityQuery, Problems) {
	now = now.UTC().Truncate(time.Second)
	q := AvailabilityQuery{Types: kv.List(args["type"]), From: now}
	var ps Problems
	if _, ok := args["from"]; ok {
		q.From = parseOptionalTime(&ps, args, "from", now, zone)
	}
	q.To = q.From.Add(14 * 24 * time.Hour)
	if _, ok := args["to"]; ok {
		q.To = parseOptionalTime(&ps, args, "to", now, zone)
	}
	q.Step = 24 * time.Hour
	if q.To.Sub(q.From) <= 48*time.Hour {
		q.Step = time.Hour
	}
	if v, ok := args["step"]; ok {
		d, err := ParseDuration(v)
		if err != nil {
			ps.Add("step", "%s", err.Error())
		}
		q.Step = d
	}
	return q, ps
}

// SlotKeys are the keys ParseSlotQuery reads.
var SlotKeys = []string{"type", "count", "duration", "after", "tenant", "limit"}

// ParseSlotQuery reads find slot's arguments: type=, count= (required),
// duration=, after= (default now), tenant=, limit= (1 to 100, default 3).
func ParseSlotQuery(args map[string]string, now time.Time, zone Zone) (SlotQuery, Problems) {
	q := SlotQuery{Type: args["type"], Tenant: args["tenant"], Limit: 3}
	var ps Problems
	var err error
	if v, ok := args["count"]; ok {
		if q.Count, err = strconv.Atoi(v); err != nil {
			ps.Add("count", "%q is not a whole number", v)
		}
	} else {
		ps.Add("count", "required: how many GPUs (or nodes)")
	}
	if v, ok := args["duration"]; ok {
		if q.Duration, err = ParseDuration(v); err != nil {
			ps.Add("duration", "%s", err.Error())
		}
	}
	if _, ok := args["after"]; ok {
		q.After = parseOptionalTime(&ps, args, "after", now, zone)
	}
	if v, ok := args["limit"]; ok {
		if q.Limit, err = strconv.Atoi(v); err != nil || q.Limit < 1 || q.Limit > 100 {
			ps.Add("limit", "%q is not a number from 1 to 100", v)
		}
	}
	return q, ps
}

// MaintenanceKeys are the keys ParseMaintenance reads.
var MaintenanceKeys = []string{"nodes", "start", "end", "duration", "reason"}

// ParseMaintenance reads add maintenance's arguments: nodes=N,...,
// start= (required), end= or duration= (one of them), reason=.
func ParseMaintenance(args map[string]string, now time.Time, zone Zone) (Maintenance, Problems) {
	m := Maintenance{Nodes: kv.List(args["nodes"]), Reason: strings.TrimSpace(args["reason"])}
	var ps Problems
	if _, ok := args["start"]; ok {
		m.Start = parseOptionalTime(&ps, args, "start", now, zone)
	} else {
		ps.Add("start", "required")
	}
	e, hasE := args["end"]
	d, hasD := args["duration"]
	switch {
	case hasE == hasD:
		ps.Add("end", "give end= or duration= (one of them)")
	case hasE:
		t, err := ParseTime(e, now, zone)
		if err != nil {
			ps.Add("end", "%s", err.Error())
		}
		m.End = t
	default:
		dur, err := ParseDuration(d)
		if err != nil {
			ps.Add("duration", "%s", err.Error())
		}
		m.End = m.Start.Add(dur)
		if err == nil && !m.Start.IsZero() {
			checkRange(&ps, "duration", m.End)
		}
	}
	return m, ps
}

// parseOptionalTime reads args[key] with ParseTime when it is given (the
// zero time otherwise), adding its problem.
func parseOptionalTime(ps *Problems, args map[string]string, key string, now time.Time, zone Zone) time.Time {
	v, ok := args[key]
	if !ok {
		return time.Time{}
	}
	t, err := ParseTime(v, now, zone)
	if err != nil {
		ps.Add(key, "%s", err.Error())
	}
	return t
}
