package view

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Requests counts slurmrestd's requests of a run (reads, writes).
type Requests struct{ Reads, Writes int64 }

// ProjectReport is what `gpubridge project` prints of a projection: each
// action and its outcome, the bookings at risk, the orphans kept and why,
// a summary line (dry: nothing changed) and the capacity now.
func ProjectReport(rep reserve.Report, dry bool, req Requests) string {
	var s strings.Builder
	for _, r := range rep.Actions {
		line := fmt.Sprintf("%s %s", r.Action, r.Outcome)
		if r.Error != "" {
			line += ": " + r.Error
		}
		fmt.Fprintln(&s, line)
	}
	for _, b := range rep.AtRisk {
		fmt.Fprintf(&s, "at risk: %s: %s\n", b.Summary(), b.Note)
	}
	if rep.KeptWhy != "" {
		fmt.Fprintf(&s, "kept orphans %s: %s\n", strings.Join(rep.KeptOrphans, ","), rep.KeptWhy)
	}
	var counts []string
	for _, st := range reserve.States {
		if n := rep.States[st]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, st))
		}
	}
	verb := "Projection complete"
	if dry {
		verb = "Dry run (nothing changed)"
	}
	states := strings.Join(counts, ", ")
	if states == "" {
		states = "(none)"
	}
	fmt.Fprintf(&s, "%s: %d action(s), %d failed; bookings: %s; slurmrestd requests: %d read(s), %d write(s).\n",
		verb, len(rep.Actions), rep.Failed(), states, req.Reads, req.Writes)
	var now []string
	for _, n := range rep.Now {
		line := fmt.Sprintf("%s %d/%d booked, %d free", strings.TrimPrefix(string(n.Resource), "gpu:"), n.Booked, n.Capacity, n.Free)
		if n.AtRisk > 0 {
			line += fmt.Sprintf(", %d at risk", n.AtRisk)
		}
		now = append(now, line)
	}
	if len(now) > 0 {
		fmt.Fprintf(&s, "Now: %s.\n", strings.Join(now, "; "))
	}
	return s.String()
}

// ProjectionLines say what a projection did, for the health report: each
// action with its outcome, then each booking at risk and why.
func ProjectionLines(rep reserve.Report) []string {
	var out []string
	for _, x := range rep.Actions {
		l := x.Action.String() + " (" + x.Outcome + ")"
		if x.Error != "" {
			l += ": " + x.Error
		}
		out = append(out, l)
	}
	for _, b := range rep.AtRisk {
		out = append(out, fmt.Sprintf("booking %d of %s (%s) at risk: %s", b.ID, b.Tenant, b.What(), b.Note))
	}
	return out
}
