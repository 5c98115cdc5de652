package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBookingBadInputOffline: input problems are found before any backend
// is needed, each naming its field, exit status 2, nothing changed.
func TestBookingBadInputOffline(t *testing.T) {
	noBackends(t)
	t.Setenv("TZ", "")
	cases := map[string]struct {
		args []string
		tz   string
		want []string
	}{
		"end before start": {args: []string{"add", "booking", "tenant=acme", "gpus=h100:1", "start=2027-01-02T00:00Z", "end=2027-01-01T00:00Z"},
			want: []string{"nothing was changed", "end: 2027-01-01T00:00:00Z is not after start 2027-01-02T00:00:00Z"}},
		"zero count":     {args: []string{"add", "booking", "tenant=acme", "gpus=h100:0", "start=now+1d", "duration=1d"}, want: []string{"gpus: count is 0"}},
		"negative count": {args: []string{"add", "booking", "tenant=acme", "gpus=h100:-1", "start=now+1d", "duration=1d"}, want: []string{"gpus: count -1 is negative"}},
		"no zone": {args: []string{"add", "booking", "tenant=acme", "gpus=h100:1", "start=2027-01-02T09:00", "duration=1d"},
			want: []string{`start: time has no zone: "2027-01-02T09:00" has no offset and TZ is not set`, "TZ=Europe/Berlin"}},
		"dst gap": {args: []string{"add", "booking", "tenant=acme", "gpus=h100:1", "start=2027-03-28T02:30", "duration=1d"}, tz: "Europe/Berlin",
			want: []string{`start: "2027-03-28T02:30" does not exist in Europe/Berlin`}},
		"bad tz":        {args: []string{"add", "booking", "tenant=acme", "gpus=h100:1", "start=now", "duration=1d"}, tz: "Mars/Olympus", want: []string{`TZ="Mars/Olympus" is not a time zone`}},
		"unknown key":   {args: []string{"add", "booking", "tenant=acme", "count=3"}, want: []string{`unknown option "count"`}},
		"every problem": {args: []string{"add", "booking", "gpus=h100", "start=soon"}, want: []string{"4 problem(s)", "tenant: required", "gpus: \"h100\": want NAME:COUNT", "start: \"soon\" is not a time", "end: required"}},
		"modify id":     {args: []string{"modify", "booking", "x", "set", "end=now+1d"}, want: []string{`"x" is not a booking id`}},
		"modify empty":  {args: []string{"modify", "booking", "3", "set", "end=never"}, want: []string{`end: "never" is not a time`}},
		"delete id":     {args: []string{"delete", "booking", "-3"}, want: []string{"unknown shorthand flag"}},
		"show state":    {args: []string{"show", "bookings", "state=gone"}, want: []string{`state: "gone" is not a state`}},
		"show format":   {args: []string{"show", "bookings", "format=id,cost"}, want: []string{`format=cost: no such column; columns: id,tenant,gpus,`}},
		"availability":  {args: []string{"show", "availability", "step=1y"}, want: []string{"step: duration \"1y\""}},
		"avail columns": {args: []string{"show", "availability", "format=type,when"}, want: []string{"format=when: no such column; columns: type,from,free,booked,cap,bar,to,pool"}},
		"avail json":    {args: []string{"show", "availability", "format=type,free", "--json"}, want: []string{"show availability --json prints one object"}},
		"maint columns": {args: []string{"show", "maintenance", "where", "node=gpu-a"}, want: []string{`unknown option or column "node" (did you mean nodes?)`}},
		"maint name":    {args: []string{"show", "maintenance", "gpu-a"}, want: []string{`unexpected "gpu-a": filter with where COLUMN=gpu-a`}},
		"show filter":   {args: []string{"show", "bookings", "where", "gpu=h100:2"}, want: []string{`unknown option or column "gpu" (did you mean gpus?)`}},
		"find count":    {args: []string{"find", "slot", "type=h100", "count=many", "duration=1d"}, want: []string{`count: "many" is not a whole number`}},
		"find entity":   {args: []string{"find", "room"}, want: []string{"unknown command"}},
		"maintenance":   {args: []string{"add", "maintenance", "nodes=gpu-a", "start=now"}, want: []string{"end: give end= or duration="}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TZ", c.tz)
			var out, errb bytes.Buffer
			code := run(append([]string{"-i"}, c.args...), strings.NewReader(""), &out, &errb)
			if code == 0 {
				t.Fatalf("exit 0\nstdout: %s", out.String())
			}
			if code != 2 && !strings.Contains(errb.String(), "unknown") {
				t.Errorf("exit %d; want 2\nstderr: %s", code, errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr:\n%s\nwant %q", errb.String(), w)
				}
			}
		})
	}
}
