package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
)

func TestCheckHours(t *testing.T) {
	h := int64(hour)
	cases := map[string]struct {
		from, to, rolled int64
		h0, h1           int64
	}{
		"whole hours":                {from: 10 * h, to: 20 * h, rolled: 30 * h, h0: 10 * h, h1: 20 * h},
		"rounded inwards":            {from: 10*h + 1, to: 20*h - 1, rolled: 30 * h, h0: 11 * h, h1: 19 * h},
		"up to what is rolled up":    {from: 10 * h, to: 20 * h, rolled: 15*h + 1800, h0: 10 * h, h1: 15 * h},
		"nothing rolled up: h1 < h0": {from: 10 * h, to: 20 * h, rolled: 5 * h, h0: 10 * h, h1: 5 * h},
		"no last_ran row: to alone":  {from: 10 * h, to: 20*h + 5, rolled: 0, h0: 10 * h, h1: 20 * h},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h0, h1 := checkHours(tc.from, tc.to, tc.rolled)
			if h0 != tc.h0 || h1 != tc.h1 {
				t.Errorf("checkHours = %d, %d; want %d, %d", h0, h1, tc.h0, tc.h1)
			}
		})
	}
}

func TestCountAndMeasure(t *testing.T) {
	g := newGPUTRES(map[int64]string{1001: "gpu", 1002: "gpu:h100", 1003: "gpu:1g.10gb", 7: "shard"})
	if d := gocmp.Diff([]int64{1001}, g.measure()); d != "" {
		t.Errorf("measure with gres/gpu (-want +got)\n%s", d)
	}
	typedOnly := newGPUTRES(map[int64]string{1003: "gpu:1g.10gb", 1002: "gpu:h100"})
	if d := gocmp.Diff([]int64{1002, 1003}, typedOnly.measure()); d != "" {
		t.Errorf("measure without gres/gpu (-want +got)\n%s", d)
	}
	for s, want := range map[string]int64{
		"1=8,2=16000,4=1,5=8,1001=2,1002=2": 2,
		"1=8,1001=3,1002=1,1003=2":          3,
		"1=8,2=16000":                       0,
		"1001=18446744073709551614":         0, // Slurm's NO_VAL marker
		"1001=x,1001=1":                     1,
	} {
		if got := count([]byte(s), []int64{1001}); got != want {
			t.Errorf("count(%q) = %d, want %d", s, got, want)
		}
	}
}

// missingSource reports missing use before anything else, then reads like
// tableSource.
type missingSource struct {
	tableSource
	missing []Missing
}

func (s *missingSource) Read(ctx context.Context, q Query, h Handler) error {
	if q.CheckFrom != 0 && len(s.missing) > 0 {
		if err := h.Missing(s.missing); err != nil {
			return err
		}
	}
	return s.tableSource.Read(ctx, q, h)
}

func TestMissingRowsStopTheIngest(t *testing.T) {
	asOf := ts("2026-12-20 00:00:00")
	rows := randomRows(5, 300, asOf)
	gone := []Missing{{Account: "acme", User: "alice", From: ts("2026-12-01 00:00:00"), To: ts("2026-12-02 00:00:00"), RollupSeconds: 7200, JobSeconds: 3600}}
	l := ledger.NewMemory()
	src := &missingSource{tableSource: tableSource{rows: rows}, missing: gone}
	_, err := newIngester(src, l, asOf).Ingest(context.Background(), window)
	var me *MissingError
	if !errors.Is(err, ErrMissingRows) || !errors.As(err, &me) || len(me.Missing) != 1 {
		t.Fatalf("err = %v, want a *MissingError", err)
	}
	for _, want := range []string{"acme/alice: 3600 GPU-seconds (rollups 7200, job rows 3600) in 2026-12-01T00:00:00Z..2026-12-02T00:00:00Z", "PurgeJobAfter", "Nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got := fromLedger(t, l); len(got) != 0 {
		t.Errorf("the refused ingest wrote %d usages", len(got))
	}
	if _, ok, _ := l.Watermark(context.Background(), "c", "slurmdb"); ok {
		t.Error("the refused ingest moved the watermark")
	}

	// A gap accepted for other hours changes nothing: still refused.
	in := newIngester(src, l, asOf)
	in.AcceptMissing = &Accept{From: time.Unix(ts("2026-12-01 00:00:00"), 0), To: time.Unix(ts("2026-12-01 12:00:00"), 0), Actor: "op"}
	if _, err := in.Ingest(context.Background(), window); !errors.Is(err, ErrMissingRows) {
		t.Fatalf("a gap accepted for other hours: %v, want ErrMissingRows", err)
	}
	if len(l.Audits()) != 0 {
		t.Errorf("a refused gap was audited: %+v", l.Audits())
	}
	// Accepted: what the job table holds is ingested; the missing use is
	// reported and audited.
	in.AcceptMissing.To = time.Unix(ts("2026-12-02 00:00:00"), 0)
	res, err := in.Ingest(context.Background(), window)
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(gone, res.Missing); d != "" {
		t.Errorf("Result.Missing (-want +got)\n%s", d)
	}
	if d := gocmp.Diff(reference(rows, asOf), fromLedger(t, l)); d != "" {
		t.Errorf("accepted ingest (-want +got)\n%s", d)
	}
	if a := l.Audits(); len(a) != 1 || a[0].Actor != "op" || a[0].Action != "accept-missing" || a[0].Object != "c/slurmdb" {
		t.Errorf("audit %+v, want one accept-missing entry by op", a)
	}
}

func TestMissingOf(t *testing.T) {
	h := int64(hour)
	cases := map[string]struct {
		rollup, jobs map[int64]int64
		want         Missing
		missing      bool
	}{
		"equal":                            {rollup: map[int64]int64{h: 3600, 2 * h: 100}, jobs: map[int64]int64{h: 3600, 2 * h: 100}},
		"jobs count more (suspended time)": {rollup: map[int64]int64{h: 3000}, jobs: map[int64]int64{h: 3600}},
		"one hour short": {rollup: map[int64]int64{h: 3600, 2 * h: 3600, 3 * h: 3600}, jobs: map[int64]int64{h: 3600, 3 * h: 3600},
			want: Missing{From: 2 * h, To: 3 * h, RollupSeconds: 3600}, missing: true},
		"spread: the span of the short hours": {rollup: map[int64]int64{h: 3600, 2 * h: 3600, 4 * h: 1800}, jobs: map[int64]int64{2 * h: 3600, 4 * h: 600},
			want: Missing{From: h, To: 5 * h, RollupSeconds: 9000, JobSeconds: 4200}, missing: true},
		// A job counted in another hour than the rollup put it: the sums
		// agree, so nothing is missing.
		"same sum, other hours": {rollup: map[int64]int64{h: 3600, 2 * h: 0}, jobs: map[int64]int64{h: 1800, 2 * h: 1800}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, missing := missingOf(tc.rollup, tc.jobs, nil)
			if missing != tc.missing || got != tc.want {
				t.Errorf("missingOf = %+v, %v; want %+v, %v", got, missing, tc.want, tc.missing)
			}
		})
	}
}
