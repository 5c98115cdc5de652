package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestParseTime(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		"date":         {in: "2026-11-01", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		"date time":    {in: "2026-11-01T10:20:30", want: time.Date(2026, 11, 1, 10, 20, 30, 0, time.UTC)},
		"minutes":      {in: "2026-11-01T10:20", want: time.Date(2026, 11, 1, 10, 20, 0, 0, time.UTC)},
		"RFC 3339":     {in: "2026-11-01T11:20:30+01:00", want: time.Date(2026, 11, 1, 10, 20, 30, 0, time.UTC)},
		"period":       {in: "2026-11", want: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		"garbage":      {in: "yesterday", wantErr: true},
		"no separator": {in: "20261101", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTime("from", tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tc.wantErr && !got.Equal(tc.want) {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if tc.wantErr {
				if !errors.Is(err, ErrInput) {
					t.Errorf("want an input error, got %T", err)
				}
			}
		})
	}
}

func TestParsePeriod(t *testing.T) {
	p, err := ParsePeriod("2026-02")
	if err != nil || p.String() != "2026-02" {
		t.Fatalf("ParsePeriod: %v %v", p, err)
	}
	if _, err := ParsePeriod("Feb"); err == nil {
		t.Error("want an error")
	}
	if p, err := ParsePeriod(""); err != nil || p.Start().After(time.Now()) {
		t.Errorf("default period %v %v", p, err)
	}
}

func TestParsePeriods(t *testing.T) {
	now := meter.PeriodOf(time.Now())
	cases := map[string]struct {
		in   map[string]string
		want []string
	}{
		"period":        {in: map[string]string{"period": "2026-02"}, want: []string{"2026-02"}},
		"default":       {in: map[string]string{}, want: []string{now.String()}},
		"start and end": {in: map[string]string{"start": "2026-09", "end": "2026-11-01"}, want: []string{"2026-09", "2026-10"}},
		"start only":    {in: map[string]string{"start": now.Prev().String()}, want: []string{now.Prev().String(), now.String()}},
		"first day":     {in: map[string]string{"start": "2025-12-01", "end": "2026-01"}, want: []string{"2025-12"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps, err := ParsePeriods(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	if _, err := ParsePeriods(map[string]string{"start": "2016-01", "end": "2026-11"}); err == nil || !strings.Contains(err.Error(), "at most 120") {
		t.Errorf("130 periods: %v", err)
	}
}

func TestParseExport(t *testing.T) {
	nov, _ := meter.ParsePeriod("2026-11")
	cases := map[string]struct {
		in      map[string]string
		asJSON  bool
		path    string
		want    billing.ExportRequest
		wantErr string
	}{
		"csv":    {in: map[string]string{"period": "2026-11"}, want: billing.ExportRequest{Period: nov, Options: export.Options{Format: export.CSV}}},
		"--json": {in: map[string]string{"period": "2026-11"}, asJSON: true, want: billing.ExportRequest{Period: nov, Options: export.Options{Format: export.JSON}}},
		"focus, file, jobs": {in: map[string]string{"period": "2026-11", "format": "focus", "detail": "jobs", "tenant": "acme", "metadata": "m.json"}, path: "out.csv",
			want: billing.ExportRequest{Period: nov, Account: "acme", Options: export.Options{Format: export.FOCUS, Detail: true}, Path: "out.csv", MetadataPath: "m.json"}},
		"account alias":   {in: map[string]string{"period": "2026-11", "account": "a1", "detail": "summary"}, want: billing.ExportRequest{Period: nov, Account: "a1", Options: export.Options{Format: export.CSV}}},
		"no period":       {in: map[string]string{}, wantErr: "export chargeback needs period=YYYY-MM"},
		"bad period":      {in: map[string]string{"period": "Nov"}, wantErr: "Nov"},
		"bad format":      {in: map[string]string{"period": "2026-11", "format": "xls"}, wantErr: "xls"},
		"--json and csv":  {in: map[string]string{"period": "2026-11", "format": "csv"}, asJSON: true, wantErr: "--json and format=csv"},
		"bad detail":      {in: map[string]string{"period": "2026-11", "detail": "all"}, wantErr: "detail=all: want jobs"},
		"untenanted=no":   {in: map[string]string{"period": "2026-11", "untenanted": "no"}, want: billing.ExportRequest{Period: nov, Options: export.Options{Format: export.CSV, NoUntenanted: true}}},
		"bad untenanted":  {in: map[string]string{"period": "2026-11", "untenanted": "maybe"}, wantErr: "untenanted=maybe: want yes"},
		"metadata of csv": {in: map[string]string{"period": "2026-11", "metadata": "m.json"}, wantErr: "metadata=m.json: " + billing.ErrMetadataFormat.Error()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseExport(tc.in, tc.asJSON, tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInput) {
					t.Fatalf("err = %v, want an input error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestParseClose(t *testing.T) {
	for in, reread := range map[string]bool{"": true, "yes": true, "no": false} {
		w := map[string]string{"period": "2026-11"}
		if in != "" {
			w["ingest"] = in
		}
		o, err := ParseClose(w)
		if err != nil || o.Period.String() != "2026-11" || o.Reread != reread || o.Actor == "" {
			t.Errorf("ingest=%q: %+v, %v; want reread %v", in, o, err, reread)
		}
	}
	for _, tc := range []struct {
		w   map[string]string
		msg string
	}{
		{map[string]string{"ingest": "no"}, "close needs period=YYYY-MM"},
		{map[string]string{"period": "2026-13"}, "2026-13"},
		{map[string]string{"period": "2026-11", "ingest": "x"}, "ingest=x: want yes or no"},
	} {
		if _, err := ParseClose(tc.w); err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, ErrInput) {
			t.Errorf("%v: err = %v, want an input error saying %q", tc.w, err, tc.msg)
		}
	}
}
