package ingest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// The testbed's ids: never hard-coded in the code, only in this fixture.
var fixtureTRES = newGPUTRES(map[int64]string{
	1001: "gpu", 1002: "gpu:1g.10gb", 1003: "gpu:h100", 1004: "gpumem", 1005: "gpuutil", 1006: "gpu:3g.40gb",
})

func TestAllocs(t *testing.T) {
	cases := map[string]struct {
		tres string
		want []meter.Alloc
	}{
		"typed h100 (untyped ignored)":    {"1=8,2=16000,3=18446744073709551614,4=1,5=8,1001=2,1003=2", []meter.Alloc{{Type: "h100", Count: 2}}},
		"MIG slice":                       {"1=1,2=1000,4=1,5=1,1001=1,1002=1", []meter.Alloc{{Type: "1g.10gb", Count: 1}}},
		"full GPU and MIG slice":          {"1=2,1001=2,1002=1,1003=1", []meter.Alloc{{Type: "1g.10gb", Count: 1}, {Type: "h100", Count: 1}}},
		"untyped only":                    {"1=2,2=2000,1001=3", []meter.Alloc{{Type: meter.UntypedGPU, Count: 3}}},
		"no GPUs":                         {"1=2,2=2000,4=1,5=2", nil},
		"empty (never started)":           {"", nil},
		"gpumem and gpuutil are not GPUs": {"1=1,1004=81920,1005=100", nil},
		"NO_VAL count on a GPU id":        {"1=1,1003=18446744073709551614", nil},
		"zero count":                      {"1=1,1001=0,1003=0", nil},
		"garbage pairs counted as bad":    {"1=1,x=2,1003=1,1002=y", []meter.Alloc{{Type: "h100", Count: 1}}},
		"unknown TRES id":                 {"1=1,1099=4,1003=1", []meter.Alloc{{Type: "h100", Count: 1}}},
		"same type twice":                 {"1003=1,1003=2", []meter.Alloc{{Type: "h100", Count: 3}}},
		"two MIG profiles":                {"1001=3,1002=1,1006=2", []meter.Alloc{{Type: "1g.10gb", Count: 1}, {Type: "3g.40gb", Count: 2}}},
		"trailing comma":                  {"1003=1,", []meter.Alloc{{Type: "h100", Count: 1}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, bad := fixtureTRES.allocs([]byte(tc.tres), nil)
			if wantBad := strings.Count(name, "bad") * 2; bad != wantBad {
				t.Errorf("bad = %d, want %d", bad, wantBad)
			}
			sortAllocs(got)
			if len(got) == 0 {
				got = nil
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestNewGPUTRESWithoutGPUs(t *testing.T) {
	g := newGPUTRES(map[int64]string{1004: "gpumem"})
	if got, bad := g.allocs([]byte("1=1,1004=5"), nil); len(got) != 0 || bad != 0 {
		t.Errorf("got %v", got)
	}
}

func TestTRESAllocs(t *testing.T) {
	cases := map[string]struct {
		tres []slurmrest.TRES
		want []meter.Alloc
	}{
		"typed wins": {[]slurmrest.TRES{{Type: "cpu", Count: 2}, {Type: "gres", Name: "gpu", ID: 1001, Count: 2}, {Type: "gres", Name: "gpu:h100", ID: 1003, Count: 1}, {Type: "gres", Name: "gpu:1g.10gb", ID: 1002, Count: 1}},
			[]meter.Alloc{{Type: "1g.10gb", Count: 1}, {Type: "h100", Count: 1}}},
		"untyped only":             {[]slurmrest.TRES{{Type: "gres", Name: "gpu", Count: 2}}, []meter.Alloc{{Type: meter.UntypedGPU, Count: 2}}},
		"energy NO_VAL and gpumem": {[]slurmrest.TRES{{Type: "energy", Count: -2}, {Type: "gres", Name: "gpumem", Count: 100}}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tresAllocs(tc.tres)); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestAtou(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "42": 42, "18446744073709551614": 18446744073709551614, "": 0, "-1": 0, "1x": 0} {
		if got := atou([]byte(in)); got != want {
			t.Errorf("atou(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestDeletedTRESRowsResolve: tres_table rows marked deleted (a GPU type
// removed from the cluster since) are read like the others, so a job
// allocated under them is billed for its GPUs, not for none.
func TestDeletedTRESRowsResolve(t *testing.T) {
	// 1009 is gres/gpu:a100, deleted=1 in tres_table: loadLookups reads it
	// as any other gres row.
	g := newGPUTRES(map[int64]string{1001: "gpu", 1002: "gpu:h100", 1009: "gpu:a100"})
	got, _ := g.allocs([]byte("1=8,2=16000,4=1,1001=2,1009=2"), nil)
	if d := cmp.Diff([]meter.Alloc{{Type: "a100", Count: 2}}, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
