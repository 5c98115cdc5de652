package ingest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// Runs' GPUs share arrays (carve): a change to one run's list, an append
// included, must never show in another's.
func TestCarveKeepsRunsApart(t *testing.T) {
	var slab []meter.Alloc
	var runs [][]meter.Alloc
	src := []meter.Alloc{{Type: "h100", Count: 1}}
	for i := range 5000 { // past one array of 4096
		src[0].Count = int64(i + 1)
		var cp []meter.Alloc
		cp, slab = carve(slab, src)
		runs = append(runs, cp)
	}
	two := []meter.Alloc{{Type: "1g.10gb", Count: 2}, {Type: "3g.40gb", Count: 3}}
	cp, _ := carve(slab, two)
	two[0].Count = 99 // the copy does not follow its source
	runs = append(runs, cp)
	// An append to the first run's list must not overwrite the second's.
	grown := append(runs[0], meter.Alloc{Type: "x", Count: 7})
	grown[0].Count = -1
	for i, r := range runs[:5000] {
		if want := []meter.Alloc{{Type: "h100", Count: int64(i + 1)}}; !cmp.Equal(r, want) {
			t.Fatalf("run %d: GPUs %v, want %v", i, r, want)
		}
	}
	if want := []meter.Alloc{{Type: "1g.10gb", Count: 2}, {Type: "3g.40gb", Count: 3}}; !cmp.Equal(runs[5000], want) {
		t.Fatalf("last run: GPUs %v, want %v", runs[5000], want)
	}
}

// The driver delivers integer columns as int64 or uint64 (or their text
// from an older driver); negative values and anything else read as 0,
// as atou reads text.
func TestNum(t *testing.T) {
	cases := []struct {
		in   any
		want uint64
	}{
		{int64(1780272000), 1780272000},
		{int64(0), 0},
		{int64(-5), 0},
		{uint64(1 << 63), 1 << 63},
		{[]byte("900000001"), 900000001},
		{[]byte("-1"), 0},
		{"42", 42},
		{nil, 0},
		{3.5, 0},
	}
	for _, c := range cases {
		if got := num(c.in); got != c.want {
			t.Errorf("num(%#v) = %d, want %d", c.in, got, c.want)
		}
	}
}
