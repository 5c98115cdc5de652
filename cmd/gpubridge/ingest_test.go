package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestPrintIngestState(t *testing.T) {
	ts := func(s string) int64 {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Unix()
	}
	nov, _ := meter.ParsePeriod("2026-11")
	s := ledger.State{
		Watermarks:   map[string]meter.Watermark{"slurmdb": {Source: "slurmdb", Through: ts("2026-12-01 10:00:00")}},
		AccrualsAsOf: ts("2026-12-01 10:00:00"),
		Coverage:     [][2]int64{{ts("2026-11-01 00:00:00"), ts("2026-12-01 10:00:00")}},
		Closed:       map[meter.Period]bool{nov: true},
		Passes: []meter.Pass{
			{Kind: meter.PassChanges, Source: "slurmdb", AsOf: ts("2026-12-01 09:55:00"), Finished: ts("2026-12-01 09:55:02")},
			{Kind: meter.PassVerify, Source: "slurmdb", From: ts("2026-11-01 00:00:00"), AsOf: ts("2026-12-01 04:30:00"), Finished: ts("2026-12-01 04:30:05")},
		},
	}
	var out bytes.Buffer
	a := &App{Env: &app.Env{}, out: &out}
	if err := prints(a, app.IngestStatus.Printout)(app.IngestStatus{Cluster: "testbed", State: s}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Cluster  Source   CompleteThrough       RunningAsOf           ChangesSeenThrough    ChangesPassAt         VerifiedFrom          VerifiedThrough       VerifiedAt",
		"testbed  slurmdb  2026-12-01T10:00:00Z  2026-12-01T10:00:00Z  2026-12-01T09:55:00Z  2026-12-01T09:55:02Z  2026-11-01T00:00:00Z  2026-12-01T04:30:00Z  2026-12-01T04:30:05Z",
		"ingested end times: 2026-11-01T00:00:00Z..2026-12-01T10:00:00Z",
		"closed periods: 2026-11",
	}
	var got []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l = strings.TrimRight(l, " "); l != "" && !strings.HasPrefix(l, "---") {
			got = append(got, l)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s\n%s", d, out.String())
	}
}
