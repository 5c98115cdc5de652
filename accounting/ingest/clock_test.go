package ingest

import (
	"context"
	"errors"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
)

// clockedSource is a tableSource whose records come from a system whose
// clock reads now (or fails).
type clockedSource struct {
	tableSource
	now time.Time
	err error
}

func (s *clockedSource) Now(context.Context) (time.Time, error) { return s.now, s.err }

func TestIngestMeasuresAsOfTheSourcesClock(t *testing.T) {
	truth := ts("2026-12-20 00:00:00")
	rows := randomRows(9, 500, truth)
	want := reference(rows, truth)
	for name, off := range map[string]time.Duration{"host 10 minutes behind": -10 * time.Minute, "host 10 minutes ahead": 10 * time.Minute, "in step": 0} {
		t.Run(name, func(t *testing.T) {
			l := ledger.NewMemory()
			in := newIngester(&clockedSource{tableSource: tableSource{rows: rows}, now: time.Unix(truth, 0)}, l, truth+int64(off/time.Second))
			res, err := in.Ingest(context.Background(), window)
			if err != nil {
				t.Fatal(err)
			}
			if res.AsOf.Unix() != truth || res.ClockSkew != -off {
				t.Errorf("as of %s, skew %s; want the source's clock and a skew of %s", res.AsOf, res.ClockSkew, -off)
			}
			if d := gocmp.Diff(want, fromLedger(t, l)); d != "" {
				t.Errorf("ledger with the host clock off by %s (-want +got)\n%s", off, d)
			}
		})
	}
	t.Run("UseHostClock", func(t *testing.T) {
		in := newIngester(&clockedSource{tableSource: tableSource{rows: rows}, now: time.Unix(truth, 0)}, ledger.NewMemory(), truth-600)
		in.UseHostClock = true
		if res, err := in.Ingest(context.Background(), window); err != nil || res.AsOf.Unix() != truth-600 {
			t.Errorf("as of %s (%v), want the host's clock", res.AsOf, err)
		}
	})
	t.Run("source clock unreadable", func(t *testing.T) {
		in := newIngester(&clockedSource{tableSource: tableSource{rows: rows}, err: errors.New("down")}, ledger.NewMemory(), truth)
		if res, err := in.Ingest(context.Background(), window); err != nil || res.AsOf.Unix() != truth {
			t.Errorf("as of %s (%v), want the host's clock", res.AsOf, err)
		}
	})
}
