package mig

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/golden"
)

func gpus(model string, n int) []GPU {
	m, err := ModelNamed(model)
	if err != nil {
		panic(err)
	}
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{Index: i, Model: m}
	}
	return out
}

// provided sums what a plan gives: instances per profile and whole GPUs
// per model type.
func provided(p Plan) Demand {
	d := Demand{}
	for _, g := range p.GPUs {
		m, _ := ModelNamed(g.Model)
		if g.Whole {
			d[m.Type]++
		}
		for _, s := range g.Layout {
			d[s.Profile]++
		}
	}
	return d
}

func checkPlan(t *testing.T, gs []GPU, want Demand, p Plan) {
	t.Helper()
	if len(p.GPUs) != len(gs) {
		t.Fatalf("plan has %d GPUs, want %d", len(p.GPUs), len(gs))
	}
	for _, g := range p.GPUs {
		m, _ := ModelNamed(g.Model)
		if err := m.Validate(g.Layout); err != nil {
			t.Fatalf("GPU %d layout %s is invalid: %v", g.Index, g.Layout, err)
		}
		if g.Whole && g.MIGEnabled() {
			t.Fatalf("GPU %d is both whole and MIG", g.Index)
		}
	}
	clean := Demand{}
	for k, v := range want {
		if v > 0 {
			clean[k] = v
		}
	}
	if diff := cmp.Diff(clean, provided(p)); diff != "" {
		t.Fatalf("plan provides other counts than the demand (-want +got):\n%s", diff)
	}
}

