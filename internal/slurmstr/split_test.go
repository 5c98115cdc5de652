package slurmstr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitTop(t *testing.T) {
	cases := map[string]struct {
		in          string
		open, close rune
		want        []string
	}{
		"gres with socket list": {"gpu:h100:2(S:0,1),gpu:1g.10gb:7(S:0)", '(', ')', []string{"gpu:h100:2(S:0,1)", "gpu:1g.10gb:7(S:0)"}},
		"hostlist":              {"gpu-[a,c-d],cpu-a", '[', ']', []string{"gpu-[a,c-d]", "cpu-a"}},
		"empty":                 {"", '(', ')', []string{""}},
		"no comma":              {"gpu:h100:4", '(', ')', []string{"gpu:h100:4"}},
		"stray close":           {"a),b", '(', ')', []string{"a)", "b"}},
		"nested":                {"a((b,c),d),e", '(', ')', []string{"a((b,c),d)", "e"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, SplitTop(tc.in, tc.open, tc.close)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}
