package table

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWrite(t *testing.T) {
	tb := Table{Header: []string{"Name", "GPUs"}, Rows: [][]string{{"gpu-a", "h100:4"}, {"cpu-a", ""}}}
	cases := map[string]struct {
		o    Options
		want string
	}{
		"parsable":          {Options{Parsable: true}, "Name|GPUs\ngpu-a|h100:4\ncpu-a|\n"},
		"parsable noheader": {Options{Parsable: true, NoHeader: true}, "gpu-a|h100:4\ncpu-a|\n"},
		"table":             {Options{}, "Name   GPUs\n-----  ------\ngpu-a  h100:4\ncpu-a  \n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.o, tb); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, b.String()); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, Options{JSON: true}, Table{Header: []string{"Name", "GPUs"}, Rows: [][]string{{"a", "1"}}}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]string
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if d := cmp.Diff([]map[string]string{{"name": "a", "gpus": "1"}}, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestRaggedRow(t *testing.T) {
	if err := Write(&bytes.Buffer{}, Options{}, Table{Header: []string{"A"}, Rows: [][]string{{"1", "2"}}}); err == nil {
		t.Fatal("want error for ragged row")
	}
}

func TestSelect(t *testing.T) {
	tb := Table{
		Header: []string{"Name", "Partitions", "GPUType", "GPUs"},
		Keys:   []string{"name", "partitions", "gpuType", "gpus"},
		Kinds:  []Kind{String, String, String, Number},
		Rows:   [][]string{{"cpu-a", "cpu", "", "0"}, {"gpu-a", "pool,ondemand", "h100", "4"}, {"gpu-b", "pool,ondemand", "1g.10gb", "7"}},
	}
	cases := map[string]struct {
		o    Options
		want string
	}{
		"-p":                 {Options{Trailing: true}, "Name|Partitions|GPUType|GPUs|\ncpu-a|cpu||0|\ngpu-a|pool,ondemand|h100|4|\ngpu-b|pool,ondemand|1g.10gb|7|\n"},
		"-p -n":              {Options{Trailing: true, NoHeader: true, Format: []string{"name"}}, "cpu-a|\ngpu-a|\ngpu-b|\n"},
		"format by key":      {Options{Parsable: true, Format: []string{"gputype", "NAME"}}, "GPUType|Name\n|cpu-a\nh100|gpu-a\n1g.10gb|gpu-b\n"},
		"where one":          {Options{Parsable: true, Where: map[string]string{"gputype": "h100"}}, "Name|Partitions|GPUType|GPUs\ngpu-a|pool,ondemand|h100|4\n"},
		"where any":          {Options{Parsable: true, Where: map[string]string{"GPUType": "h100,1g.10gb"}, Format: []string{"name"}}, "Name\ngpu-a\ngpu-b\n"},
		"where list element": {Options{Parsable: true, Where: map[string]string{"partitions": "ondemand", "gpus": "7"}, Format: []string{"name"}}, "Name\ngpu-b\n"},
		"where empty value":  {Options{Parsable: true, Where: map[string]string{"gputype": ""}, Format: []string{"name"}}, "Name\ncpu-a\n"},
		"aligned format":     {Options{Format: []string{"name", "gpus"}}, "Name   GPUs\n-----  ----\ncpu-a  0\ngpu-a  4\ngpu-b  7\n"},
		"json kinds":         {Options{JSON: true, Format: []string{"name", "gpus"}, Where: map[string]string{"name": "gpu-a"}}, "[\n  {\n    \"name\": \"gpu-a\",\n    \"gpus\": 4\n  }\n]\n"},
		"json none":          {Options{JSON: true, Where: map[string]string{"name": "x"}}, "[]\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.o, tb); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, b.String()); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestSelectErrors(t *testing.T) {
	tb := Table{Header: []string{"Name", "GPUType"}, Keys: []string{"name", "gpuType"}, Rows: [][]string{{"a", "h100"}}}
	cases := map[string]struct {
		o    Options
		want string
	}{
		"format typo":  {Options{Format: []string{"gputyp"}}, "format=gputyp: no such column (did you mean gpuType?); columns: name,gpuType"},
		"filter typo":  {Options{Where: map[string]string{"nme": "a"}, Options: []string{"tenant"}}, "nme=: neither an option nor a column (did you mean name?); columns: name,gpuType; options: tenant"},
		"raw object":   {Options{JSON: true, Format: []string{"name"}}, "do not apply to this command's --json"},
		"number nulls": {Options{}, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tb := tb
			if name == "raw object" {
				tb.Raw = struct{ A int }{1}
			}
			err := Write(&bytes.Buffer{}, tc.o, tb)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestJSONKinds(t *testing.T) {
	tb := Table{Header: []string{"Rate", "Amount", "Ok"}, Kinds: []Kind{Number, Number, Bool}, Rows: [][]string{{"2.10", "no rate", "true"}, {"-", "", "maybe"}}}
	var b bytes.Buffer
	if err := Write(&b, Options{JSON: true}, tb); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"rate": 2.10, "amount": nil, "ok": true}, {"rate": nil, "amount": nil, "ok": nil}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestRawFilteredAndProjected(t *testing.T) {
	type row struct {
		Name string `json:"name"`
		GPUs int    `json:"gpus"`
		Tags []string
	}
	raw := []row{{"a", 1, nil}, {"b", 2, []string{"x"}}}
	tb := Table{Header: []string{"Name", "GPUs"}, Rows: [][]string{{"a", "1"}, {"b", "2"}}, Raw: raw}
	var b bytes.Buffer
	if err := Write(&b, Options{JSON: true, Where: map[string]string{"name": "b"}, Format: []string{"gpus"}}, tb); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("[\n  {\n    \"gpus\": 2\n  }\n]\n", b.String()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestWidths: format=COL%N as sacctmgr's print_fields: %N right-justified,
// %-N left-justified, a longer value (and header) cut to N with '+' last;
// the parsable forms and JSON ignore widths.
func TestWidths(t *testing.T) {
	tb := Table{Header: []string{"Name", "GPUs"}, Rows: [][]string{{"gpu-a", "h100:4"}, {"a-very-long-node", "2"}}}
	cases := map[string]struct {
		o    Options
		want string
	}{
		"right":            {Options{Format: []string{"name%8", "gpus%6"}}, "    Name    GPUs\n--------  ------\n   gpu-a  h100:4\na-very-+       2\n"},
		"left":             {Options{Format: []string{"name%-8", "gpus%-3"}}, "Name      GP+\n--------  ---\ngpu-a     h1+\na-very-+  2  \n"},
		"mixed":            {Options{Format: []string{"gpus", "name%-6"}}, "GPUs    Name  \n------  ------\nh100:4  gpu-a \n2       a-ver+\n"},
		"parsable ignores": {Options{Parsable: true, Format: []string{"name%3"}}, "Name\ngpu-a\na-very-long-node\n"},
		"json ignores":     {Options{JSON: true, Format: []string{"name%3"}}, "[\n  {\n    \"name\": \"gpu-a\"\n  },\n  {\n    \"name\": \"a-very-long-node\"\n  }\n]\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.o, tb); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, b.String()); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, Options{Format: []string{"name%x"}}, tb); err == nil || !strings.Contains(err.Error(), "name%20 (right-justified)") {
		t.Errorf("format=name%%x: %v", err)
	}
}
