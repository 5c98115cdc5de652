package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/device"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/internal/golden"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

const gresFixtures = "../../test/fixtures/gres"

func gresFixture(name string) string { return filepath.Join(gresFixtures, name+".json") }

// testbedGresArgs is the command that renders the testbed's gres.conf for
// node gpu-b; its output is test/fixtures/gres/testbed-gpu-b.gres.conf.
var testbedGresArgs = []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--node", "gpu-b",
	"--device-map", "mig=/dev/fakemig", "--cores", "0=0-3,1=4-7"}

func gresRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("GPUBRIDGE_CONFIG", "")
	var out, errw bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

func stubInventory(t *testing.T, f func(device.Options) (inventory.Inventory, error)) {
	t.Helper()
	old := collectInventory
	collectInventory = f
	t.Cleanup(func() { collectInventory = old })
}

func stubNodes(t *testing.T, nodes []slurmrest.Node, err error) {
	t.Helper()
	old := listSlurmNodes
	listSlurmNodes = func(context.Context, *App) ([]slurmrest.Node, error) { return nodes, err }
	t.Cleanup(func() { listSlurmNodes = old })
}

func TestGresInventory(t *testing.T) {
	cases := map[string]struct {
		args     []string
		code     int
		contains []string
	}{
		"table": {args: []string{"gres", "inventory", "--fixture", gresFixture("testbed-gpu-b")}, contains: []string{
			"GPU  Minor  Name", "mig0 (gi7/ci0)   1g.10gb  9984", "/dev/nvidia1,/dev/nvidia-caps/nvidia-cap147,/dev/nvidia-caps/nvidia-cap148"}},
		"parsable": {args: []string{"gres", "inventory", "-P", "--fixture", gresFixture("mock-dgxh200-mig-pending")}, contains: []string{
			"GPU|Minor|Name|MIG|Device|Profile|MemoryMiB|UUID|Files", "2|2|NVIDIA H200 141GB HBM3e|disabled->enabled|gpu|"}},
		"lost GPU": {args: []string{"gres", "inventory", "-P", "--fixture", gresFixture("mock-dgxh100-lost-gpu")}, contains: []string{
			"5|-|LOST: get the device handle: ERROR_GPU_IS_LOST|"}},
		"missing fixture": {args: []string{"gres", "inventory", "--fixture", "/nonexistent.json"}, code: 1, contains: []string{"read inventory fixture"}},
		"bad fixture":     {args: []string{"gres", "inventory", "--fixture", "testdata/does-not-exist"}, code: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := gresRun(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errs)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output does not contain %q:\n%s%s", c, out, errs)
				}
			}
		})
	}
}

// --json prints the fixture format: replaying a fixture prints it again,
// byte for byte.
func TestGresInventoryJSONIsTheFixtureFormat(t *testing.T) {
	for _, name := range []string{"testbed-gpu-b", "mock-dgxh100-mixed", "mock-dgxh100-lost-gpu"} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := gresRun(t, "gres", "inventory", "--json", "--fixture", gresFixture(name))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			want, _ := os.ReadFile(gresFixture(name))
			if diff := cmp.Diff(string(want), out); diff != "" {
				t.Errorf("(-fixture +output):\n%s", diff)
			}
		})
	}
}

// Without the NVIDIA driver (or built without cgo) the inventory fails
// with one clear error and exit code 1.
func TestGresInventoryWithoutNVML(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver")
	}
	for _, args := range [][]string{{"gres", "inventory"}, {"gres", "generate", "--node", "n1"}, {"gres", "plan", "--want", "1g.10gb=1"}} {
		code, out, errs := gresRun(t, args...)
		if code != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
		if !strings.HasPrefix(errs, "gpubridge: error: NVML is not available: ") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line about NVML", args, errs)
		}
	}
}

