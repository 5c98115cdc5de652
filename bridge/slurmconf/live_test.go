package slurmconf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type nodeList struct {
	nodes []Node
	err   error
	reads int
}

func (l *nodeList) Nodes(context.Context) ([]Node, error) {
	l.reads++
	return l.nodes, l.err
}

func TestComplete(t *testing.T) {
	cluster := []Node{
		{Name: "gpu-b", GPUTypes: []string{"1g.10gb", "3g.40gb"}},
		{Name: "cpu-a"},
		{Name: "gpu-a", GPUTypes: []string{"h100"}},
		{Name: "gpu-c", GPUTypes: []string{"", "h100"}}, // an untyped entry is no type
	}
	base := Spec{PoolPartition: "pool", OnDemandPartition: "ondemand"}
	with := func(nodes, types []string) Spec { s := base; s.Nodes, s.GPUTypes = nodes, types; return s }
	cases := map[string]struct {
		spec      Spec
		err       error
		want      Spec
		wantReads int
		wantErr   bool
	}{
		"both given: nothing read": {spec: with([]string{"n1"}, []string{"a100"}), want: with([]string{"n1"}, []string{"a100"})},
		"both read, sorted":        {spec: base, want: with([]string{"gpu-a", "gpu-b", "gpu-c"}, []string{"1g.10gb", "3g.40gb", "h100"}), wantReads: 1},
		"nodes given":              {spec: with([]string{"gpu-a"}, nil), want: with([]string{"gpu-a"}, []string{"1g.10gb", "3g.40gb", "h100"}), wantReads: 1},
		"types given":              {spec: with(nil, []string{"h100"}), want: with([]string{"gpu-a", "gpu-b", "gpu-c"}, []string{"h100"}), wantReads: 1},
		"read fails":               {spec: base, err: errors.New("down"), wantReads: 1, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := &nodeList{nodes: cluster, err: tc.err}
			got, err := Complete(context.Background(), tc.spec, l)
			if l.reads != tc.wantReads {
				t.Errorf("%d reads, want %d", l.reads, tc.wantReads)
			}
			if tc.wantErr {
				if !errors.Is(err, tc.err) {
					t.Errorf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// fakeScontrol answers `scontrol show WHAT` from a map; a missing key fails.
type fakeScontrol map[string]string

func (f fakeScontrol) Show(_ context.Context, what string) (string, error) {
	out, ok := f[what]
	if !ok {
		return "", fmt.Errorf("scontrol show %s: exit status 1", what)
	}
	return out, nil
}

func (f fakeScontrol) String() string { return "fake scontrol" }

type partitionList struct {
	ps    []Partition
	err   error
	reads int
}

func (l *partitionList) Partitions(context.Context) ([]Partition, error) {
	l.reads++
	return l.ps, l.err
}

func TestLiveReader(t *testing.T) {
	const showConfig = "Configuration data as of 2026-05-04T10:00:00\nPreemptType             = preempt/partition_prio\nGresTypes               = gpu\n"
	const showPartition = "PartitionName=pool\n   PriorityTier=10 Nodes=gpu-a,gpu-b\n\nPartitionName=ondemand\n   PriorityTier=1 Nodes=gpu-[a-b]\n"
	rest := []Partition{{Name: "pool", Nodes: "gpu-a,gpu-b", PriorityTier: 10, State: []string{"UP"}, QOS: "pq"}}
	fromScontrol := Live{
		Config:     map[string]string{"PreemptType": "preempt/partition_prio", "GresTypes": "gpu"},
		Partitions: map[string]map[string]string{"pool": {"PriorityTier": "10", "Nodes": "gpu-a,gpu-b"}, "ondemand": {"PriorityTier": "1", "Nodes": "gpu-[a-b]"}},
	}
	fromREST := Live{Partitions: map[string]map[string]string{"pool": {"Nodes": "gpu-a,gpu-b", "PriorityTier": "10", "State": "UP", "QoS": "pq"}}, Partial: true}
	cases := map[string]struct {
		scontrol  Scontrol
		restErr   error
		want      Live
		wantSrc   string
		wantREST  int
		wantError bool
	}{
		"scontrol":                    {scontrol: fakeScontrol{"config": showConfig, "partition": showPartition}, want: fromScontrol, wantSrc: "fake scontrol"},
		"no scontrol: slurmrestd":     {want: fromREST, wantSrc: "slurmrestd", wantREST: 1},
		"scontrol fails: slurmrestd":  {scontrol: fakeScontrol{"config": showConfig}, want: fromREST, wantSrc: "slurmrestd", wantREST: 1},
		"both fail: slurmrestd error": {scontrol: fakeScontrol{}, restErr: errors.New("slurmrestd down"), wantREST: 1, wantError: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &partitionList{ps: rest, err: tc.restErr}
			live, src, err := LiveReader{Scontrol: tc.scontrol, REST: p}.Read(context.Background())
			if p.reads != tc.wantREST {
				t.Errorf("%d slurmrestd reads, want %d", p.reads, tc.wantREST)
			}
			if tc.wantError {
				if !errors.Is(err, tc.restErr) {
					t.Errorf("err = %v, want %v", err, tc.restErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if src != tc.wantSrc {
				t.Errorf("source %q, want %q", src, tc.wantSrc)
			}
			if diff := cmp.Diff(tc.want, live); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestPartitionsLive(t *testing.T) {
	live := PartitionsLive([]Partition{{Name: "pool", Nodes: "gpu-a,gpu-b", PriorityTier: 10, State: []string{"UP"}}})
	want := map[string]map[string]string{"pool": {"Nodes": "gpu-a,gpu-b", "PriorityTier": "10", "State": "UP"}}
	if diff := cmp.Diff(want, live.Partitions); diff != "" || !live.Partial || live.Config != nil {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestCheckLive: the rendered testbed fragment against the testbed's own
// scontrol output is all ok; against slurmrestd only, the global keys are
// unknown, which does not fail the check; a partition that differs does.
func TestCheckLive(t *testing.T) {
	frag, err := Render(testbedSpec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{}
	parts := map[string]map[string]string{}
	for _, s := range frag.Settings {
		if s.Partition == "" {
			cfg[s.Key] = s.Value
			continue
		}
		if parts[s.Partition] == nil {
			parts[s.Partition] = map[string]string{}
		}
		parts[s.Partition][s.Key] = s.Value
	}
	var showConfig, showPartition strings.Builder
	for k, v := range cfg {
		fmt.Fprintf(&showConfig, "%s = %s\n", k, v)
	}
	for p, kv := range parts {
		fmt.Fprintf(&showPartition, "PartitionName=%s", p)
		for k, v := range kv {
			fmt.Fprintf(&showPartition, " %s=%s", k, v)
		}
		showPartition.WriteString("\n")
	}
	ok := fakeScontrol{"config": showConfig.String(), "partition": showPartition.String()}

	fs, err := CheckLive(context.Background(), testbedSpec, LiveReader{Scontrol: ok, REST: &partitionList{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(frag.Settings) || Failed(fs) || Differ(fs) {
		t.Errorf("findings against the rendered settings:\n%v", fs)
	}

	rest := &partitionList{ps: []Partition{
		{Name: "pool", Nodes: "gpu-b,gpu-a", PriorityTier: 10, State: []string{"UP"}},
		{Name: "ondemand", Nodes: "gpu-a,gpu-b", PriorityTier: 1, State: []string{"UP"}},
	}}
	fs, err = CheckLive(context.Background(), testbedSpec, LiveReader{REST: rest})
	if err != nil {
		t.Fatal(err)
	}
	if Differ(fs) || !Failed(fs) {
		t.Errorf("slurmrestd only: want unknown global keys and nothing that differs:\n%v", fs)
	}
	rest.ps[1].PriorityTier = 5
	fs, _ = CheckLive(context.Background(), testbedSpec, LiveReader{REST: rest})
	if !Differ(fs) {
		t.Errorf("on-demand PriorityTier 5: no difference found:\n%v", fs)
	}
	bad := testbedSpec
	bad.Nodes = nil
	if _, err := CheckLive(context.Background(), bad, LiveReader{REST: rest}); err == nil {
		t.Error("a spec without nodes: no error")
	}
}

func TestDiffer(t *testing.T) {
	cases := map[Status]bool{OK: false, Unknown: false, Differs: true, Missing: true}
	for st, want := range cases {
		if got := Differ([]Finding{{Status: OK}, {Status: st}}); got != want {
			t.Errorf("Differ with a %s finding = %v, want %v", st, got, want)
		}
	}
	if Differ(nil) {
		t.Error("Differ(nil) = true")
	}
}
