package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
)

// configRun runs gpubridge with no slurmrestd configured (an empty
// configuration file, the GPUBRIDGE_* variables of the testbed cleared).
func configRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"GPUBRIDGE_SLURMREST_URL", "GPUBRIDGE_SLURMREST_JWT_KEY", "GPUBRIDGE_SLURMREST_TOKEN", "GPUBRIDGE_CLUSTER",
		"GPUBRIDGE_POOL_PARTITION", "GPUBRIDGE_ONDEMAND_PARTITION", "GPUBRIDGE_ONDEMAND_QOS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	var out, errw bytes.Buffer
	code = run(append([]string{"--config", cfg}, args...), strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

var testbedFlags = []string{"--nodes", "gpu-a,gpu-b", "--gpu-types", "h100,3g.40gb,1g.10gb"}

// TestConfigRenderOffline: with --nodes and --gpu-types, render needs no
// cluster and prints the testbed's fragment.
func TestConfigRenderOffline(t *testing.T) {
	code, out, errw := configRun(t, append([]string{"config", "render"}, testbedFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errw)
	}
	want, err := os.ReadFile("../../bridge/slurmconf/testdata/testbed.conf")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// Without them it reads slurmrestd, which is not configured here.
	code, _, errw = configRun(t, "config", "render")
	if code == 0 || !strings.Contains(errw, "or give --nodes and --gpu-types") {
		t.Errorf("render without slurmrestd: exit %d, stderr %q", code, errw)
	}
}

// fakeScontrol writes a script that answers `show config` and `show
// partition` like scontrol, with the on-demand partition's PriorityTier.
func fakeScontrol(t *testing.T, odTier int) string {
	t.Helper()
	script := fmt.Sprintf(`case "$2" in
config) printf 'GresTypes = gpu\nAccountingStorageTRES = cpu,mem,gres/gpu,gres/gpu:1g.10gb,gres/gpu:3g.40gb,gres/gpu:h100\nPreemptType = preempt/partition_prio\nPreemptMode = REQUEUE\nJobRequeue = 1\n' ;;
partition) printf 'PartitionName=pool Nodes=gpu-a,gpu-b Default=YES PriorityTier=10 PreemptMode=OFF State=UP\nPartitionName=ondemand Nodes=gpu-a,gpu-b Default=NO PriorityTier=%d PreemptMode=REQUEUE State=UP\n' ;;
*) exit 1 ;;
esac
`, odTier)
	p := filepath.Join(t.TempDir(), "scontrol.sh")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "sh " + p
}

func TestConfigCheck(t *testing.T) {
	cases := map[string]struct {
		scontrol string
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		"matches":                       {scontrol: fakeScontrol(t, 1), wantOut: []string{"ondemand|PriorityTier|1|1|ok", "|PreemptType|preempt/partition_prio|preempt/partition_prio|ok"}},
		"differs":                       {scontrol: fakeScontrol(t, 5), wantCode: 1, wantOut: []string{"ondemand|PriorityTier|1|5|differs"}, wantErr: slurmconf.ErrDiffers.Error()},
		"no scontrol, no slurmrestd":    {scontrol: "", wantCode: 1, wantErr: "slurmrest.jwtKeyFile"},
		"scontrol fails, no slurmrestd": {scontrol: "false", wantCode: 1, wantErr: "slurmrest.jwtKeyFile"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errw := configRun(t, append([]string{"config", "check", "-P", "--scontrol", tc.scontrol}, testbedFlags...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.wantCode, errw)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errw, tc.wantErr) {
				t.Errorf("stderr %q lacks %q", errw, tc.wantErr)
			}
		})
	}
}

// TestRunOnceHasNoTestFlags: the test-only kill switch is not in the
// shipped binary (the acceptance test kills a test binary instead).
func TestRunOnceHasNoTestFlags(t *testing.T) {
	code, _, errw := configRun(t, "burst", "run-once", "--kill-after-moves", "1")
	if code == 0 || !strings.Contains(errw, "unknown flag: --kill-after-moves") {
		t.Errorf("exit %d, stderr %q: want an unknown flag", code, errw)
	}
}
