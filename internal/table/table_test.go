package table

import (
	"bytes"
	"encoding/json"
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
