package slurmstr

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets start from every captured string of their kind and the
// odd forms of the package doc. Each checks that no input panics, that an
// error is an *Error wrapping ErrSyntax, and that what parses writes back
// to a string that parses to the same value. Run one with
//
//	go test -run '^$' -fuzz FuzzParseGRES -fuzztime 30s ./internal/slurmstr/

var oddSeeds = []string{
	"", "(null)", "N/A", "None assigned", "ALL", ",", ",,", "=", ":", "(", ")", "[", "]", "[]",
	"mem=2G", "mem=512K", "mem=1.5G", "mem=2g", "cpu=-1", "cpu=00:01:05", "gres/gpu:h100=NONE",
	"3=18446744073709551614", "1=18446744073709551615", "1=18446744073709551616", ",1=2", "1=2,,3=4",
	"gpu", "gpu:4", "gpu:4K", "gpu:h100", "gpu:3090", "gpu:2g", "gpu:(null):0(IDX:N/A)",
	"gpu:h100:no_consume:2", "gpu:h100:a100:1", "gpu::1", "gpu:", "gres/gpu:h100:1", "gres:gpu:2",
	"gpu:h100:2(S:0-1)(IDX:0,2)", "gpu:h100(CNT:2)", "gpu:h100:2(S:0", "gpu:h100:2)", "gres",
	"gpu-[a-c]", "gpu-[3-1]", "gpu-[1-2", "gpu-[a,c]", "rack[1-2]-n[01-02]", "n[9-11]",
}

func seed(f *testing.F, kinds ...string) {
	for _, c := range readCaptured(f) {
		for _, k := range kinds {
			if c.kind == k {
				f.Add(c.s)
			}
		}
	}
	for _, s := range oddSeeds {
		f.Add(s)
	}
}

func checkFuzzErr(t *testing.T, in string, err error) {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrSyntax) {
		t.Fatalf("%q: error %v (%T) is not a *slurmstr.Error wrapping ErrSyntax", in, err, err)
	}
	if len(in) <= maxShown && !strings.Contains(err.Error(), strconv.Quote(in)) {
		t.Fatalf("%q: error %q does not repeat the input", in, err)
	}
}

func FuzzParseTRES(f *testing.F) {
	seed(f, "tres")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseTRES(in)
		if err != nil {
			checkFuzzErr(t, in, err)
			return
		}
		for _, x := range got {
			if x.Count < 0 && x.Count != Infinite {
				t.Fatalf("%q: negative count %d", in, x.Count)
			}
		}
		out := FormatTRES(got)
		again, err := ParseTRES(out)
		if err != nil {
			t.Fatalf("%q parsed, its formatted form %q did not: %v", in, out, err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("%q -> %q: (-first +second)\n%s", in, out, d)
		}
	})
}

func FuzzParseTRESPer(f *testing.F) {
	seed(f, "trespergres", "tres")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseTRESPer(in)
		if err != nil {
			checkFuzzErr(t, in, err)
			return
		}
		out := FormatTRES(got)
		again, err := ParseTRESPer(out)
		if err != nil {
			t.Fatalf("%q parsed, its formatted form %q did not: %v", in, out, err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("%q -> %q: (-first +second)\n%s", in, out, d)
		}
	})
}

func FuzzParseTRESIDs(f *testing.F) {
	seed(f, "tresid")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseTRESIDs(in)
		var scanned []TRES
		bad := ScanTRESIDs([]byte(in), func(id int, n int64) { scanned = append(scanned, TRES{ID: id, Count: n}) })
		if err != nil {
			checkFuzzErr(t, in, err)
			if bad == 0 {
				t.Fatalf("%q: ParseTRESIDs refused it, ScanTRESIDs skipped nothing", in)
			}
			return
		}
		if bad != 0 || !cmp.Equal(got, scanned) {
			t.Fatalf("%q: ScanTRESIDs (bad %d, %v) differs from ParseTRESIDs (%v)", in, bad, scanned, got)
		}
		out := FormatTRESIDs(got)
		again, err := ParseTRESIDs(out)
		if err != nil {
			t.Fatalf("%q parsed, its formatted form %q did not: %v", in, out, err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("%q -> %q: (-first +second)\n%s", in, out, d)
		}
	})
}

func FuzzParseGRES(f *testing.F) {
	seed(f, "gres", "trespergres")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseGRES(in)
		if err != nil {
			checkFuzzErr(t, in, err)
			return
		}
		for _, g := range got {
			if g.Count < 0 {
				t.Fatalf("%q: negative count %d", in, g.Count)
			}
			g.Indices()
			g.Sockets()
		}
		out := FormatGRES(got)
		again, err := ParseGRES(out)
		if err != nil {
			t.Fatalf("%q parsed, its formatted form %q did not: %v", in, out, err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("%q -> %q: (-first +second)\n%s", in, out, d)
		}
	})
}

func FuzzExpandHostlist(f *testing.F) {
	seed(f, "hostlist")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ExpandHostlist(in)
		if err != nil {
			checkFuzzErr(t, in, err)
			return
		}
		if len(got) > MaxHosts {
			t.Fatalf("%q: %d names", in, len(got))
		}
		out := CompressHostlist(got)
		again, err := ExpandHostlist(out)
		if err != nil {
			t.Fatalf("%q expanded, its compressed form %q did not: %v", in, out, err)
		}
		if d := cmp.Diff(sortedSet(got), sortedSet(again)); d != "" {
			t.Fatalf("%q -> %q: (-first +second)\n%s", in, out, d)
		}
	})
}
