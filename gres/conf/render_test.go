package conf

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/internal/golden"
)

const fixtures = "../../test/fixtures/gres"

func load(t *testing.T, name string) inventory.Inventory {
	t.Helper()
	inv, err := inventory.ReadFile(filepath.Join(fixtures, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// The golden outputs of every mock layout (the inventories the NVML
// adapter's tests record from go-nvml's mock servers) and of the testbed's
// gpu-b, in both gres.conf variants.
func TestRenderGolden(t *testing.T) {
	testbedMap := DeviceMap{MIG: "/dev/fakemig", GPU: "/dev/fakenv"}
	cases := map[string]struct {
		fixture string
		opts    Options
	}{
		"mock-dgxa100-mig-off":            {"mock-dgxa100-mig-off", Options{Node: "dgx1"}},
		"mock-dgxa100-mixed":              {"mock-dgxa100-mixed", Options{Node: "dgx1"}},
		"mock-dgxh100-all-1g":             {"mock-dgxh100-all-1g", Options{Node: "dgx1"}},
		"mock-dgxh100-all-1g.autodetect":  {"mock-dgxh100-all-1g", Options{Node: "dgx1", AutoDetect: true}},
		"mock-dgxh100-mixed":              {"mock-dgxh100-mixed", Options{Node: "dgx1"}},
		"mock-dgxh100-mixed.autodetect":   {"mock-dgxh100-mixed", Options{Node: "dgx1", AutoDetect: true}},
		"mock-dgxh100-mixed.weights":      {"mock-dgxh100-mixed", Options{Node: "dgx1", GPUWeights: map[string]float64{"h100": 2.5}}},
		"mock-dgxh200-mig-pending":        {"mock-dgxh200-mig-pending", Options{Node: "dgx1"}},
		"mock-dgxh100-lost-gpu":           {"mock-dgxh100-lost-gpu", Options{Node: "dgx1"}},
		"mock-dgxh100-lost-gpu.skip-lost": {"mock-dgxh100-lost-gpu", Options{Node: "dgx1", SkipLost: true}},
		"testbed-gpu-b":                   {"testbed-gpu-b", Options{Node: "gpu-b", DeviceMap: testbedMap, Cores: map[int]string{0: "0-3", 1: "4-7"}}},
		"testbed-gpu-b.real-files":        {"testbed-gpu-b", Options{Node: "gpu-b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Render(load(t, tc.fixture), tc.opts)
			var got string
			if err != nil {
				got = "ERROR: " + err.Error() + "\n"
			} else {
				got = res.GresConf + "\n----- slurm.conf\n" + res.SlurmConf
				checkConsistent(t, res)
			}
			checkGolden(t, name+".txt", got)
		})
	}
}

// checkConsistent asserts that everything rendered derives from the same
// devices: the Gres= counts, the gres.conf lines, the TRES list, the
// billing weights and the quota types name the same types.
func checkConsistent(t *testing.T, r Result) {
	t.Helper()
	total := 0
	for _, ty := range r.Types {
		total += ty.Count
		for _, want := range []struct{ in, s string }{
			{strings.Join(r.AccountingStorageTRES, ","), "gres/gpu:" + ty.Type},
			{r.TRESBillingWeights, "GRES/gpu:" + ty.Type + "="},
			{r.SlurmConf, "gpu:" + ty.Type + ":" + fmt.Sprint(ty.Count)},
			{strings.Join(r.QuotaTypes, ","), ty.Type},
		} {
			if !strings.Contains(want.in, want.s) {
				t.Errorf("type %s: %q lacks %q", ty.Type, want.in, want.s)
			}
		}
	}
	if total != len(r.Devices) {
		t.Errorf("types count %d devices, there are %d", total, len(r.Devices))
	}
	lines := strings.Count(r.GresConf, "\nNodeName="+r.Node+" AutoDetect=off Name=gpu ")
	if !strings.Contains(r.GresConf, "AutoDetect=nvml") && lines != len(r.Devices) {
		t.Errorf("gres.conf has %d device lines for %d devices", lines, len(r.Devices))
	}
	for _, d := range r.Devices {
		if !matches(d.Type, d.AutoDetectName) {
			t.Errorf("type %q is not in %q", d.Type, d.AutoDetectName)
		}
	}
	parsed, err := ParseNodeGres(r.Gres)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.NodeGres(), parsed); diff != "" {
		t.Errorf("Gres=%s parses to other counts (-want +got):\n%s", r.Gres, diff)
	}
}

func TestRenderRefuses(t *testing.T) {
	mixed := func(t *testing.T) inventory.Inventory { return load(t, "mock-dgxh100-mixed") }
	h100 := func(t *testing.T) inventory.Inventory { return load(t, "mock-dgxh100-all-1g") }
	cases := map[string]struct {
		inv  func(t *testing.T) inventory.Inventory
		opts Options
		msgs []string
	}{
		"+me is not in slurmd's name": {mixed, Options{Node: "n", Types: map[string]string{"1g.10gb+me": "1g.10gb+me"}}, []string{
			`GPU 4 MIG device 0 (1g.10gb+me): type "1g.10gb+me" is not a substring of "nvidia_h100_80gb_hbm3_1g.10gb", the name slurmd's NVML autodetect reports for it; Slurm could not match it and would ignore the device (use a part of that name, e.g. "1g.10gb")`}},
		"a type name of our own": {mixed, Options{Node: "n", Types: map[string]string{"h100": "hopper"}}, []string{
			`GPU 5: type "hopper" is not a substring of "nvidia_h100_80gb_hbm3"`}},
		"a whole-GPU name that also matches MIG devices": {mixed, Options{Node: "n", Types: map[string]string{"h100": "nvidia_h100_80gb_hbm3"}}, []string{
			`type "4g.40gb" is meant for it, but type "nvidia_h100_80gb_hbm3" of another device of this node also matches its autodetect name "nvidia_h100_80gb_hbm3_4g.40gb"`}},
		"characters Slurm cannot parse": {h100, Options{Node: "n", Types: map[string]string{"1g.10gb": "1g:10gb"}}, []string{
			`type name "1g:10gb" contains a character Slurm does not allow`}},
		"a rename nothing uses": {h100, Options{Node: "n", Types: map[string]string{"3g.40gb": "3g"}}, []string{
			`--type 3g.40gb=3g: no device of this node has the type or profile "3g.40gb"`}},
		"no node name": {h100, Options{}, []string{"node name"}},
		"MIG on without instances": {func(t *testing.T) inventory.Inventory {
			inv := h100(t)
			inv.GPUs[2].MIGDevices = nil
			return inv
		}, Options{Node: "n"}, []string{"GPU 2: MIG is enabled but it has no MIG devices"}},
		"compute instance smaller than its GPU instance": {func(t *testing.T) inventory.Inventory {
			inv := load(t, "testbed-gpu-b")
			inv.GPUs[1].MIGDevices[0].ComputeInstanceSlices = 1
			inv.GPUs[1].MIGDevices[0].Profile = "1c.3g.40gb"
			return inv
		}, Options{Node: "n"}, []string{"GPU 1 MIG device 0 (1c.3g.40gb): its compute instance has 1 of its GPU instance's 3 slices"}},
		"lost GPUs": {func(t *testing.T) inventory.Inventory { return load(t, "mock-dgxh100-lost-gpu") }, Options{Node: "n"}, []string{
			"GPU 5: NVML lost it", "GPU 6: NVML lost it"}},
		"cores of a GPU not there": {h100, Options{Node: "n", Cores: map[int]string{9: "0-3"}}, []string{"--cores 9=0-3: the inventory has no GPU 9"}},
		"cores not a list":         {h100, Options{Node: "n", Cores: map[int]string{0: "3-1"}}, []string{"--cores 0=3-1: not a Slurm core list"}},
		"empty inventory":          {func(t *testing.T) inventory.Inventory { return inventory.Inventory{Version: 1} }, Options{Node: "n"}, []string{"no GPUs to render"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Render(tc.inv(t), tc.opts)
			if err == nil {
				t.Fatalf("Render accepted it:\n%s", res.GresConf)
			}
			for _, m := range tc.msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error\n%s\ndoes not say\n%s", err, m)
				}
			}
		})
	}
}