// The exact command that renders the testbed's gres.conf for gpu-b; its
// output is kept in test/fixtures/gres/testbed-gpu-b.gres.conf.
func TestGresGenerateTestbed(t *testing.T) {
	code, out, errs := gresRun(t, testbedGresArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden.Check(t, filepath.Join(gresFixtures, "testbed-gpu-b.gres.conf"), out)
}

func TestGresGenerateOutputs(t *testing.T) {
	cases := map[string]struct {
		args     []string
		code     int
		contains []string
	}{
		"slurm.conf lines": {args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--slurm-conf"}, contains: []string{
			"# slurm.conf lines for node gpu-b", "AccountingStorageTRES=gres/gpu,gres/gpu:1g.10gb,gres/gpu:3g.40gb",
			`TRESBillingWeights="GRES/gpu:1g.10gb=0.142857,GRES/gpu:3g.40gb=0.428571"`}},
		"autodetect": {args: []string{"gres", "generate", "--fixture", gresFixture("mock-dgxh100-all-1g"), "--autodetect"}, contains: []string{
			"56x nvidia_h100_80gb_hbm3_1g.10gb", "NodeName=node1 AutoDetect=nvml\n"}},
		"real device files": {args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b")}, contains: []string{
			"NodeName=gpu-b AutoDetect=off Name=gpu Type=3g.40gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap156,/dev/nvidia-caps/nvidia-cap157\n"}},
		"json": {args: []string{"gres", "generate", "--json", "--fixture", gresFixture("testbed-gpu-b")}, contains: []string{
			`"gres": "gpu:1g.10gb:7,gpu:3g.40gb:2"`, `"quotaTypes": [`}},
		"weights": {args: []string{"gres", "generate", "--slurm-conf", "--fixture", gresFixture("mock-dgxh100-mixed"), "--gpu-weight", "h100=7"}, contains: []string{
			"GRES/gpu:1g.10gb=1.0,", "GRES/gpu:h100=7.0"}},
		"+me type refused": {args: []string{"gres", "generate", "--fixture", gresFixture("mock-dgxh100-mixed"), "--type", "1g.10gb+me=1g.10gb+me"}, code: 1, contains: []string{
			`type "1g.10gb+me" is not a substring of "nvidia_h100_80gb_hbm3_1g.10gb"`}},
		"lost GPU refused": {args: []string{"gres", "generate", "--fixture", gresFixture("mock-dgxh100-lost-gpu")}, code: 1, contains: []string{"GPU 5: NVML lost it"}},
		"lost GPU skipped": {args: []string{"gres", "generate", "--fixture", gresFixture("mock-dgxh100-lost-gpu"), "--skip-lost"}, contains: []string{
			"Gres=gpu:1g.10gb:7,gpu:h100:5", "GPU 5 is left out"}},
		"bad device map": {args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--device-map", "mig"}, code: 2, contains: []string{"expected gpu=PREFIX"}},
		"bad cores key":  {args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--cores", "x=1"}, code: 2, contains: []string{"the key is a GPU index"}},
		"bad weight":     {args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--gpu-weight", "h100=-1"}, code: 2, contains: []string{"non-negative"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := gresRun(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errs)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output does not contain %q:\n%s%s", c, out, errs)
				}
			}
		})
	}
}

func TestGresGenerateWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gres.conf")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out, errs := gresRun(t, append(testbedGresArgs, "--write", path)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "# slurm.conf lines for node gpu-b") {
		t.Errorf("stdout is not the slurm.conf lines: %q", out)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile(filepath.Join(gresFixtures, "testbed-gpu-b.gres.conf"))
	if string(got) != string(want) {
		t.Errorf("written file differs from the golden gres.conf:\n%s", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the replaced file's 0640", st.Mode().Perm())
	}
	assertOnlyFile(t, dir, "gres.conf")
	// A new file gets 0644.
	fresh := filepath.Join(dir, "new.conf")
	if code, _, errs := gresRun(t, append(testbedGresArgs, "--write", fresh)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v", st.Mode().Perm())
	}
}

func assertOnlyFile(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("files in %s (-want +got):\n%s", dir, diff)
	}
}

