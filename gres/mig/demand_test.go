package mig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDemand(t *testing.T) {
	d, err := ParseDemand([]string{"1g.10gb=7, 3g.40gb=2", "h100=1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Demand{"1g.10gb": 7, "3g.40gb": 2, "h100": 1}, d); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for in, want := range map[string]string{
		"1g.10gb":       `--want "1g.10gb": expected PROFILE=COUNT`,
		"=3":            `--want "=3"`,
		"1g.10gb=-1":    `--want "1g.10gb=-1"`,
		"h100=1,h100=2": "--want: h100 given twice",
		",":             "say what to plan with --want",
	} {
		if _, err := ParseDemand([]string{in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
