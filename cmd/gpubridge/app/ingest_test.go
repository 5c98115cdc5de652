package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ingest"
)

func TestParseAccept(t *testing.T) {
	a, err := ParseAccept("2026-11-20T12:00..2026-11-20T14:00")
	if err != nil || !a.From.Equal(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)) || !a.To.Equal(time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC)) || a.Actor == "" {
		t.Fatalf("ParseAccept = %+v, %v", a, err)
	}
	for _, bad := range []string{"2026-11-20T12:00", "2026-11-20T14:00..2026-11-20T12:00", "x..2026-11-20", "2026-11-20T12:00..2026-11-20T12:00"} {
		if _, err := ParseAccept(bad); err == nil {
			t.Errorf("ParseAccept(%q): want an error", bad)
		} else if !errors.Is(err, ErrInput) {
			t.Errorf("ParseAccept(%q): %T, want an input error", bad, err)
		}
	}
}

func TestParseIngest(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		in      map[string]string
		want    IngestRequest
		wantErr string
	}{
		"none":               {in: map[string]string{}},
		"window and source":  {in: map[string]string{"from": "2026-11-01", "to": "2026-11", "source": "slurmrestd"}, want: IngestRequest{Window: ingest.Window{From: from, To: from}, Source: "slurmrestd"}},
		"changes":            {in: map[string]string{"pass": "changes"}, want: IngestRequest{Window: ingest.Window{Changes: true}, Pass: "changes"}},
		"verify":             {in: map[string]string{"pass": "verify"}, want: IngestRequest{Pass: "verify"}},
		"verify with from":   {in: map[string]string{"pass": "verify", "from": "2026-11-01"}, wantErr: "pass=verify chooses its own window: leave out from="},
		"scheduled and from": {in: map[string]string{"pass": "scheduled", "from": "2026-11-01"}, wantErr: "pass=scheduled chooses its own window"},
		"unknown pass":       {in: map[string]string{"pass": "all"}, wantErr: "pass=all: want changes, verify or scheduled"},
		"bad from":           {in: map[string]string{"from": "yesterday"}, wantErr: `from="yesterday"`},
		"bad to":             {in: map[string]string{"to": "x"}, wantErr: `to="x"`},
		"bad accept-missing": {in: map[string]string{"accept-missing": "2026-11-20"}, wantErr: "want FROM..TO"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseIngest(tc.in)
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
