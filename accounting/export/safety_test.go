package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// plainNumber is the reference for isPlainNumber.
var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

func TestIsPlainNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "-0.50", "12.345", "1.", ".5", "-", "--1", "1.2.3", "1e3", "-1-2", "+1", "١٢", "", "-.5", "0.000001", "9a"} {
		if got, want := isPlainNumber(s), plainNumber.MatchString(s); got != want {
			t.Errorf("isPlainNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestNeutralize(t *testing.T) {
	cases := map[string]struct {
		in, want string
		changed  bool
	}{
		"formula":          {in: `=HYPERLINK("http://x","y")`, want: `'=HYPERLINK("http://x","y")`, changed: true},
		"plus":             {in: "+1+2", want: "'+1+2", changed: true},
		"minus expression": {in: "-2+3", want: "'-2+3", changed: true},
		"at":               {in: "@SUM(A1)", want: "'@SUM(A1)", changed: true},
		"tab":              {in: "\t=1", want: "'\t=1", changed: true},
		"carriage return":  {in: "\r=1", want: "'\r=1", changed: true},
		"negative amount":  {in: "-0.50", want: "-0.50"},
		"negative integer": {in: "-1800", want: "-1800"},
		"plain name":       {in: "acme", want: "acme"},
		"empty":            {in: "", want: ""},
		"equals inside":    {in: "a=b", want: "a=b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed := Neutralize(tc.in)
			if got != tc.want || changed != tc.changed {
				t.Errorf("Neutralize(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
			}
		})
	}
}

// hostile is a period whose account and user names are formulas.
func hostile() []meter.Line {
	l := line("=cmd|' /C calc'!A0", 40, "2026-11", meter.Reserved, "h100", 1, "2026-11-02 10:00:00", "2026-11-02 11:00:00", 0, "2026-11", true)
	l.User = "@SUM(1+1)*cmd|' /C calc'!A0"
	neg := line("+acct", 41, "2026-11", meter.Reserved, "h100", 1, "2026-11-02 10:00:00", "2026-11-02 10:30:00", 1, "2026-11", true)
	neg.GPUSeconds = -1800
	neg.User = "-2+3"
	return []meter.Line{l, neg}
}

// TestExportsNeutralizeFormulas: no cell of a CSV or FOCUS export, summary
// or detail, starts with a formula character unless it is a plain number,
// and the neutralized cells read back as the original text behind an
// apostrophe.
func TestExportsNeutralizeFormulas(t *testing.T) {
	m := meta(t)
	m.Tenants = labels{"+acct": "+acct"}
	for _, f := range []Format{CSV, FOCUS} {
		for _, d := range []bool{false, true} {
			var b bytes.Buffer
			if err := Write(context.Background(), &b, m, source(hostile(), 1), Options{Format: f, Detail: d}); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatalf("%s detail=%v: not CSV: %v", f, d, err)
			}
			seen := map[string]bool{}
			for _, rec := range recs[1:] {
				for _, cell := range rec {
					if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !plainNumber.MatchString(cell) {
						t.Errorf("%s detail=%v: cell %q is a formula", f, d, cell)
					}
					seen[cell] = true
				}
			}
			want := []string{`'=cmd|' /C calc'!A0`, "'+acct"}
			if d {
				want = append(want, `'@SUM(1+1)*cmd|' /C calc'!A0`, "'-2+3", "-1800", "-1.05")
			}
			for _, w := range want {
				if !seen[w] {
					t.Errorf("%s detail=%v: no cell %q", f, d, w)
				}
			}
		}
	}
}

func TestNeutralizedCellsAreQuoted(t *testing.T) {
	var b bytes.Buffer
	w := newCellWriter(&b)
	w.Write([]string{"=1+2", "plain", "-0.50", `say "hi"`, "a,b"})
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("\"'=1+2\",plain,-0.50,\"say \"\"hi\"\"\",\"a,b\"\n", b.String()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestWriteFileKeepsTheLastGoodFile: an export that fails halfway leaves
// the previous file byte for byte, with no temporary file beside it; a
// good one replaces it with mode 0640.
func TestWriteFileKeepsTheLastGoodFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2026-11.csv")
	ctx := context.Background()
	if err := WriteFile(ctx, path, meta(t), source(fixture(), 1), Options{Format: CSV, Detail: true}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil || len(good) == 0 {
		t.Fatalf("first export: %v", err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}

	boom := errors.New("connection reset")
	n := 0
	failing := func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
		return source(fixture(), 1)(ctx, ordered, func(l meter.Line) error {
			if ordered {
				if n++; n == 5 { // in the detail pass, after rows were written
					return boom
				}
			}
			return fn(l)
		})
	}
	err = WriteFile(ctx, path, meta(t), failing, Options{Format: CSV, Detail: true})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(good, after) {
		t.Error("a failed export changed the previous file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}

	// A directory that does not exist: an error, nothing blocks.
	if err := WriteFile(ctx, filepath.Join(dir, "no", "x.csv"), meta(t), source(fixture(), 1), Options{Format: CSV}); err == nil {
		t.Error("want an error for a missing directory")
	}
}

// TestExportInTheCardsCurrency: with a KWD card every amount of every
// format has three decimals (fils) and the JSON says minorUnits 3; with a
// JPY card none. A correction is negative.
func TestExportInTheCardsCurrency(t *testing.T) {
	for cur, want := range map[string][]string{
		"KWD": {`"minorUnits":3`, `"amount":"0.650"`, `"amountMinor":650`, `"amount":"-0.325"`, `"amountMinor":-325`},
		"JPY": {`"minorUnits":0`, `"amount":"350"`, `"amountMinor":350`, `"amount":"-175"`},
	} {
		price := map[string]string{"KWD": "0.650", "JPY": "350"}[cur]
		c, err := pricing.ParseYAML([]byte("version: 1\ncurrency: " + cur + "\nrates:\n  - {type: h100, perGPUHour: \"" + price + "\", from: 2026-01-01}\n"))
		if err != nil {
			t.Fatal(err)
		}
		m := Meta{Cluster: "testbed", Period: per("2026-11"), Card: c, Tenants: labels{"acme": "acme"}}
		full := line("acme", 1, "2026-11", meter.Reserved, "h100", 1, "2026-11-02 10:00:00", "2026-11-02 11:00:00", 0, "2026-11", true)
		corr := line("acme", 2, "2026-11", meter.Reserved, "h100", 1, "2026-11-03 10:00:00", "2026-11-03 10:30:00", 1, "2026-11", true)
		corr.GPUSeconds = -1800
		var b bytes.Buffer
		if err := Write(context.Background(), &b, m, source([]meter.Line{full, corr}, 1), Options{Format: JSON, Detail: true}); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %s in\n%s", cur, w, b.String())
			}
		}
	}
}