// On any error the previous gres.conf stays untouched: an inventory that
// fails mid-way, a refused rendering, a directory that cannot be written.
func TestGresGenerateKeepsLastGoodFile(t *testing.T) {
	const good = "# last good gres.conf\nNodeName=gpu-b AutoDetect=off Name=gpu Type=1g.10gb File=/dev/nvidia0\n"
	cases := map[string]struct {
		setup func(t *testing.T)
		args  []string
		msg   string
	}{
		"NVML fails mid-way": {
			setup: func(t *testing.T) {
				stubInventory(t, func(device.Options) (inventory.Inventory, error) {
					return inventory.Inventory{}, errors.New("GPU 3: get the product name: ERROR_UNKNOWN")
				})
			},
			args: []string{"gres", "generate", "--node", "gpu-b"},
			msg:  "GPU 3: get the product name: ERROR_UNKNOWN",
		},
		"NVML lost a GPU": {
			args: []string{"gres", "generate", "--fixture", gresFixture("mock-dgxh100-lost-gpu")},
			msg:  "GPU 5: NVML lost it",
		},
		"type Slurm cannot match": {
			args: []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--type", "1g.10gb=1g.10gb-mig"},
			msg:  `type "1g.10gb-mig" is not a substring`,
		},
		"bad fixture": {
			args: []string{"gres", "generate", "--fixture", "gres_test.go"},
			msg:  "decode inventory",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "gres.conf")
			if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := gresRun(t, append(tc.args, "--write", path)...)
			if code == 0 {
				t.Fatalf("exit 0; stdout %s", out)
			}
			if !strings.Contains(errs, tc.msg) {
				t.Errorf("stderr %q does not say %q", errs, tc.msg)
			}
			if got, _ := os.ReadFile(path); string(got) != good {
				t.Errorf("gres.conf changed:\n%s", got)
			}
			assertOnlyFile(t, dir, "gres.conf")
		})
	}
	t.Run("directory not writable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			// root writes anyway; use a path whose parent is a file instead
			code, _, errs := gresRun(t, append(testbedGresArgs, "--write", "gres_test.go/gres.conf")...)
			if code != 1 || !strings.Contains(errs, "write gres_test.go/gres.conf") {
				t.Errorf("exit %d: %s", code, errs)
			}
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "gres.conf")
		os.WriteFile(path, []byte(good), 0o644)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		code, _, _ := gresRun(t, append(testbedGresArgs, "--write", path)...)
		if got, _ := os.ReadFile(path); code == 0 || string(got) != good {
			t.Errorf("exit %d, file %q", code, got)
		}
	})
}

