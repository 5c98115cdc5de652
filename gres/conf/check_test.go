package conf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNodeGres(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    NodeGres
		wantErr string
	}{
		"testbed gpu-b":       {in: "gpu:1g.10gb:7,gpu:3g.40gb:2(S:0)", want: NodeGres{"1g.10gb": 7, "3g.40gb": 2}},
		"sockets per entry":   {in: "gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:0-1)", want: NodeGres{"1g.10gb": 7, "3g.40gb": 2}},
		"commas in sockets":   {in: "gpu:h100:4(S:0,1),shard:8", want: NodeGres{"h100": 4}},
		"untyped":             {in: "gpu:4", want: NodeGres{"": 4}},
		"typed and untyped":   {in: "gpu:h100:2,gpu:2", want: NodeGres{"h100": 2, "": 2}},
		"other GRES only":     {in: "mps:400,bandwidth:lustre:4G", want: NodeGres{}},
		"TRES form":           {in: "gres/gpu:h100:2", want: NodeGres{"h100": 2}},
		"no_consume flag":     {in: "gpu:h100:no_consume:2", want: NodeGres{"h100": 2}},
		"null":                {in: "(null)", want: NodeGres{}},
		"empty":               {in: "", want: NodeGres{}},
		"used with IDX":       {in: "gpu:h100:0(IDX:N/A)", want: NodeGres{"h100": 0}},
		"bad count":           {in: "gpu:h100:two", wantErr: `count "two" is not a non-negative number`},
		"unbalanced":          {in: "gpu:h100:2(S:0", wantErr: "unbalanced parenthesis"},
		"empty entry":         {in: "gpu:h100:2,,gpu:a100:1", wantErr: "empty entry"},
		"bare name is one":    {in: "gpu", want: NodeGres{"": 1}},
		"same type twice add": {in: "gpu:1g.10gb:3(S:0),gpu:1g.10gb:4(S:1)", want: NodeGres{"1g.10gb": 7}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseNodeGres(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	want := NodeGres{"1g.10gb": 7, "3g.40gb": 2}
	cases := map[string]struct {
		got  NodeGres
		want []Mismatch
	}{
		"equal":         {got: NodeGres{"3g.40gb": 2, "1g.10gb": 7}},
		"fewer":         {got: NodeGres{"1g.10gb": 6, "3g.40gb": 2}, want: []Mismatch{{"1g.10gb", 7, 6}}},
		"missing type":  {got: NodeGres{"1g.10gb": 7}, want: []Mismatch{{"3g.40gb", 2, 0}}},
		"untyped slurm": {got: NodeGres{"": 9}, want: []Mismatch{{"", 0, 9}, {"1g.10gb", 7, 0}, {"3g.40gb", 2, 0}}},
		"extra type":    {got: NodeGres{"1g.10gb": 7, "3g.40gb": 2, "h100": 1}, want: []Mismatch{{"h100", 0, 1}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Compare(want, tc.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if s := (Mismatch{"", 0, 9}).String(); s != "gpu:(untyped): inventory 0, Slurm 9" {
		t.Errorf("String() = %q", s)
	}
	if s := (NodeGres{"b": 1, "": 2}).String(); s != "gpu:2,gpu:b:1" {
		t.Errorf("String() = %q", s)
	}
}
