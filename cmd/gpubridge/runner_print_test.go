package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/table"
)

// TestPrintsAndTells: prints writes a printout's parts in order, tables
// through Print (format= applies), notes to stderr; tells prints its text
// with --json too.
func TestPrintsAndTells(t *testing.T) {
	var out, errw bytes.Buffer
	a := &App{Env: &app.Env{}, out: &out, err: &errw}
	a.output.Format = []string{"name"}
	tb := table.Table{Header: []string{"Name", "Other"}, Keys: []string{"name", "other"}, Rows: [][]string{{"x", "y"}}}
	view := func(s string, _ table.Options) app.Printout { return app.Printout{}.Notes("note").Table(tb).Text(s) }
	if err := prints(a, view)("after\n", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out.String()); strings.Join(got, " ") != "Name ---- x after" || errw.String() != "note\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errw.String())
	}
	out.Reset()
	boom := errors.New("boom")
	if err := prints(a, view)("never", boom); !errors.Is(err, boom) || out.Len() != 0 {
		t.Errorf("error: %v, stdout %q", err, out.String())
	}
	a.output.JSON = true
	if err := tells(a, func(s string) string { return s + "\n" })("text", nil); err != nil || out.String() != "text\n" {
		t.Errorf("tells --json: %v, stdout %q", err, out.String())
	}
}

// TestAccountingRefusals: what these commands refuse of what was typed
// exits 2 before anything connects.
func TestAccountingRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		err  string
	}{
		"show ingest name":   {[]string{"show", "ingest", "tb"}, `unexpected "tb": filter with where COLUMN=tb`},
		"show rates name":    {[]string{"show", "rates", "h100"}, `unexpected "h100": filter with where COLUMN=h100`},
		"show ratecard name": {[]string{"show", "ratecard", "h100"}, `unexpected "h100": filter with where COLUMN=h100`},
		"delete token":       {[]string{"delete", "token", "tenant=acme"}, token.DeleteUsage},
		"delete token name":  {[]string{"delete", "token", "ci"}, token.DeleteUsage},
		"add token name":     {[]string{"add", "token", "ci"}, `add token takes key=value options only (got "ci")`},
		"show tokens name":   {[]string{"show", "tokens", "acme"}, `show tokens takes tenant=NAME only (got "acme")`},
		"ingest name":        {[]string{"ingest", "now"}, `unexpected "now": use from=, to=, source=, pass=, accept-missing=`},
		"close name":         {[]string{"close", "2026-11"}, "close needs period=YYYY-MM"},
		"export name":        {[]string{"export", "chargeback", "2026-11"}, `unexpected "2026-11"`},
		"charge bookings":    {[]string{"charge", "bookings", "now"}, "charge bookings takes no arguments"},
		"charge bookings kv": {[]string{"charge", "bookings", "x=1"}, "charge bookings takes no arguments"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errw := cli(t, tc.args...)
			if code != 2 || !strings.Contains(errw, tc.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errw, tc.err)
			}
		})
	}
}
