package credit

import (
	"testing"
	"time"
)

// TestSummary: credit run-once's line on stderr names what it wrote, what
// was owed in the window and how many runs it read.
func TestSummary(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	rep := Report{From: from, To: from.Add(7 * 24 * time.Hour), Runs: 5, Computed: 3, Written: []Credit{{Key: "a"}, {Key: "b"}}}
	want := "2 new credit line(s); 3 owed in 2026-10-31T23:00:00Z..2026-11-07T23:00:00Z from 5 run(s) that ended other than COMPLETED\n"
	if got := Summary(rep); got != want {
		t.Errorf("Summary %q\nwant %q", got, want)
	}
}
