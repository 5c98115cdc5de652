package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/gres/mig"
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

// gres generate prints the rendering's part (Printed), then the check's
// line; its --json is the rendering, with --check too.
func TestGeneratedGresPrints(t *testing.T) {
	res := conf.Result{Node: "gpu-b", Gres: "gpu:1g.10gb:7", GresConf: "gres.conf\n", SlurmConf: "slurm.conf\n"}
	cases := map[string]struct {
		g    GeneratedGres
		text string
	}{
		"gres.conf":        {g: GeneratedGres{Result: res, Printed: res.GresConf}, text: "gres.conf\n"},
		"--check":          {g: GeneratedGres{Result: res, Checked: "gres check gpu-b: OK"}, text: "gres check gpu-b: OK\n"},
		"--write --check":  {g: GeneratedGres{Result: res, Printed: res.SlurmConf, Checked: "gres check gpu-b: OK"}, text: "slurm.conf\ngres check gpu-b: OK\n"},
		"check that fails": {g: GeneratedGres{Result: res}, text: ""},
	}
	want, _ := json.Marshal(res)
	for name, tc := range cases {
		if got := tc.g.Text(); got != tc.text {
			t.Errorf("%s: text %q, want %q", name, got, tc.text)
		}
		if got, err := json.Marshal(tc.g); err != nil || string(got) != string(want) {
			t.Errorf("%s: --json %s (%v), want the rendering %s", name, got, err, want)
		}
	}
}

// gres plan prints the mig-parted config; its --json is the plan.
func TestMIGPlanPrints(t *testing.T) {
	e := &Env{}
	p, err := e.PlanMIG(PlanRequest{Model: "H100-80GB", Count: 1, Want: []string{"3g.40gb=2"}, Name: "gpubridge"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mig.MigPartedConfig("gpubridge", p.Plan)
	if err != nil || p.Text() != cfg {
		t.Errorf("text %q, want %q (%v)", p.Text(), cfg, err)
	}
	got, _ := json.Marshal(p)
	want, _ := json.Marshal(p.Plan)
	if string(got) != string(want) {
		t.Errorf("--json %s, want the plan %s", got, want)
	}
	if _, err := e.PlanMIG(PlanRequest{Model: "H100-80GB", Count: 1, Want: []string{"3g.40gb=2"}, Name: "a b"}); err == nil || !strings.Contains(err.Error(), "mig-parted config name") {
		t.Errorf("a bad --name: %v", err)
	}
}
