package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/table"
)

// BarWidth is the most characters a capacity bar takes (80 columns).
const BarWidth = 20

// AvailabilityColumns are the columns of the availability table (the
// parsable form, -P, has To and Pool instead of Bar): what format= and
// column filters of show availability may name.
func AvailabilityColumns() []table.Table {
	return []table.Table{Availability(reserve.Availability{}, Times{}, false), Availability(reserve.Availability{}, Times{}, true)}
}

// Availability is one row per run of equal steps: from, free, booked,
// capacity and a bar (# booked, . free, x unavailable, ! booked beyond
// capacity); a row holds until the next one's From. parsable (-P) adds To
// and Pool and drops the bar. --json prints av itself (every step).
func Availability(av reserve.Availability, z Times, parsable bool) table.Table {
	t := table.Table{Header: []string{"Type", "From", "Free", "Booked", "Cap", "Bar"}}
	if parsable {
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
			if parsable {
				t.Rows = append(t.Rows, []string{name, z.Format(bs[i].From), z.Format(bs[j].To), free, booked, cp, strconv.Itoa(r.Pool)})
			} else {
				t.Rows = append(t.Rows, []string{name, z.Format(bs[i].From), free, booked, cp, Bar(r.Pool, bs[i])})
			}
			i = j + 1
		}
	}
	return t
}

// AvailabilityNotes are the lines under the availability table: how long
// the last row holds, the step, the pools and what reduces capacity.
func AvailabilityNotes(av reserve.Availability, z Times) string {
	var s strings.Builder
	var pools []string
	for _, r := range av.Resources {
		pools = append(pools, fmt.Sprintf("%s %d", strings.TrimPrefix(string(r.Resource), "gpu:"), r.Pool))
	}
	fmt.Fprintf(&s, "Each row holds until the next row's From; the last until %s.\n", z.Format(av.To))
	fmt.Fprintf(&s, "Per %s step: least free, most booked. Bar: # booked . free x unavailable ! over.\n", reserve.FormatDuration(time.Duration(av.Step)))
	fmt.Fprintf(&s, "Pool: %s.\n", strings.Join(pools, ", "))
	var notes []string
	for _, r := range av.Resources {
		for _, red := range r.Reductions {
			w := "always"
			switch {
			case !red.Start.IsZero() && !red.End.IsZero():
				w = z.Format(red.Start) + ".." + z.Format(red.End)
			case !red.Start.IsZero():
				w = "from " + z.Format(red.Start)
			case !red.End.IsZero():
				w = "until " + z.Format(red.End)
			}
			notes = append(notes, fmt.Sprintf("  %s -%d: %s (%s)", r.Type, red.Count, red.Reason, w))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(&s, "Capacity reduced by:\n%s\n", strings.Join(notes, "\n"))
	}
	return s.String()
}

// Bar draws a bucket at one character per ceil(pool/BarWidth) units.
func Bar(pool int, b reserve.Bucket) string {
	if pool <= 0 {
		return ""
	}
	per := (pool + BarWidth - 1) / BarWidth
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