func TestGresGenerateCheck(t *testing.T) {
	gpuB := slurmrest.Node{Name: "gpu-b", State: []string{"IDLE"},
		GRES: []slurmrest.GRES{{Name: "gpu", Type: "1g.10gb", Count: 7}, {Name: "gpu", Type: "3g.40gb", Count: 2}}}
	drained := gpuB
	drained.State, drained.Reason = []string{"IDLE", "DRAIN"}, "gres/gpu count reported lower than configured (8 < 9)"
	cases := map[string]struct {
		nodes    []slurmrest.Node
		listErr  error
		fixture  string
		code     int
		contains []string
	}{
		"agree": {nodes: []slurmrest.Node{{Name: "gpu-a"}, gpuB}, fixture: "testbed-gpu-b", contains: []string{
			"gres check gpu-b: OK, Slurm and the inventory agree: gpu:1g.10gb:7,gpu:3g.40gb:2"}},
		"one slice fewer in the inventory": {nodes: []slurmrest.Node{gpuB}, fixture: "testbed-gpu-b-6x1g", code: 1, contains: []string{
			"gres check gpu-b: Slurm's GRES for the node differs from the inventory", "gpu:1g.10gb: inventory 6, Slurm 7"}},
		"drained node named": {nodes: []slurmrest.Node{drained}, fixture: "testbed-gpu-b-6x1g", code: 1, contains: []string{
			`(node state IDLE+DRAIN, reason "gres/gpu count reported lower than configured (8 < 9)")`}},
		"untyped in Slurm": {nodes: []slurmrest.Node{{Name: "gpu-b", GRES: []slurmrest.GRES{{Name: "gpu", Count: 9}}}}, fixture: "testbed-gpu-b", code: 1, contains: []string{
			"gpu:(untyped): inventory 0, Slurm 9"}},
		"node unknown to Slurm": {nodes: []slurmrest.Node{{Name: "gpu-a"}}, fixture: "testbed-gpu-b", code: 1, contains: []string{`slurmctld has no node "gpu-b"`}},
		"slurmrestd down":       {listErr: errors.New("list nodes: connection refused"), fixture: "testbed-gpu-b", code: 1, contains: []string{"gres check: list nodes: connection refused"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stubNodes(t, tc.nodes, tc.listErr)
			code, out, errs := gresRun(t, "gres", "generate", "--check", "--fixture", gresFixture(tc.fixture), "--node", "gpu-b")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out, errs)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output does not contain %q:\n%s%s", c, out, errs)
				}
			}
			if strings.Contains(out, "NodeName=") {
				t.Errorf("--check alone printed the gres.conf:\n%s", out)
			}
		})
	}
}

func TestGresPlan(t *testing.T) {
	cases := map[string]struct {
		args     []string
		code     int
		golden   string
		contains []string
	}{
		"testbed demand": {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "2", "--want", "1g.10gb=7,3g.40gb=2"},
			golden: "testdata/gres-plan-testbed.yaml"},
		"from an inventory": {args: []string{"gres", "plan", "--fixture", gresFixture("mock-dgxa100-mig-off"), "--want", "a100=4", "--want", "1g.5gb=14,3g.20gb=2,2g.10gb=2"},
			golden: "testdata/gres-plan-dgxa100.yaml"},
		"json": {args: []string{"gres", "plan", "--json", "--model", "h100-80gb", "--gpus", "1", "--want", "7g.80gb=1"}, contains: []string{
			`"model": "H100-80GB"`, `"profile": "7g.80gb"`}},
		"3x 3g.40gb on one H100": {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "1", "--want", "3g.40gb=3"}, code: 1, contains: []string{
			"the demand cannot fit:", "3x 3g.40gb: at most 2 fit: 2 per H100-80GB (each 3g.40gb takes 4 of the 8 memory slices, at start slot 0 or 4), and there is 1 H100-80GB"}},
		"profile of another model": {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "1", "--want", "1g.5gb=1"}, code: 1, contains: []string{
			"1g.5gb: none of the GPUs (1 H100-80GB) has a MIG profile or GPU type of that name"}},
		"no want":        {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "1"}, code: 2, contains: []string{"--want"}},
		"bad want":       {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "1", "--want", "1g.10gb"}, code: 2, contains: []string{"expected PROFILE=COUNT"}},
		"unknown model":  {args: []string{"gres", "plan", "--model", "V100", "--gpus", "1", "--want", "1g.10gb=1"}, code: 2, contains: []string{"unknown GPU model"}},
		"model no count": {args: []string{"gres", "plan", "--model", "H100-80GB", "--want", "1g.10gb=1"}, code: 2, contains: []string{"go together"}},
		"bad name":       {args: []string{"gres", "plan", "--model", "H100-80GB", "--gpus", "1", "--want", "1g.10gb=1", "--name", "a b"}, code: 1, contains: []string{"mig-parted config name"}},
		"no subcommand":  {args: []string{"gres"}, code: 2, contains: []string{"gres needs a subcommand: one of generate, inventory, plan"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := gresRun(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, out, errs)
			}
			if tc.golden != "" {
				golden.Check(t, tc.golden, out)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+errs, c) {
					t.Errorf("output does not contain %q:\n%s%s", c, out, errs)
				}
			}
		})
	}
}

