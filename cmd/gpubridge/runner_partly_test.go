package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/table"
)

type helpResult struct{ N int }

func (r helpResult) Table() table.Table {
	return table.Table{Header: []string{"N"}, Rows: [][]string{{string(rune('0' + r.N))}}}
}

func (r helpResult) Text() string { return "did " + string(rune('0'+r.N)) + "\n" }

// showsPartly, saysPartly and partly(tells) print what a use case did
// also when it failed after it (a result beside the error), and nothing
// when it did nothing (no result); the use case's error is returned
// either way.
func TestPrintsPartly(t *testing.T) {
	failed := errors.New("failed part-way")
	r := &helpResult{N: 3}
	cases := map[string]struct {
		o        table.Options
		says     bool
		tells    bool
		v        *helpResult
		err      error
		want     string
		wantsErr error
	}{
		"table":          {o: table.Options{Parsable: true}, v: r, want: "N\n3\n"},
		"table, failed":  {o: table.Options{Parsable: true}, v: r, err: failed, want: "N\n3\n", wantsErr: failed},
		"nothing done":   {o: table.Options{Parsable: true}, err: failed, wantsErr: failed},
		"text, failed":   {says: true, v: r, err: failed, want: "did 3\n", wantsErr: failed},
		"text, --json":   {says: true, o: table.Options{JSON: true}, v: r, want: "{\n  \"N\": 3\n}\n"},
		"text, not done": {says: true, err: failed, wantsErr: failed},
		"tells, --json":  {tells: true, o: table.Options{JSON: true}, v: r, err: failed, want: "did 3\n", wantsErr: failed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			a := &App{Env: &app.Env{}, out: &out, err: &out, output: tc.o}
			var err error
			switch {
			case tc.tells:
				err = partly(tells(a, helpResult.Text))(tc.v, tc.err)
			case tc.says:
				err = saysPartly(a, helpResult.Text)(tc.v, tc.err)
			default:
				err = showsPartly(a, helpResult.Table)(tc.v, tc.err)
			}
			if !errors.Is(err, tc.wantsErr) || (tc.wantsErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.wantsErr)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// atOnce prints what print prints, all of it in one write at the end,
// and gives the App its own output back; an error of the use case is
// returned, nothing printed.
func TestAtOnce(t *testing.T) {
	var out countingWriter
	a := &App{Env: &app.Env{}, out: &out, output: table.Options{Parsable: true}}
	print := func(v helpResult, err error) error {
		if err != nil {
			return err
		}
		for range 3 {
			if err := a.Print(v.Table()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := atOnce(a, print)(helpResult{N: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if out.writes != 1 || out.String() != "N\n3\nN\n3\nN\n3\n" {
		t.Errorf("%d writes of %q, want 1", out.writes, out.String())
	}
	if a.out != &out {
		t.Errorf("the App's output stays buffered")
	}
	failed := errors.New("no")
	out = countingWriter{}
	if err := atOnce(a, print)(helpResult{}, failed); !errors.Is(err, failed) || out.Len() > 0 {
		t.Errorf("a failed use case: %v, printed %q", err, out.String())
	}
}

// countingWriter counts the writes it is given.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// showsRecordsBy: the default columns unless format= picks others; --json
// prints whole records whatever format= says.
func TestShowsRecordsBy(t *testing.T) {
	records := table.Table{Header: []string{"ID", "Tenant", "State"}, Rows: [][]string{{"4", "acme", "active"}}, Raw: []map[string]any{{"id": 4, "tenant": "acme", "state": "active", "purpose": "p"}}}
	cases := map[string]struct {
		o    table.Options
		want string
	}{
		"default":       {o: table.Options{Parsable: true}, want: "ID|Tenant\n4|acme\n"},
		"format=":       {o: table.Options{Parsable: true, Format: []string{"state"}}, want: "State\nactive\n"},
		"--json":        {o: table.Options{JSON: true}, want: `[{"id":4,"purpose":"p","state":"active","tenant":"acme"}]`},
		"--json format": {o: table.Options{JSON: true, Format: []string{"state"}}, want: `[{"id":4,"purpose":"p","state":"active","tenant":"acme"}]`},
	}
	for name, tc := range cases {
		var out bytes.Buffer
		a := &App{Env: &app.Env{}, out: &out, output: tc.o}
		if err := showsRecordsBy(a, []string{"id", "tenant"}, func(table.Table) table.Table { return records })(records, nil); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if tc.o.JSON {
			var c bytes.Buffer
			if err := json.Compact(&c, out.Bytes()); err != nil {
				t.Fatal(err)
			}
			got = c.String()
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
	}
}
