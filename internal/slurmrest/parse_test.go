package slurmrest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

func TestParseGRES(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []GRES
	}{
		"empty":              {in: "", want: nil},
		"null":               {in: "(null)", want: nil},
		"typed with sockets": {in: "gpu:h100:4(S:0-3)", want: []GRES{{"gpu", "h100", 4}}},
		"MIG pair":           {in: "gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:1)", want: []GRES{{"gpu", "1g.10gb", 7}, {"gpu", "3g.40gb", 2}}},
		"used with index list containing commas": {in: "gpu:h100:2(IDX:0,2),gpu:1g.10gb:0(IDX:N/A)",
			want: []GRES{{"gpu", "h100", 2}, {"gpu", "1g.10gb", 0}}},
		"untyped":        {in: "gpu:2", want: []GRES{{"gpu", "", 2}}},
		"no count":       {in: "gpu:h100", want: []GRES{{"gpu", "h100", 1}}},
		"name only":      {in: "mps", want: []GRES{{"mps", "", 1}}},
		"other gres too": {in: "gpu:h100:4(S:0),shard:8", want: []GRES{{"gpu", "h100", 4}, {"shard", "", 8}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseGRES(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTRES(t *testing.T) {
	got, err := slurmstr.ParseTRES("cpu=8,mem=16000M,billing=8,gres/gpu=4,gres/gpu:h100=4,mem=2G")
	if err != nil {
		t.Fatal(err)
	}
	want := []TRES{{Type: "cpu", Count: 8}, {Type: "mem", Count: 16000}, {Type: "billing", Count: 8},
		{Type: "gres", Name: "gpu", Count: 4}, {Type: "gres", Name: "gpu:h100", Count: 4}, {Type: "mem", Count: 2048}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := FormatTRES([]TRES{GPU("h100", 16), GPU("", 2)}); s != "gres/gpu:h100=16,gres/gpu=2" {
		t.Errorf("FormatTRES = %q", s)
	}
	if _, err := slurmstr.ParseTRES("cpu"); err == nil {
		t.Error("ParseTRES(cpu) succeeded")
	}
}

func TestNodeGPUs(t *testing.T) {
	n := Node{GRES: []GRES{{"gpu", "3g.40gb", 2}, {"gpu", "1g.10gb", 7}, {"shard", "", 4}},
		GRESUsed: []GRES{{"gpu", "1g.10gb", 3}, {"gpu", "3g.40gb", 0}}}
	want := []GPUCount{{"1g.10gb", 7, 3}, {"3g.40gb", 2, 0}}
	if diff := cmp.Diff(want, n.GPUs()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestQOSSpecWire pins what SetQOS sends: the JSON paths were matched to
// sacctmgr's names on the testbed (see docs/slurmrest.md).
func TestQOSSpecWire(t *testing.T) {
	cases := map[string]struct {
		spec QOSSpec
		want string
	}{
		"quota and clear": {
			spec: QOSSpec{Name: "acme", GrpTRES: []TRES{GPU("h100", 16)}, ClearGrpTRES: []string{"gres/gpu:1g.10gb"}},
			want: `{"name":"acme","limits":{"max":{"tres":{"total":[{"type":"gres","name":"gpu:h100","count":16},{"type":"gres","name":"gpu:1g.10gb","count":-1}]}}}}`,
		},
		"numeric limits": {
			spec: QOSSpec{Name: "q", Priority: LimitOf(10), GrpJobs: Unlimited(), MaxJobsPerUser: LimitOf(2), MaxSubmitPerUser: LimitOf(5), MaxWallMinutes: LimitOf(60)},
			want: `{"name":"q","priority":{"set":true,"infinite":false,"number":10},"limits":{"max":{"active_jobs":{"count":{"set":true,"infinite":true,"number":0}},"jobs":{"active_jobs":{"per":{"user":{"set":true,"infinite":false,"number":2}}},"per":{"user":{"set":true,"infinite":false,"number":5}}},"wall_clock":{"per":{"job":{"set":true,"infinite":false,"number":60}}}}}}`,
		},
		"preempt": {
			spec: QOSSpec{Name: "ondemand", PreemptMode: []string{"REQUEUE"}, Preempt: []string{}},
			want: `{"name":"ondemand","preempt":{"list":[],"mode":["REQUEUE"]}}`,
		},
		"name only changes nothing": {spec: QOSSpec{Name: "x"}, want: `{"name":"x"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w, err := tc.spec.wire()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(w)
			if diff := cmp.Diff(tc.want, string(b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoAccidentalMinusOne: a negative count or limit never reaches Slurm,
// where -1 would clear a limit.
func TestNoAccidentalMinusOne(t *testing.T) {
	cases := map[string]QOSSpec{
		"GrpTRES -1":           {Name: "q", GrpTRES: []TRES{GPU("h100", -1)}},
		"MaxTRESPerUser -5":    {Name: "q", MaxTRESPerUser: []TRES{GPU("", -5)}},
		"GrpJobs -1":           {Name: "q", GrpJobs: LimitOf(-1)},
		"Priority -1":          {Name: "q", Priority: Limit{Set: true, Number: -1}},
		"set and clear":        {Name: "q", GrpTRES: []TRES{GPU("h100", 1)}, ClearGrpTRES: []string{"gres/gpu:h100"}},
		"duplicate TRES":       {Name: "q", GrpTRES: []TRES{GPU("h100", 1), GPU("h100", 2)}},
		"no name":              {GrpTRES: []TRES{GPU("h100", 1)}},
		"TRES without type":    {Name: "q", GrpTRES: []TRES{{Name: "gpu", Count: 1}}},
		"negative UsageFactor": {Name: "q", UsageFactor: ptr(-1.0)},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := spec.wire(); !errors.Is(err, ErrInvalid) {
				t.Errorf("wire() error = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := (ReservationSpec{Name: "r", TRES: []TRES{GPU("h100", -1)}}).wire(); !errors.Is(err, ErrInvalid) {
		t.Errorf("reservation with -1 TRES: %v, want ErrInvalid", err)
	}
}

func ptr[T any](v T) *T { return &v }