// --write never replaces what is not a regular file (internal/atomicfile).
func TestGresGenerateWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := gresRun(t, append(testbedGresArgs, "--write", dir)...)
	if code != 1 || !strings.Contains(errs, "not a regular file") {
		t.Errorf("writing over a directory: exit %d, stderr %q", code, errs)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("the directory changed: %v", err)
	}
}

// Issue 9, item 7: flags and inventory fields that would reach gres.conf,
// slurm.conf or the planner are refused, each naming the flag or field and
// the fix; nothing is printed or written.
func TestGresRefusesUnsafeInput(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"version":1,"host":"`+strings.Repeat("a", 2<<20)+`","gpus":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inject := filepath.Join(dir, "inject.json")
	fx, _ := os.ReadFile(gresFixture("testbed-gpu-b"))
	if err := os.WriteFile(inject, []byte(strings.Replace(string(fx), `"name": "NVIDIA H100 80GB HBM3"`, `"name": "NVIDIA H100 80GB HBM3\nNodeName=gpu-b Name=gpu File=/etc/shadow"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func(extra ...string) []string {
		return append([]string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b")}, extra...)
	}
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"--gpus huge":           {[]string{"gres", "plan", "--model", "H100-80GB", "--gpus", "100000", "--want", "1g.10gb=1"}, 2, "--model H100-80GB --gpus 100000: plan for 1 to 64 GPUs, not 100000"},
		"--gpus 65":             {[]string{"gres", "plan", "--model", "H100-80GB", "--gpus", "65", "--want", "1g.10gb=1"}, 2, "plan for 1 to 64 GPUs"},
		"--gpu-weight NaN":      {gen("--gpu-weight", "h100=NaN"), 2, "--gpu-weight h100=NaN: the weight must be a non-negative finite number"},
		"--gpu-weight Inf":      {gen("--gpu-weight", "h100=Inf"), 2, "--gpu-weight h100=Inf: the weight must be a non-negative finite number"},
		"--gpu-weight 1e309":    {gen("--gpu-weight", "h100=1e309"), 2, "--gpu-weight h100=1e309"},
		"--gpu-weight unused":   {gen("--gpu-weight", "a100=2"), 1, `--gpu-weight a100: no GPU of this node has the type "a100" (its GPU types: h100)`},
		"--cores with signs":    {gen("--cores", "0=+0-+3"), 1, "--cores 0=+0-+3: not a Slurm core list such as 0-3"},
		"--cores key with sign": {gen("--cores", "+0=0-3"), 2, "--cores +0=0-3: the key is a GPU index"},
		"--type with a comment": {gen("--type", "1g.10gb=1g#x"), 1, `type name "1g#x" contains a character Slurm does not allow`},
		"--device-map with ..":  {gen("--device-map", "mig=/dev/../etc/fake"), 2, `"/dev/../etc/fake" is not an absolute path prefix`},
		"--node with a space":   {gen("--node", "gpu b"), 1, `node name "gpu b"`},
		"inventory too large":   {[]string{"gres", "generate", "--fixture", big}, 1, "more than 1024 KiB; an inventory is far smaller"},
		"inventory name with a newline": {[]string{"gres", "generate", "--fixture", inject}, 1,
			`gpus[0].name: "NVIDIA H100 80GB HBM3\nNodeName=gpu-b Name=gpu File=/etc/shadow" has the character '\n'`},
		"plan from a large inventory": {[]string{"gres", "plan", "--fixture", big, "--want", "1g.10gb=1"}, 1, "more than 1024 KiB"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "gres.conf")
			args := tc.args
			if args[1] == "generate" {
				args = append(args, "--write", out)
			}
			code, stdout, errs := gresRun(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, stdout, errs)
			}
			if !strings.Contains(errs, tc.msg) {
				t.Errorf("stderr %q does not say %q", errs, tc.msg)
			}
			if stdout != "" {
				t.Errorf("printed %q", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
