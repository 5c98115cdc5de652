package burst

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMarkerRoundTrip(t *testing.T) {
	m := Marker{
		Moved: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC), Reason: "QOSGrpGRES",
		Partition: "pool", QOS: "acme", GPUs: "h100:1", Estimate: 1200,
	}
	want := "gpubridge:burst moved=2026-05-04T10:00:00Z reason=QOSGrpGRES from=pool/acme gpus=h100:1 est=1200"
	if got := m.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	cases := map[string]struct {
		comment string
		want    Marker
		ok      bool
	}{
		"alone":        {comment: want, want: m, ok: true},
		"after text":   {comment: "ticket 42; " + want, want: m, ok: true},
		"before text":  {comment: want + "; later note", want: m, ok: true},
		"none":         {comment: "ticket 42"},
		"empty":        {comment: ""},
		"damaged time": {comment: "gpubridge:burst moved=yesterday reason=QOSGrpGRES"},
		"no time":      {comment: "gpubridge:burst reason=QOSGrpGRES"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseMarker(tc.comment)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestWithMarker(t *testing.T) {
	m := Marker{Moved: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC), Reason: "QOSGrpGRES", Partition: "pool", QOS: "acme", GPUs: "h100:1"}
	ms := m.String()
	old := Marker{Moved: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC), Reason: "QOSGrpGRES", Partition: "pool", QOS: "acme", GPUs: "h100:1"}.String()
	cases := map[string]struct {
		in, want string
	}{
		"empty":            {"", ms},
		"keeps admin text": {"ticket 42", "ticket 42; " + ms},
		"replaces old":     {old, ms},
		"replaces old, keeps text around": {
			"ticket 42; " + old + "; note", "ticket 42; note; " + ms,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := WithMarker(tc.in, m); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHasNoBurst(t *testing.T) {
	cases := map[string]struct {
		in   string
		want bool
	}{
		"alone":       {"gpubridge:noburst", true},
		"among words": {"run 7 gpubridge:noburst please", true},
		"comma":       {"exp=4,gpubridge:noburst", true},
		"case":        {"GPUBRIDGE:NOBURST", true},
		"substring":   {"xgpubridge:noburstx", false},
		"empty":       {"", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := HasNoBurst(tc.in); got != tc.want {
				t.Errorf("HasNoBurst(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
