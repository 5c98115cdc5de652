package slurmstr

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// captured is one line of testdata/strings.tsv: a string the testbed
// printed (testdata/capture.sh), its kind and where it came from.
type captured struct{ kind, source, s string }

func readCaptured(tb testing.TB) []captured {
	tb.Helper()
	f, err := os.Open("testdata/strings.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []captured
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		kind, rest, ok1 := strings.Cut(sc.Text(), "\t")
		source, s, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			tb.Fatalf("strings.tsv: bad line %q", sc.Text())
		}
		out = append(out, captured{kind, source, s})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestCapturedStrings parses every string the testbed printed with the
// parser of its kind and writes it back: nothing Slurm prints is refused,
// and every one survives a round trip.
func TestCapturedStrings(t *testing.T) {
	perKind := map[string]int{}
	for _, c := range readCaptured(t) {
		perKind[c.kind]++
		t.Run(c.kind+"/"+c.s, func(t *testing.T) {
			if err := roundTrip(c.kind, c.s); err != "" {
				t.Errorf("%s (from %s)", err, c.source)
			}
		})
	}
	for _, k := range []string{"tres", "tresid", "trespergres", "gres", "hostlist"} {
		if perKind[k] < 3 {
			t.Errorf("strings.tsv has %d strings of kind %s; rerun testdata/capture.sh", perKind[k], k)
		}
	}
}

// roundTrip parses s as kind, formats the result and parses that again; it
// returns what went wrong, or "".
func roundTrip(kind, s string) string {
	switch kind {
	case "tres", "trespergres":
		parse := ParseTRES
		if kind == "trespergres" {
			parse = ParseTRESPer
		}
		got, err := parse(s)
		if err != nil {
			return err.Error()
		}
		again, err := parse(FormatTRES(got))
		if err != nil {
			return "formatted form refused: " + err.Error()
		}
		if d := cmp.Diff(got, again); d != "" {
			return "round trip differs (-first +second):\n" + d
		}
	case "tresid":
		got, err := ParseTRESIDs(s)
		if err != nil {
			return err.Error()
		}
		again, err := ParseTRESIDs(FormatTRESIDs(got))
		if err != nil {
			return "formatted form refused: " + err.Error()
		}
		if d := cmp.Diff(got, again); d != "" {
			return "round trip differs (-first +second):\n" + d
		}
		var scanned []TRES
		if bad := ScanTRESIDs([]byte(s), func(id int, n int64) { scanned = append(scanned, TRES{ID: id, Count: n}) }); bad != 0 {
			return "ScanTRESIDs skipped entries ParseTRESIDs accepts"
		}
		if d := cmp.Diff(got, scanned); d != "" {
			return "ScanTRESIDs differs from ParseTRESIDs (-parse +scan):\n" + d
		}
	case "gres":
		got, err := ParseGRES(s)
		if err != nil {
			return err.Error()
		}
		again, err := ParseGRES(FormatGRES(got))
		if err != nil {
			return "formatted form refused: " + err.Error()
		}
		if d := cmp.Diff(got, again); d != "" {
			return "round trip differs (-first +second):\n" + d
		}
	case "hostlist":
		got, err := ExpandHostlist(s)
		if err != nil {
			return err.Error()
		}
		again, err := ExpandHostlist(CompressHostlist(got))
		if err != nil {
			return "compressed form refused: " + err.Error()
		}
		if d := cmp.Diff(sortedSet(got), sortedSet(again)); d != "" {
			return "round trip differs (-first +second):\n" + d
		}
	default:
		return "unknown kind " + kind
	}
	return ""
}

// TestCapturedMeaning pins what some captured strings mean, one per shape,
// and checks that the capture still holds the odd forms the package doc
// promises an answer for.
func TestCapturedMeaning(t *testing.T) {
	have := map[string]bool{}
	for _, c := range readCaptured(t) {
		have[c.kind+"\t"+c.s] = true
	}
	cases := map[string]struct {
		kind, s string
		want    any
	}{
		"job TRES, mem in G": {"tres", "cpu=2,mem=2G,node=1,billing=2,gres/gpu=2,gres/gpu:h100=2", []TRES{
			{Type: "cpu", Count: 2}, {Type: "mem", Count: 2048}, {Type: "node", Count: 1}, {Type: "billing", Count: 2},
			{Type: "gres", Name: "gpu", Count: 2}, {Type: "gres", Name: "gpu:h100", Count: 2}}},
		"sacctmgr GrpTRES": {"tres", "cpu=16,gres/gpu:1g.10gb=7,gres/gpu:h100=4,gres/gpu=12,mem=32G", []TRES{
			{Type: "cpu", Count: 16}, {Type: "gres", Name: "gpu:1g.10gb", Count: 7}, {Type: "gres", Name: "gpu:h100", Count: 4},
			{Type: "gres", Name: "gpu", Count: 12}, {Type: "mem", Count: 32768}}},
		"AllocTRES of a pending job": {"tres", "(null)", []TRES(nil)},
		"tres_alloc with NO_VAL energy": {"tresid", "1=2,2=2048,3=18446744073709551614,4=1,5=2,1001=2,1004=2", []TRES{
			{ID: 1, Count: 2}, {ID: 2, Count: 2048}, {ID: 3, Count: NoValue}, {ID: 4, Count: 1}, {ID: 5, Count: 2},
			{ID: 1001, Count: 2}, {ID: 1004, Count: 2}}},
		"qos grp_tres": {"tresid", "1=16,2=32768,1001=12,1002=7,1004=4", []TRES{
			{ID: 1, Count: 16}, {ID: 2, Count: 32768}, {ID: 1001, Count: 12}, {ID: 1002, Count: 7}, {ID: 1004, Count: 4}}},
		"node Gres with sockets": {"gres", "gpu:1g.10gb:7(S:0),gpu:3g.40gb:2(S:1)", []GRES{
			{Name: "gpu", Type: "1g.10gb", Count: 7, Detail: "(S:0)"}, {Name: "gpu", Type: "3g.40gb", Count: 2, Detail: "(S:1)"}}},
		"idle GresUsed": {"gres", "gpu:h100:0(IDX:N/A)", []GRES{{Name: "gpu", Type: "h100", Count: 0, Detail: "(IDX:N/A)"}}},
		"job GRES with an empty index list": {"gres", "gpu:1g.10gb:1(IDX:3),gpu:3g.40gb:0(IDX:)", []GRES{
			{Name: "gpu", Type: "1g.10gb", Count: 1, Detail: "(IDX:3)"}, {Name: "gpu", Type: "3g.40gb", Count: 0, Detail: "(IDX:)"}}},
		"node without GRES": {"gres", "(null)", []GRES(nil)},
		"two types per node": {"trespergres", "gres/gpu:1g.10gb:1,gres/gpu:3g.40gb:1", []TRES{
			{Type: "gres", Name: "gpu:1g.10gb", Count: 1}, {Type: "gres", Name: "gpu:3g.40gb", Count: 1}}},
		"untyped per job":        {"trespergres", "gres/gpu:2", []TRES{{Type: "gres", Name: "gpu", Count: 2}}},
		"per task, cpu and gpu":  {"trespergres", "cpu=2,gres/gpu:1g.10gb=1", []TRES{{Type: "cpu", Count: 2}, {Type: "gres", Name: "gpu:1g.10gb", Count: 1}}},
		"squeue %b without GRES": {"trespergres", "N/A", []TRES(nil)},
		"two nodes":              {"hostlist", "gpu-a,gpu-b", []string{"gpu-a", "gpu-b"}},
		"job that never ran":     {"hostlist", "None assigned", []string(nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !have[tc.kind+"\t"+tc.s] {
				t.Fatalf("%s %q is not in testdata/strings.tsv any more", tc.kind, tc.s)
			}
			var got any
			var err error
			switch tc.kind {
			case "tres":
				got, err = ParseTRES(tc.s)
			case "tresid":
				got, err = ParseTRESIDs(tc.s)
			case "trespergres":
				got, err = ParseTRESPer(tc.s)
			case "gres":
				got, err = ParseGRES(tc.s)
			case "hostlist":
				got, err = ExpandHostlist(tc.s)
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func sortedSet(ss []string) []string {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	out := make([]string, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