func TestPlanFits(t *testing.T) {
	a100, _ := ModelNamed("A100-40GB")
	h100, _ := ModelNamed("H100-80GB")
	cases := map[string]struct {
		gpus []GPU
		want Demand
	}{
		"7x 1g.10gb on one H100":       {gpus("H100-80GB", 1), Demand{"1g.10gb": 7}},
		"2x 3g.40gb on one H100":       {gpus("H100-80GB", 1), Demand{"3g.40gb": 2}},
		"3x 3g.40gb on two H100s":      {gpus("H100-80GB", 2), Demand{"3g.40gb": 3}},
		"testbed gpu-b":                {gpus("H100-80GB", 2), Demand{"1g.10gb": 7, "3g.40gb": 2}},
		"whole and MIG":                {gpus("H100-80GB", 4), Demand{"h100": 2, "1g.10gb": 7, "4g.40gb": 1, "3g.40gb": 1}},
		"nothing wanted":               {gpus("H100-80GB", 2), Demand{}},
		"zero counts are ignored":      {gpus("H100-80GB", 1), Demand{"1g.10gb": 0, "7g.80gb": 1}},
		"one +me per GPU":              {gpus("H100-80GB", 3), Demand{"1g.10gb+me": 3, "1g.10gb": 18}},
		"full 8-GPU node":              {gpus("H100-80GB", 8), Demand{"h100": 1, "4g.40gb": 2, "3g.40gb": 4, "2g.20gb": 6, "1g.20gb": 4, "1g.10gb": 10}},
		"mixed models":                 {[]GPU{{0, a100}, {1, h100}}, Demand{"1g.5gb": 7, "1g.20gb": 4}},
		"profile both models share":    {[]GPU{{0, a100}, {1, h100}}, Demand{"1g.10gb": 11}},
		"H200":                         {gpus("H200-141GB", 2), Demand{"1g.18gb": 7, "3g.71gb": 1, "4g.71gb": 1}},
		"B200":                         {gpus("B200", 1), Demand{"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1}},
		"A100 80GB":                    {gpus("A100-80GB", 1), Demand{"4g.40gb": 1, "1g.20gb": 1, "1g.10gb": 1}},
		"GPU indexes need not be 0..n": {[]GPU{{4, h100}, {2, h100}}, Demand{"7g.80gb": 1, "h100": 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := PlanFor(tc.gpus, tc.want)
			if err != nil {
				t.Fatalf("PlanFor: %v", err)
			}
			checkPlan(t, tc.gpus, tc.want, p)
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	cases := map[string]struct {
		gpus []GPU
		want Demand
		msgs []string
	}{
		"3x 3g.40gb on one H100": {gpus("H100-80GB", 1), Demand{"3g.40gb": 3}, []string{
			"3x 3g.40gb: at most 2 fit: 2 per H100-80GB (each 3g.40gb takes 4 of the 8 memory slices, at start slot 0 or 4), and there is 1 H100-80GB"}},
		"unknown profile": {gpus("H100-80GB", 2), Demand{"1g.5gb": 1}, []string{
			"1g.5gb: none of the GPUs (2 H100-80GB) has a MIG profile or GPU type of that name; H100-80GB offers 1g.10gb, 1g.10gb+me"}},
		"too many whole GPUs": {gpus("H100-80GB", 2), Demand{"h100": 3}, []string{"3x h100 (whole GPUs): only 2 such GPUs"}},
		"two +me on one GPU":  {gpus("H100-80GB", 1), Demand{"1g.10gb+me": 2}, []string{"2x 1g.10gb+me: at most 1 fit"}},
		"compute slices": {gpus("H100-80GB", 1), Demand{"4g.40gb": 1, "1g.10gb": 4}, []string{
			"the demand needs 8 compute slices; 1 H100-80GB has 7 in all"}},
		"memory slices": {gpus("H100-80GB", 1), Demand{"1g.20gb": 4, "1g.10gb": 1}, []string{
			"the demand needs 9 memory slices; 1 H100-80GB has 8 in all"}},
		"placements do not pack": {gpus("H100-80GB", 2), Demand{"4g.40gb": 2, "2g.20gb": 3}, []string{
			"cannot be packed onto these GPUs together", "the closest plan leaves 1x 2g.20gb unplaced"}},
		"no GPUs": {nil, Demand{"1g.10gb": 1}, []string{"no GPUs to plan on"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := PlanFor(tc.gpus, tc.want)
			var ue *UnfitError
			if !errors.As(err, &ue) {
				t.Fatalf("PlanFor = %+v, %v; want an *UnfitError", p, err)
			}
			for _, m := range tc.msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error\n%s\ndoes not say\n%s", err, m)
				}
			}
		})
	}
	if _, err := PlanFor(gpus("H100-80GB", 1), Demand{"1g.10gb": -1}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative count: %v", err)
	}
}

// On one GPU a plan exists exactly when the demand is one of Configs, and
// on several GPUs every plan found provides the demand with valid layouts.
func TestPlanInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"A100-40GB", "H100-80GB"} {
		m, _ := ModelNamed(name)
		fits := map[string]bool{}
		for _, c := range m.Configs() {
			fits[c.key(m)] = true
		}
		for range 400 {
			want := Demand{}
			c := Counts{}
			for _, p := range m.Profiles {
				if r.IntN(3) == 0 {
					n := r.IntN(p.MaxInstances + 2)
					want[p.Name], c[p.Name] = n, n
				}
			}
			for k, v := range c {
				if v == 0 {
					delete(c, k)
				}
			}
			p, err := PlanFor(gpus(name, 1), want)
			if len(c) == 0 {
				continue
			}
			if (err == nil) != fits[c.key(m)] {
				t.Fatalf("%s %s: PlanFor error %v, but it fits: %v", name, c.key(m), err, fits[c.key(m)])
			}
			if err == nil {
				checkPlan(t, gpus(name, 1), want, p)
			}
			n := 1 + r.IntN(3)
			if p, err := PlanFor(gpus(name, n), want); err == nil {
				checkPlan(t, gpus(name, n), want, p)
			} else if !errors.As(err, new(*UnfitError)) {
				t.Fatalf("%s on %d GPUs: %v", c.key(m), n, err)
			}
		}
	}
}

func TestMigPartedConfigGolden(t *testing.T) {
	cases := map[string]struct {
		gpus []GPU
		want Demand
	}{
		"testbed-gpu-b": {gpus("H100-80GB", 2), Demand{"1g.10gb": 7, "3g.40gb": 2}},
		"dgxh100-mixed": {gpus("H100-80GB", 8), Demand{"h100": 2, "1g.10gb": 14, "3g.40gb": 4, "4g.40gb": 1, "2g.20gb": 1, "1g.10gb+me": 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := PlanFor(tc.gpus, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MigPartedConfig("gpubridge", p)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "migparted-"+name+".yaml"), got)
		})
	}
	if _, err := MigPartedConfig("bad name", Plan{}); err == nil {
		t.Error("a config name with a space was accepted")
	}
	bad := Plan{GPUs: []GPUPlan{{Index: 0, Model: "H100-80GB", Layout: Layout{{"3g.40gb", 2}}}}}
	if _, err := MigPartedConfig("x", bad); err == nil || !strings.Contains(err.Error(), "invalid layout") {
		t.Errorf("invalid layout: %v", err)
	}
}
