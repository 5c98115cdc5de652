package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/app"
	"github.com/gpubridge/gpubridge/internal/table"
)

type helpResult struct{ N int }

func (r helpResult) Table() table.Table {
	return table.Table{Header: []string{"N"}, Rows: [][]string{{string(rune('0' + r.N))}}}
}

func (r helpResult) Text() string { return "did " + string(rune('0'+r.N)) + "\n" }

// showsPartly and saysPartly print what a use case did also when it
// failed after it (a result beside the error), and nothing when it did
// nothing (no result); the use case's error is returned either way.
func TestPrintsPartly(t *testing.T) {
	failed := errors.New("failed part-way")
	r := &helpResult{N: 3}
	cases := map[string]struct {
		o        table.Options
		says     bool
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			a := &App{Env: &app.Env{}, out: &out, err: &out, output: tc.o}
			var err error
			if tc.says {
				err = saysPartly(a, helpResult.Text)(tc.v, tc.err)
			} else {
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

// showsNoted prints the notes under the table for people only: -P and
// --json print the table (its record) alone; view is told which form.
func TestShowsNoted(t *testing.T) {
	view := func(r helpResult, parsable bool) (table.Table, string) {
		t := r.Table()
		if parsable {
			t.Header[0] = "P"
		}
		t.Raw = []helpResult{r}
		return t, "a note\n"
	}
	cases := map[string]struct {
		o    table.Options
		want string
	}{
		"aligned": {want: "N\n-\n3\na note\n"},
		"-P":      {o: table.Options{Parsable: true}, want: "P\n3\n"},
		"--json":  {o: table.Options{JSON: true}, want: "[\n  {\n    \"N\": 3\n  }\n]\n"},
	}
	for name, tc := range cases {
		var out bytes.Buffer
		a := &App{Env: &app.Env{}, out: &out, output: tc.o}
		if err := showsNoted(a, view)(helpResult{N: 3}, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, out.String()); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
		if a.out != &out {
			t.Errorf("%s: the App's output stays buffered", name)
		}
	}
	var out bytes.Buffer
	a := &App{Env: &app.Env{}, out: &out}
	if err := showsNoted(a, view)(helpResult{}, errors.New("no")); err == nil || out.Len() > 0 {
		t.Errorf("a failed use case: %v, printed %q", err, out.String())
	}
}

// recordColumns: the default columns unless format= picks others; --json
// prints whole records whatever format= says.
func TestRecordColumns(t *testing.T) {
	cases := map[string]struct {
		o    table.Options
		want []string
	}{
		"default":       {want: []string{"id", "tenant"}},
		"format=":       {o: table.Options{Format: []string{"state"}}, want: []string{"state"}},
		"--json":        {o: table.Options{JSON: true}},
		"--json format": {o: table.Options{JSON: true, Format: []string{"state"}}},
	}
	for name, tc := range cases {
		a := &App{Env: &app.Env{}, output: tc.o}
		a.recordColumns([]string{"id", "tenant"})
		if diff := cmp.Diff(tc.want, a.output.Format); diff != "" {
			t.Errorf("%s (-want +got)\n%s", name, diff)
		}
	}
}
