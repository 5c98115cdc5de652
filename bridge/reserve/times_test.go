package reserve

import (
	"errors"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the host has installed
)

func zone(t *testing.T, name string) Zone {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return Zone{Name: name, Location: loc}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 15, 30, 500_000_000, time.UTC)
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	cases := map[string]struct {
		in   string
		zone Zone
		want string // RFC 3339 UTC, or "" when an error is expected
		err  []string
	}{
		"rfc3339 Z":            {in: "2026-12-14T00:00:00Z", want: "2026-12-14T00:00:00Z"},
		"rfc3339 no seconds":   {in: "2026-12-14T00:00Z", want: "2026-12-14T00:00:00Z"},
		"rfc3339 offset":       {in: "2026-12-14T09:00:00+01:00", want: "2026-12-14T08:00:00Z"},
		"rfc3339 space":        {in: "2026-12-14 09:00-05:00", want: "2026-12-14T14:00:00Z"},
		"offset wins over TZ":  {in: "2026-12-14T09:00+00:00", zone: berlin, want: "2026-12-14T09:00:00Z"},
		"now":                  {in: "now", want: "2026-11-20T10:15:30Z"},
		"now plus days":        {in: "now+2d", want: "2026-11-22T10:15:30Z"},
		"now plus minutes":     {in: "NOW+90m", want: "2026-11-20T11:45:30Z"},
		"now plus mixed":       {in: "now+1d12h", want: "2026-11-21T22:15:30Z"},
		"now minus":            {in: "now-1h", want: "2026-11-20T09:15:30Z"},
		"now bad":              {in: "now2d", err: []string{"want +DURATION"}},
		"now bad unit":         {in: "now+2y", err: []string{"units w, d, h, m or s"}},
		"fraction":             {in: "2026-12-14T00:00:00.5Z", err: []string{"second resolution"}},
		"garbage":              {in: "next tuesday", err: []string{"is not a time", "now+2d"}},
		"empty":                {in: " ", err: []string{"empty time"}},
		"local no TZ":          {in: "2026-12-14T09:00", err: []string{"has no offset and TZ is not set", "2026-12-14T09:00Z", "TZ=Europe/Berlin"}},
		"date no TZ":           {in: "2026-12-14", err: []string{"has no offset and TZ is not set"}},
		"local berlin winter":  {in: "2026-12-14T09:00", zone: berlin, want: "2026-12-14T08:00:00Z"},
		"local berlin summer":  {in: "2026-07-14 09:00:30", zone: berlin, want: "2026-07-14T07:00:30Z"},
		"date berlin":          {in: "2026-03-29", zone: berlin, want: "2026-03-28T23:00:00Z"},
		"date new york":        {in: "2026-11-01", zone: ny, want: "2026-11-01T04:00:00Z"},
		"ny before spring gap": {in: "2026-03-08T01:59:59", zone: ny, want: "2026-03-08T06:59:59Z"},
		"ny after spring gap":  {in: "2026-03-08T03:00", zone: ny, want: "2026-03-08T07:00:00Z"},
		"ny spring gap": {in: "2026-03-08T02:30", zone: ny,
			err: []string{`"2026-03-08T02:30" does not exist in America/New_York`, "EST -05:00 to EDT -04:00", "2026-03-08T02:30:00-05:00"}},
		"ny spring gap start": {in: "2026-03-08T02:00", zone: ny, err: []string{"does not exist"}},
		"ny gap with offset":  {in: "2026-03-08T02:30-05:00", zone: ny, want: "2026-03-08T07:30:00Z"},
		"ny fall ambiguous": {in: "2026-11-01T01:30", zone: ny,
			err: []string{"is ambiguous in America/New_York", "2026-11-01T01:30:00-04:00 (EDT, the first)", "2026-11-01T01:30:00-05:00 (EST, the second)"}},
		"ny fall first":           {in: "2026-11-01T01:30-04:00", zone: ny, want: "2026-11-01T05:30:00Z"},
		"ny fall second":          {in: "2026-11-01T01:30-05:00", zone: ny, want: "2026-11-01T06:30:00Z"},
		"ny after fall":           {in: "2026-11-01T02:00", zone: ny, want: "2026-11-01T07:00:00Z"},
		"berlin spring gap":       {in: "2026-03-29T02:30", zone: berlin, err: []string{"does not exist in Europe/Berlin", "CET +01:00 to CEST +02:00"}},
		"berlin before gap":       {in: "2026-03-29T01:59:59", zone: berlin, want: "2026-03-29T00:59:59Z"},
		"berlin fall ambiguous":   {in: "2026-10-25T02:30", zone: berlin, err: []string{"is ambiguous in Europe/Berlin", "+02:00 (CEST, the first)", "+01:00 (CET, the second)"}},
		"berlin fall with offset": {in: "2026-10-25T02:30+01:00", zone: berlin, want: "2026-10-25T01:30:00Z"},
		"berlin fall unambiguous": {in: "2026-10-25T03:00", zone: berlin, want: "2026-10-25T02:00:00Z"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTime(c.in, now, c.zone)
			if c.want != "" {
				if err != nil {
					t.Fatalf("ParseTime(%q) error %v; want %s", c.in, err, c.want)
				}
				if !got.Equal(utc(c.want)) || got.Location() != time.UTC {
					t.Fatalf("ParseTime(%q) = %v; want %s", c.in, got, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseTime(%q) = %v; want an error", c.in, got)
			}
			for _, w := range c.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestParseTimeNoZoneSentinel(t *testing.T) {
	_, err := ParseTime("2026-12-14", time.Now(), Zone{})
	if !errors.Is(err, ErrNoZone) {
		t.Fatalf("err = %v; want ErrNoZone", err)
	}
}

// A day is 24 hours: a booking of 1d that starts before a daylight-saving
// change ends 24 hours later (at 13:00 local after spring forward), and the
// stored UTC window never moves.
func TestDurationAcrossDST(t *testing.T) {
	ny := zone(t, "America/New_York")
	start, err := ParseTime("2026-03-07T12:00", time.Now(), ny)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDuration("1d")
	if err != nil {
		t.Fatal(err)
	}
	end := start.Add(d)
	if got := FormatTime(end, ny, true); got != "2026-03-08T13:00:00-04:00" {
		t.Errorf("end local = %s; want 2026-03-08T13:00:00-04:00", got)
	}
	if got := FormatTime(end, ny, false); got != "2026-03-08T17:00:00Z" {
		t.Errorf("end UTC = %s; want 2026-03-08T17:00:00Z", got)
	}
}

func TestParseDuration(t *testing.T) {
	cases := map[string]struct {
		in   string
		want time.Duration
		err  string
	}{
		"days":      {in: "14d", want: 14 * 24 * time.Hour},
		"weeks":     {in: "2w", want: 14 * 24 * time.Hour},
		"minutes":   {in: "90m", want: 90 * time.Minute},
		"mixed":     {in: "1d12h", want: 36 * time.Hour},
		"upper":     {in: "36H", want: 36 * time.Hour},
		"seconds":   {in: "30s", want: 30 * time.Second},
		"zero":      {in: "0d", err: "must be positive"},
		"negative":  {in: "-1d", err: "whole numbers with units"},
		"no unit":   {in: "14", err: "whole numbers with units"},
		"fraction":  {in: "1.5d", err: "whole numbers with units"},
		"years":     {in: "1y", err: "whole numbers with units"},
		"twice":     {in: "1d1d", err: "whole numbers with units"},
		"too long":  {in: "99999999999w", err: "too long"},
		"empty":     {in: "", err: "empty duration"},
		"go syntax": {in: "1h30m", want: 90 * time.Minute},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDuration(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseDuration(%q) = %v, %v; want error containing %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			if back, err := ParseDuration(FormatDuration(got)); err != nil || back != got {
				t.Errorf("round trip of %v via %q = %v, %v", got, FormatDuration(got), back, err)
			}
		})
	}
}

func TestFormatTime(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	at := utc("2026-07-14T07:00:00Z")
	if got := FormatTime(at, berlin, false); got != "2026-07-14T07:00:00Z" {
		t.Errorf("UTC: %s", got)
	}
	if got := FormatTime(at, berlin, true); got != "2026-07-14T09:00:00+02:00" {
		t.Errorf("local: %s", got)
	}
	if got := FormatTime(at, Zone{}, true); got != "2026-07-14T07:00:00Z" {
		t.Errorf("local without a zone falls back to UTC: %s", got)
	}
	if got := FormatTime(time.Time{}, berlin, true); got != "" {
		t.Errorf("zero: %q", got)
	}
}
