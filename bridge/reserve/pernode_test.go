package reserve_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestParsePerNode(t *testing.T) {
	for in, want := range map[string]map[string]int{
		"h100:8":                {"h100": 8},
		" h100 : 1 , 1g.10gb:7": {"h100": 1, "1g.10gb": 7},
		"a100_80g:0":            {"a100_80g": 0},
		"h100:128":              {"h100": 128},
	} {
		got, ps := reserve.ParsePerNode(in)
		if len(ps) > 0 || !cmp.Equal(got, want) {
			t.Errorf("ParsePerNode(%q) = %v, %v; want %v", in, got, ps, want)
		}
	}
	for in, msg := range map[string]string{
		"":                "empty: give the GPUs per node",
		"h100":            `"h100": want TYPE:COUNT`,
		":4":              `":4": want TYPE:COUNT`,
		"h100:four":       `count "four" is not a whole number`,
		"h100:-1":         "-1 GPUs per node is out of range (0 to 128)",
		"h100:129":        "129 GPUs per node is out of range",
		"h100:4,h100:8":   "type h100 given twice",
		"h1/00:4":         `"h1/00" is not a GPU type name`,
		"h100:4,,a100:2":  `"": want TYPE:COUNT`,
		"gpu=h100:4":      `"gpu=h100" is not a GPU type name`,
		"h100:4;a100:2":   `count "4;a100:2" is not a whole number`,
		"h100:4,a100:x":   `count "x" is not a whole number`,
		"h100:999999999x": "is not a whole number",
	} {
		got, ps := reserve.ParsePerNode(in)
		if got != nil || len(ps) == 0 || ps[0].Field != reserve.PerNodeKey || !strings.Contains(ps.Error(), msg) {
			t.Errorf("ParsePerNode(%q) = %v, %v; want a pernode problem with %q", in, got, ps, msg)
		}
	}
}

func TestFormatPerNode(t *testing.T) {
	if got := reserve.FormatPerNode(map[string]int{"h100": 1, "1g.10gb": 7}); got != "1g.10gb:7,h100:1" {
		t.Errorf("got %q", got)
	}
	if got := reserve.FormatPerNode(nil); got != "none" {
		t.Errorf("nil: got %q", got)
	}
}

// TestRecordPerNode: a whole-node booking stored without its GPUs per node
// (before migration 00480) takes the admin's figure, also once it has
// ended, and nothing else of it changes; a GPU booking, a booking that
// records a figure already (from admission, or from an earlier
// RecordPerNode), an empty figure and an unknown booking are refused.
func TestRecordPerNode(t *testing.T) {
	ctx := context.Background()
	h := newHarness()
	gpu := h.mustAdd(t, kv("tenant=acme", "gpus=h100:1", "start=now+1d", "duration=1d"))
	admitted := h.mustAdd(t, kv("tenant=acme", "nodes=dgx:1", "start=now+3d", "duration=1d"))
	var legacy reserve.Booking
	if err := h.st.Atomic(ctx, nil, func(tx reserve.Tx) error {
		var err error
		legacy, err = tx.Insert(ctx, "old-version", reserve.Booking{Tenant: "acme", Kind: reserve.KindNode, NodeClass: "dgx", Count: 1,
			Start: h.clock.Add(-48 * time.Hour), End: h.clock.Add(-24 * time.Hour), State: reserve.StateScheduled, Purpose: "old",
			CreatedBy: "old-version", CreatedAt: h.clock.Add(-72 * time.Hour), UpdatedAt: h.clock.Add(-72 * time.Hour)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if st := legacy.StateAt(h.clock); st != reserve.StateEnded {
		t.Fatalf("the legacy booking is %s; want ended", st)
	}
	refused := func(what string, id int64, per map[string]int, msg string) {
		t.Helper()
		_, _, err := h.svc.RecordPerNode(ctx, "root", id, per)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v; want an error with %q", what, err, msg)
		}
	}
	refused("GPU booking", gpu.ID, map[string]int{"h100": 4}, "is for GPUs (h100:1)")
	refused("admitted", admitted.ID, map[string]int{"h100": 8}, "already records h100:4 per node; a recorded figure is not rewritten")
	refused("empty", legacy.ID, map[string]int{}, "give at least one TYPE:COUNT")
	if _, _, err := h.svc.RecordPerNode(ctx, "root", 999, map[string]int{"h100": 4}); !errors.Is(err, reserve.ErrNotFound) {
		t.Errorf("unknown booking: %v; want ErrNotFound", err)
	}
	if got, _ := h.st.Get(ctx, legacy.ID); got.PerNode != nil {
		t.Fatalf("a refused call recorded %v", got.PerNode)
	}

	h.clock = h.clock.Add(time.Minute)
	before, after, err := h.svc.RecordPerNode(ctx, "root", legacy.ID, map[string]int{"h100": 4, "1g.10gb": 0})
	if err != nil {
		t.Fatal(err)
	}
	if before.PerNode != nil || !cmp.Equal(after.PerNode, map[string]int{"h100": 4, "1g.10gb": 0}) {
		t.Errorf("before %v after %v", before.PerNode, after.PerNode)
	}
	got, err := h.st.Get(ctx, legacy.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := legacy
	want.PerNode, want.UpdatedAt, want.Version = map[string]int{"h100": 4, "1g.10gb": 0}, h.clock, 1
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored (-want +got)\n%s", d)
	}
	refused("recorded by an admin", legacy.ID, map[string]int{"h100": 8}, "already records 1g.10gb:0,h100:4 per node")
}
