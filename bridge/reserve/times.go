package reserve

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Zone is the admin's time zone for times written without an offset: the
// TZ environment variable, resolved by the caller. A nil Location means
// none is known, and such times are refused with the fix.
type Zone struct {
	Name     string // as given, e.g. Europe/Berlin; empty when unset
	Location *time.Location
}

// ErrNoZone: a time without an offset was given and no time zone is known.
var ErrNoZone = errors.New("time has no zone")

// Layouts of times with an explicit offset (RFC 3339, seconds optional),
// and of zone-less times read in the admin's zone.
var (
	offsetLayouts = []string{"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04Z07:00"}
	localLayouts  = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}
)

// MinTime and MaxTime bound every time a booking, a maintenance window or
// a query may name: the range of the store's DATETIME columns (MariaDB
// holds 1000-01-01 to 9999-12-31 23:59:59). A time outside them is bad
// input, refused before anything is read.
var (
	MinTime = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// checkRange refuses t outside [MinTime, MaxTime] as a problem of field.
func checkRange(ps *Problems, field string, t time.Time) {
	if t.IsZero() {
		return
	}
	if t.Before(MinTime) || t.After(MaxTime) {
		ps.Add(field, "%s is outside the times the store holds (%s to %s); give an earlier time or a shorter duration",
			t.UTC().Format("2006-01-02T15:04:05Z"), FormatTime(MinTime, Zone{}, false), FormatTime(MaxTime, Zone{}, false))
	}
}

// ParseTime reads a point in time, at second resolution, as
//   - RFC 3339 with an offset or Z: 2026-12-14T09:00:00+01:00, 2026-12-14T08:00Z;
//   - now, now+2d, now+90m, now-1h (units w, d, h, m, s; d is 24 hours);
//   - a date or date and time without a zone, in the admin's zone:
//     2026-12-14 (midnight), 2026-12-14T09:00, 2026-12-14 09:00:30.
//
// A space may stand for the T. Zone-less times are refused when zone has no
// Location (ErrNoZone), when they fall into a daylight-saving gap (the
// clock skips them) and when they are ambiguous (the clock shows them twice
// when it falls back); each error says how to write the time instead. The
// result is in UTC. Fractions of a second are refused, and so are times
// outside [MinTime, MaxTime].
func ParseTime(s string, now time.Time, zone Zone) (time.Time, error) {
	t, err := parseTime(s, now, zone)
	if err == nil && (t.Before(MinTime) || t.After(MaxTime)) {
		return time.Time{}, fmt.Errorf("%q is outside the times the store holds (%s to %s)", s, FormatTime(MinTime, Zone{}, false), FormatTime(MaxTime, Zone{}, false))
	}
	return t, err
}

func parseTime(s string, now time.Time, zone Zone) (time.Time, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return time.Time{}, errors.New("empty time; give e.g. 2026-12-14T09:00Z, now+2d or 2026-12-14")
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(in), "now"); ok {
		base := now.UTC().Truncate(time.Second)
		if rest == "" {
			return base, nil
		}
		sign := rest[0]
		if sign != '+' && sign != '-' {
			return time.Time{}, fmt.Errorf("%q: after now, want +DURATION or -DURATION such as now+2d or now+90m", s)
		}
		d, err := ParseDuration(rest[1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: %w", s, err)
		}
		if sign == '-' {
			d = -d
		}
		return base.Add(d), nil
	}
	norm := in
	if len(norm) > 10 && norm[10] == ' ' {
		norm = norm[:10] + "T" + norm[11:]
	}
	if strings.ContainsAny(norm, ".,") {
		return time.Time{}, fmt.Errorf("%q: fractions of a second are not accepted; times have second resolution", s)
	}
	for _, l := range offsetLayouts {
		if t, err := time.Parse(l, norm); err == nil {
			return t.UTC(), nil
		}
	}
	for _, l := range localLayouts {
		wall, err := time.Parse(l, norm)
		if err != nil {
			continue
		}
		return resolveLocal(s, wall, zone)
	}
	return time.Time{}, fmt.Errorf("%q is not a time; give RFC 3339 with an offset (2026-12-14T09:00:00+01:00, 2026-12-14T08:00Z), now+DURATION (now+2d, now+90m) or a date and time in $TZ (2026-12-14, 2026-12-14T09:00)", s)
}

// resolveLocal turns a wall-clock time (parsed as if UTC) into the instant
// it names in zone, refusing gaps and ambiguities.
func resolveLocal(s string, wall time.Time, zone Zone) (time.Time, error) {
	if zone.Location == nil {
		return time.Time{}, fmt.Errorf("%w: %q has no offset and TZ is not set; give an offset (%sZ for UTC, or e.g. %s+01:00) or set TZ to your time zone (e.g. TZ=Europe/Berlin)",
			ErrNoZone, s, wall.Format("2006-01-02T15:04"), wall.Format("2006-01-02T15:04"))
	}
	loc := zone.Location
	// The offsets in force within two days either side cover every
	// transition that could apply to this wall time.
	var offsets []int
	for _, d := range []time.Duration{-48 * time.Hour, -24 * time.Hour, -12 * time.Hour, 0, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour} {
		_, off := wall.Add(d).In(loc).Zone()
		if !containsInt(offsets, off) {
			offsets = append(offsets, off)
		}
	}
	var hits []time.Time
	for _, off := range offsets {
		t := wall.Add(-time.Duration(off) * time.Second)
		if sameWall(t.In(loc), wall) && !containsTime(hits, t) {
			hits = append(hits, t)
		}
	}
	name := zone.Name
	if name == "" {
		name = loc.String()
	}
	w := wall.Format("2006-01-02T15:04:05")
	switch len(hits) {
	case 1:
		return hits[0].UTC(), nil
	case 0:
		before := wall.Add(-12 * time.Hour).In(loc)
		after := wall.Add(12 * time.Hour).In(loc)
		return time.Time{}, fmt.Errorf("%q does not exist in %s: the clocks skip it at the daylight-saving change (%s to %s); give a time outside the gap, or an explicit offset such as %s%s",
			s, name, offsetName(before), offsetName(after), w, before.Format("-07:00"))
	default:
		if hits[1].Before(hits[0]) {
			hits[0], hits[1] = hits[1], hits[0]
		}
		a, b := hits[0].In(loc), hits[1].In(loc)
		return time.Time{}, fmt.Errorf("%q is ambiguous in %s: the clocks show it twice when they fall back; give the offset: %s%s (%s, the first) or %s%s (%s, the second)",
			s, name, w, a.Format("-07:00"), zoneAbbrev(a), w, b.Format("-07:00"), zoneAbbrev(b))
	}
}

func offsetName(t time.Time) string {
	if ab := zoneAbbrev(t); ab != "" && !strings.HasPrefix(ab, "+") && !strings.HasPrefix(ab, "-") {
		return ab + " " + t.Format("-07:00")
	}
	return t.Format("-07:00")
}

func zoneAbbrev(t time.Time) string {
	n, _ := t.Zone()
	return n
}

func sameWall(t, wall time.Time) bool {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	wy, wmo, wd := wall.Date()
	wh, wmi, ws := wall.Clock()
	return y == wy && mo == wmo && d == wd && h == wh && mi == wmi && s == ws
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func containsTime(xs []time.Time, x time.Time) bool {
	for _, v := range xs {
		if v.Equal(x) {
			return true
		}
	}
	return false
}

// ParseDuration reads a positive duration such as 14d, 2w, 90m, 36h,
// 1d12h or 30s. Units: w (7 days), d (24 hours), h, m, s; whole numbers
// only. A day is always 24 hours: a booking of 1d across a daylight-saving
// change lasts 24 hours, not one calendar day.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(strings.ToLower(s))
	if in == "" {
		return 0, errors.New("empty duration; give e.g. 14d, 36h or 90m")
	}
	units := map[byte]time.Duration{'w': 7 * 24 * time.Hour, 'd': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}
	var total time.Duration
	seen := map[byte]bool{}
	for i := 0; i < len(in); {
		j := i
		for j < len(in) && in[j] >= '0' && in[j] <= '9' {
			j++
		}
		if j == i || j == len(in) {
			return 0, fmt.Errorf("duration %q: want whole numbers with units w, d, h, m or s, such as 14d, 36h or 1d12h", s)
		}
		u, ok := units[in[j]]
		if !ok || seen[in[j]] {
			return 0, fmt.Errorf("duration %q: want whole numbers with units w, d, h, m or s, such as 14d, 36h or 1d12h", s)
		}
		seen[in[j]] = true
		n, err := strconv.ParseInt(in[i:j], 10, 64)
		if err != nil || n > int64(100*365*24*time.Hour/u) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += time.Duration(n) * u
		i = j + 1
	}
	if total <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return total, nil
}

// FormatDuration writes d in the units ParseDuration reads, largest first:
// 14d, 1d12h, 90m is written 1h30m.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		n string
		d time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if q := d / u.d; q > 0 {
			fmt.Fprintf(&b, "%d%s", q, u.n)
			d -= q * u.d
		}
	}
	return b.String()
}

// FormatTime writes t as RFC 3339 at second resolution: in UTC with a Z,
// or, when local is true and zone has a Location, in that zone with its
// offset.
func FormatTime(t time.Time, zone Zone, local bool) string {
	if t.IsZero() {
		return ""
	}
	if local && zone.Location != nil {
		return t.In(zone.Location).Format("2006-01-02T15:04:05-07:00")
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
