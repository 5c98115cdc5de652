package reserve

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// BookedWindows reduces bookings to what their charge needs; the ones it
// cannot charge are named with the reason.
//
// A GPU booking is one window: Count GPUs of its type. A whole-node
// booking is one window per GPU type of its class: Count × the GPUs per
// node of that type that admission recorded on it (Booking.PerNode), never
// the cluster as it is now; a class without GPUs is one window of no GPUs
// (it charges nothing, and reverses what an earlier figure charged). A
// node booking stored before admission recorded the figure is named, not
// charged: its GPUs per node are not known.
func BookedWindows(bs []Booking) ([]meter.BookedWindow, []string) {
	var out []meter.BookedWindow
	var un []string
	for _, b := range bs {
		switch {
		case b.Kind == KindNode && b.PerNode == nil:
			un = append(un, fmt.Sprintf("booking %d (%s, whole nodes) was admitted before gpubridge recorded the GPUs per node of a node booking, so its GPUs are not known; "+
				"record them (the GPUs per node its class had) with `gpubridge modify booking %d set pernode=TYPE:COUNT` (e.g. pernode=h100:8), "+
				"then charge again", b.ID, b.What(), b.ID))
			continue
		case b.Cancelled() && b.CancelledAt.IsZero():
			un = append(un, fmt.Sprintf("booking %d is cancelled without a cancel time", b.ID))
			continue
		}
		w := meter.BookedWindow{ID: b.ID, Account: strings.ToLower(b.Tenant), Type: b.GPUType, Count: int64(b.Count),
			Start: b.Start.Unix(), End: b.End.Unix()}
		if b.Cancelled() {
			w.CancelledAt = b.CancelledAt.Unix()
		}
		if b.Kind != KindNode {
			out = append(out, w)
			continue
		}
		n := 0
		for _, t := range slices.Sorted(maps.Keys(b.PerNode)) {
			if b.PerNode[t] <= 0 {
				continue
			}
			tw := w
			tw.Type, tw.Count = t, int64(b.Count)*int64(b.PerNode[t])
			out = append(out, tw)
			n++
		}
		if n == 0 {
			w.Type, w.Count = "", 0
			out = append(out, w)
		}
	}
	return out, un
}