func TestRenderRenames(t *testing.T) {
	res, err := Render(load(t, "mock-dgxh100-mixed"), Options{Node: "n", Types: map[string]string{
		"1g.10gb+me": "1g.10gb",      // +me slices counted with the others (as slurmd does anyway)
		"3g.40gb":    "hbm3_3g.40gb", // any part of slurmd's name that no other type matches as well
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := NodeGres{"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 8, "hbm3_3g.40gb": 2, "1g.20gb": 4, "7g.80gb": 1, "h100": 3}
	if diff := cmp.Diff(want, res.NodeGres()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A more specific whole-GPU type on a node of whole GPUs only.
	res, err = Render(load(t, "mock-dgxa100-mig-off"), Options{Node: "n", Types: map[string]string{"a100": "a100-sxm4-40gb"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gres != "gpu:a100-sxm4-40gb:8" {
		t.Errorf("Gres = %s", res.Gres)
	}
}

// slurmd rounds a MIG device's memory to whole GiB: an H100's 7g.80gb
// instance has 79.25 GiB, so slurmd calls it ..._7g.79gb and the type
// must follow; NVIDIA's name would not match.
func TestRenderFollowsSlurmRounding(t *testing.T) {
	inv := load(t, "testbed-gpu-b")
	g := &inv.GPUs[1]
	g.MIGDevices = []inventory.MIGDevice{{
		Index: 0, Profile: "7g.80gb", GPUInstanceID: 0, GPUInstanceSlices: 7, ComputeInstanceSlices: 7,
		MemoryMiB: 81152, Placement: inventory.Placement{Start: 0, Size: 8},
		Files: []string{"/dev/nvidia1", "/dev/nvidia-caps/nvidia-cap138", "/dev/nvidia-caps/nvidia-cap139"},
	}}
	res, err := Render(inv, Options{Node: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Gres; got != "gpu:1g.10gb:7,gpu:7g.79gb:1" {
		t.Errorf("Gres = %s", got)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "NVIDIA calls the profile 7g.80gb; slurmd's autodetect calls it nvidia_h100_80gb_hbm3_7g.79gb") {
		t.Errorf("no note on the rounding: %q", res.Notes)
	}
	_, err = Render(inv, Options{Node: "n", Types: map[string]string{"7g.80gb": "7g.80gb"}})
	if err == nil || !strings.Contains(err.Error(), `type "7g.80gb" is not a substring of "nvidia_h100_80gb_hbm3_7g.79gb"`) {
		t.Errorf("NVIDIA's name was not refused: %v", err)
	}
}

func TestAutoDetectNames(t *testing.T) {
	m := inventory.MIGDevice{GPUInstanceSlices: 3, MemoryMiB: 19968}
	cases := map[string]struct{ got, want string }{
		"whole H100":        {AutoDetectGPUName("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3"},
		"whole A100":        {AutoDetectGPUName("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb"},
		"A100 slice":        {AutoDetectMIGName("NVIDIA A100-SXM4-40GB", m), "nvidia_a100_3g.20gb"},
		"H100 slice":        {AutoDetectMIGName("NVIDIA H100 80GB HBM3", inventory.MIGDevice{GPUInstanceSlices: 1, MemoryMiB: 9984}), "nvidia_h100_80gb_hbm3_1g.10gb"},
		"half rounds up":    {SlurmMIGSuffix(inventory.MIGDevice{GPUInstanceSlices: 3, MemoryMiB: 40448}), "3g.40gb"},
		"below half rounds": {SlurmMIGSuffix(inventory.MIGDevice{GPUInstanceSlices: 1, MemoryMiB: 17663}), "1g.17gb"},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
}

func TestParseDeviceMap(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    DeviceMap
		wantErr string
	}{
		"both":       {in: "mig=/dev/fakemig,gpu=/dev/fakenv", want: DeviceMap{MIG: "/dev/fakemig", GPU: "/dev/fakenv"}},
		"mig only":   {in: "mig=/dev/fakemig", want: DeviceMap{MIG: "/dev/fakemig"}},
		"empty":      {in: ""},
		"relative":   {in: "mig=fakemig", wantErr: "not an absolute path prefix"},
		"twice":      {in: "mig=/a,mig=/b", wantErr: "mig given twice"},
		"no value":   {in: "gpu", wantErr: "expected gpu=PREFIX"},
		"other kind": {in: "nic=/dev/x", wantErr: `unknown kind "nic"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDeviceMap(tc.in)
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
			if got.String() != "" {
				if back, _ := ParseDeviceMap(got.String()); back != got {
					t.Errorf("String() %q does not parse back", got.String())
				}
			}
		})
	}
}

// Input that would reach gres.conf or slurm.conf is checked before
// anything is rendered: each refusal names the flag or field and the fix
// (issue 9, item 7).
func TestRenderRefusesUnsafeInput(t *testing.T) {
	mixed := func(t *testing.T) inventory.Inventory { return load(t, "mock-dgxh100-mixed") }
	cases := map[string]struct {
		inv  func(t *testing.T) inventory.Inventory
		opts Options
		msgs []string
	}{
		"weight NaN":      {mixed, Options{Node: "n", GPUWeights: map[string]float64{"h100": math.NaN()}}, []string{"--gpu-weight h100=NaN: the weight must be a non-negative finite number"}},
		"weight +Inf":     {mixed, Options{Node: "n", GPUWeights: map[string]float64{"h100": math.Inf(1)}}, []string{"--gpu-weight h100=+Inf: the weight must be a non-negative finite number"}},
		"weight too high": {mixed, Options{Node: "n", GPUWeights: map[string]float64{"h100": 1e300}}, []string{"--gpu-weight h100=1e+300: the weight must be a non-negative finite number, at most 1e+06"}},
		"weight negative": {mixed, Options{Node: "n", GPUWeights: map[string]float64{"h100": -1}}, []string{"--gpu-weight h100=-1: the weight must be a non-negative"}},
		"weight of a type the node lacks": {mixed, Options{Node: "n", GPUWeights: map[string]float64{"a100": 2}}, []string{
			`--gpu-weight a100: no GPU of this node has the type "a100" (its GPU types: h100); weigh the types the node has`}},
		"weight of a MIG type": {mixed, Options{Node: "n", GPUWeights: map[string]float64{"1g.10gb": 2}}, []string{`--gpu-weight 1g.10gb: no GPU of this node has the type "1g.10gb"`}},
		"cores with signs":     {mixed, Options{Node: "n", Cores: map[int]string{0: "+0-+3"}}, []string{"--cores 0=+0-+3: not a Slurm core list"}},
		"cores with a newline": {mixed, Options{Node: "n", Cores: map[int]string{0: "0-3\nNodeName=x"}}, []string{"not a Slurm core list"}},
		"cores beyond any CPU": {mixed, Options{Node: "n", Cores: map[int]string{0: "0-99999"}}, []string{"core ids up to 65535"}},
		"type with a newline": {mixed, Options{Node: "n", Types: map[string]string{"h100": "h100\nNodeName=x"}}, []string{
			`type name "h100\nNodeName=x" contains a character Slurm does not allow`}},
		"type with a comment": {mixed, Options{Node: "n", Types: map[string]string{"h100": "h100#"}}, []string{`type name "h100#" contains a character`}},
		"type too long":       {mixed, Options{Node: "n", Types: map[string]string{"h100": strings.Repeat("h", 65)}}, []string{"at most 64"}},
		"node with a newline": {mixed, Options{Node: "n\nNodeName=x"}, []string{"node name"}},
		"device map with ..":  {mixed, Options{Node: "n", DeviceMap: DeviceMap{MIG: "/dev/../etc/x"}}, []string{`"/dev/../etc/x" is not an absolute path prefix`}},
		"inventory name injects a line": {func(t *testing.T) inventory.Inventory {
			inv := mixed(t)
			inv.GPUs[0].Name = "NVIDIA H100\nNodeName=x Name=gpu File=/etc/shadow"
			return inv
		}, Options{Node: "n"}, []string{`gpus[0].name: "NVIDIA H100\nNodeName=x Name=gpu File=/etc/shadow" has the character '\n'`}},
		"inventory file with a comma": {func(t *testing.T) inventory.Inventory {
			inv := load(t, "testbed-gpu-b")
			inv.GPUs[0].MIGDevices[0].Files[0] = "/dev/nvidia0,/etc/shadow"
			return inv
		}, Options{Node: "n"}, []string{`gpus[0].migDevices[0].files[0]: device path "/dev/nvidia0,/etc/shadow" has the character ','`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := Render(tc.inv(t), tc.opts)
			if err == nil {
				t.Fatalf("Render accepted it:\n%s", res.GresConf)
			}
			for _, m := range tc.msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error\n%s\ndoes not say\n%s", err, m)
				}
			}
		})
	}
}

func TestNodeName(t *testing.T) {
	if n, err := NodeName(inventory.Inventory{Host: "gpu-b.example.org"}, ""); n != "gpu-b" || err != nil {
		t.Errorf("NodeName = %q, %v", n, err)
	}
	if n, err := NodeName(inventory.Inventory{Host: "gpu-b"}, "other"); n != "other" || err != nil {
		t.Errorf("NodeName = %q, %v", n, err)
	}
	if _, err := NodeName(inventory.Inventory{}, ""); err == nil || !strings.Contains(err.Error(), "give the Slurm node name with --node") {
		t.Errorf("error %v", err)
	}
}
