package ledger

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/table"
)

func TestStateViews(t *testing.T) {
	nov, _ := meter.ParsePeriod("2026-11")
	s := State{Watermarks: map[string]meter.Watermark{"slurmdb": {Source: "slurmdb", Through: 1764583200}},
		Coverage: [][2]int64{{1761955200, 1764583200}}, Closed: map[meter.Period]bool{nov: true}}
	cases := map[string]struct {
		s          State
		o          table.Options
		note, text string
	}{
		"text":          {s: s, text: "\ningested end times: 2025-11-01T00:00:00Z..2025-12-01T10:00:00Z\nclosed periods: 2026-11\n"},
		"parsable":      {s: s, o: table.Options{Parsable: true}},
		"json":          {s: s, o: table.Options{JSON: true}},
		"nothing yet":   {note: "nothing ingested into this ledger yet for cluster tb: run gpubridge ingest", text: "\ningested end times: none\nclosed periods: none\n"},
		"nothing, json": {o: table.Options{JSON: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tb, note, text := StateViews("tb", tc.s, tc.o)
			if d := cmp.Diff([]string{tc.note, tc.text}, []string{note, text}); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if len(tb.Rows) != len(tc.s.Watermarks) || (len(tb.Rows) == 1 && !strings.HasPrefix(strings.Join(tb.Rows[0], " "), "tb slurmdb 2025-12-01T10:00:00Z -")) {
				t.Errorf("rows %v", tb.Rows)
			}
		})
	}
}
