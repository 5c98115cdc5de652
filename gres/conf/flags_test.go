package conf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWeightsAndCores(t *testing.T) {
	w, err := ParseWeights(map[string]string{"h100": "7", "a100": "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]float64{"h100": 7, "a100": 0.5}, w); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"-1", "NaN", "Inf", "x", "1e9"} {
		if _, err := ParseWeights(map[string]string{"h100": bad}); err == nil || !strings.Contains(err.Error(), "--gpu-weight h100="+bad) {
			t.Errorf("weight %q: %v", bad, err)
		}
	}
	c, err := ParseCores(map[string]string{"0": "0-3", "1": "4-7"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[int]string{0: "0-3", 1: "4-7"}, c); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"-1", "+1", "a", "0x1"} {
		if _, err := ParseCores(map[string]string{bad: "0"}); err == nil || !strings.Contains(err.Error(), "the key is a GPU index") {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}
