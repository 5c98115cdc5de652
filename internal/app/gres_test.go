package app

import (
	"testing"

	"github.com/gpubridge/gpubridge/gres/conf"
)

func TestGresPrinted(t *testing.T) {
	res := conf.Result{GresConf: "gres.conf", SlurmConf: "slurm.conf"}
	cases := map[string]struct {
		r    GresRequest
		text string
		show bool
	}{
		"default":              {r: GresRequest{}, text: "gres.conf", show: true},
		"--slurm-conf":         {r: GresRequest{SlurmConf: true}, text: "slurm.conf", show: true},
		"--write":              {r: GresRequest{Write: "/x"}, text: "slurm.conf", show: true},
		"--write --check":      {r: GresRequest{Write: "/x", Check: true}, text: "slurm.conf", show: true},
		"--check":              {r: GresRequest{Check: true}},
		"--check --slurm-conf": {r: GresRequest{Check: true, SlurmConf: true}},
	}
	for name, tc := range cases {
		if text, show := tc.r.Printed(res); text != tc.text || show != tc.show {
			t.Errorf("%s: %q %v, want %q %v", name, text, show, tc.text, tc.show)
		}
	}
}
