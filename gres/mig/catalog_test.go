package mig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCatalogProfiles(t *testing.T) {
	// NVIDIA's profile names (MIG user guide, supported MIG profiles).
	cases := map[string][]string{
		"A100-40GB":  {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
		"A100-80GB":  {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		"H100-80GB":  {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		"H200-141GB": {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
		"B200":       {"1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ModelNamed(name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, m.ProfileNames()); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
			// Instances available per NVIDIA's table.
			max := map[string]int{}
			for _, p := range m.Profiles {
				max[p.Name] = p.MaxInstances
			}
			wantMax := map[string]int{want[0]: 7, want[1]: 1, want[2]: 4, want[3]: 3, want[4]: 2, want[5]: 1, want[6]: 1}
			if diff := cmp.Diff(wantMax, max); diff != "" {
				t.Errorf("max instances (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ModelNamed("V100"); err == nil {
		t.Error("ModelNamed(V100) succeeded")
	}
}

func TestIdentify(t *testing.T) {
	cases := map[string]struct {
		name   string
		mib    uint64
		pci    string
		want   string
		wantOK bool
	}{
		"H100 SXM by PCI id":         {name: "NVIDIA H100 80GB HBM3", mib: 81559, pci: "0x233010de", want: "H100-80GB", wantOK: true},
		"H100 by name":               {name: "NVIDIA H100 80GB HBM3", mib: 81920, want: "H100-80GB", wantOK: true},
		"A100 40GB mock name":        {name: "Mock NVIDIA A100-SXM4-40GB", mib: 40960, pci: "0x20B010DE", want: "A100-40GB", wantOK: true},
		"A100 80GB PCIe":             {name: "NVIDIA A100 80GB PCIe", mib: 81920, want: "A100-80GB", wantOK: true},
		"H200 mock (unknown PCI id)": {name: "NVIDIA H200 141GB HBM3e", mib: 144384, pci: "0x233310DE", want: "H200-141GB", wantOK: true},
		"B200 mock":                  {name: "NVIDIA B200 180GB HBM3e", mib: 184320, pci: "0x2B0010DE", want: "B200", wantOK: true},
		"H100 NVL 94GB is not here":  {name: "NVIDIA H100 NVL", mib: 95830},
		"L40S has no MIG":            {name: "NVIDIA L40S", mib: 46068},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, ok := Identify(tc.name, tc.mib, tc.pci)
			if ok != tc.wantOK || m.Name != tc.want {
				t.Errorf("Identify = %q, %v; want %q, %v", m.Name, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestProfileFor(t *testing.T) {
	h100, _ := ModelNamed("H100-80GB")
	h200, _ := ModelNamed("H200-141GB")
	cases := map[string]struct {
		m      Model
		slices int
		mib    uint64
		me     bool
		want   string
	}{
		"1g.10gb real size":   {h100, 1, 9984, false, "1g.10gb"},
		"1g.10gb+me":          {h100, 1, 9984, true, "1g.10gb+me"},
		"1g.20gb":             {h100, 1, 20096, false, "1g.20gb"},
		"7g.80gb (79.25 GiB)": {h100, 7, 81152, false, "7g.80gb"},
		"H200 1g.18gb":        {h200, 1, 18432, false, "1g.18gb"},
		"H200 3g.71gb":        {h200, 3, 72704, false, "3g.71gb"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, ok := tc.m.ProfileFor(tc.slices, tc.mib, tc.me)
			if !ok || p.Name != tc.want {
				t.Errorf("ProfileFor = %q, %v; want %q", p.Name, ok, tc.want)
			}
		})
	}
}

func TestComputeSlicesOf(t *testing.T) {
	cases := map[string]int{"1g.10gb": 1, "1g.10gb+me": 1, "3g.40gb": 3, "7g.141gb": 7, "1c.3g.40gb": 1, "2c.4g.40gb": 2, "h100": 0, "g.10gb": 0}
	for in, want := range cases {
		got, ok := ComputeSlicesOf(in)
		if got != want || ok != (want > 0) {
			t.Errorf("ComputeSlicesOf(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}
