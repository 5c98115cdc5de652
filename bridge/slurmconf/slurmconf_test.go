package slurmconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/golden"
)

// testbedSpec is the testbed's cluster: gpu-a (4 x h100), gpu-b (7 x
// 1g.10gb, 2 x 3g.40gb).
var testbedSpec = Spec{
	PoolPartition: "pool", OnDemandPartition: "ondemand", Nodes: []string{"gpu-a", "gpu-b"},
	GPUTypes: []string{"h100", "3g.40gb", "1g.10gb"}, PoolDefault: true,
}

func TestRenderGolden(t *testing.T) {
	f, err := Render(testbedSpec)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "testbed.conf"), f.Text)
}

func TestRenderRefuses(t *testing.T) {
	cases := map[string]struct {
		spec Spec
		want string
	}{
		"same partition": {func() Spec { s := testbedSpec; s.OnDemandPartition = "pool"; return s }(), "two different names"},
		"no nodes":       {func() Spec { s := testbedSpec; s.Nodes = nil; return s }(), "no GPU nodes"},
		"no types":       {func() Spec { s := testbedSpec; s.GPUTypes = nil; return s }(), "no typed GPUs"},
		"bad type":       {func() Spec { s := testbedSpec; s.GPUTypes = []string{"h100:2"}; return s }(), `GPU type "h100:2"`},
		"tiers inverted": {func() Spec { s := testbedSpec; s.PoolTier, s.OnDemandTier = 1, 5; return s }(), "must be above"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCheckTestbed compares the rendering with the testbed's own
// `scontrol show config` and `scontrol show partition` (captured from the
// running testbed): the testbed runs this configuration.
func TestCheckTestbed(t *testing.T) {
	f, err := Render(testbedSpec)
	if err != nil {
		t.Fatal(err)
	}
	live := Live{Config: ParseShowConfig(read(t, "show-config.txt")), Partitions: ParseShowPartitions(read(t, "show-partition.txt"))}
	for _, fd := range Check(f, live) {
		if fd.Status != OK {
			t.Errorf("%s", fd)
		}
	}
}

func TestCheckFindsDifferences(t *testing.T) {
	f, err := Render(testbedSpec)
	if err != nil {
		t.Fatal(err)
	}
	live := Live{
		Config: map[string]string{"GresTypes": "gpu", "AccountingStorageTRES": "cpu,mem,gres/gpu,gres/gpu:h100",
			"PreemptType": "preempt/none", "PreemptMode": "GANG,REQUEUE", "JobRequeue": "1"},
		Partitions: map[string]map[string]string{
			"pool": {"Nodes": "gpu-a", "Default": "YES", "PriorityTier": "1", "PreemptMode": "OFF", "State": "UP"},
		},
	}
	got := map[string]Status{}
	for _, fd := range Check(f, live) {
		got[fd.Partition+"/"+fd.Key] = fd.Status
	}
	want := map[string]Status{
		"/GresTypes": OK, "/AccountingStorageTRES": Differs, "/PreemptType": Differs, "/PreemptMode": OK, "/JobRequeue": OK,
		"pool/Nodes": Differs, "pool/Default": OK, "pool/PriorityTier": Differs, "pool/PreemptMode": OK, "pool/State": OK,
		"ondemand/Nodes": Missing, "ondemand/Default": Missing, "ondemand/PriorityTier": Missing,
		"ondemand/PreemptMode": Missing, "ondemand/State": Missing,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if !Failed(Check(f, live)) {
		t.Error("Failed() = false")
	}
	unknown := Check(f, Live{})
	if unknown[0].Status != Unknown {
		t.Errorf("without live data: %v", unknown[0])
	}
}
