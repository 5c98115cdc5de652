package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/app"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

func TestTimeArg(t *testing.T) {
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
			got, err := timeArg("from", tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !tc.wantErr && !got.Equal(tc.want) {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if tc.wantErr {
				if _, ok := err.(usageError); !ok {
					t.Errorf("want a usage error, got %T", err)
				}
			}
		})
	}
}

func TestPeriodArg(t *testing.T) {
	p, err := periodArg("2026-02")
	if err != nil || p.String() != "2026-02" {
		t.Fatalf("periodArg: %v %v", p, err)
	}
	if _, err := periodArg("Feb"); err == nil {
		t.Error("want an error")
	}
	if p, err := periodArg(""); err != nil || p.Start().After(time.Now()) {
		t.Errorf("default period %v %v", p, err)
	}
}

func TestAccountingCommandsRegistered(t *testing.T) {
	root := newRootCmd(&App{Env: &app.Env{}})
	for _, path := range [][]string{
		{"ingest"}, {"close"}, {"export", "chargeback"}, {"show", "usage"}, {"show", "rates"}, {"show", "ratecard"},
		{"add", "rate"}, {"add", "gputype"}, {"delete", "rate"}, {"load", "ratecard"},
	} {
		c, rest, err := root.Find(path)
		if err != nil || len(rest) != 0 || c.Name() != path[len(path)-1] {
			t.Errorf("command %v not found (%v, %v)", path, c.Name(), err)
		}
	}
}

func TestPeriodsArg(t *testing.T) {
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
			ps, err := periodsArg(tc.in)
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
	if _, err := periodsArg(map[string]string{"start": "2016-01", "end": "2026-11"}); err == nil || !strings.Contains(err.Error(), "at most 120") {
		t.Errorf("130 periods: %v", err)
	}
}
