package archtest

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDependencyDirection holds this module to its layout table (make
// check-deps runs it).
func TestDependencyDirection(t *testing.T) {
	pkgs, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Check(Gpubridge, pkgs) {
		t.Error(v)
	}
}

// fakeLayout is the true layout of testdata/fakemod: an app, a pure core
// with a pure helper, an adapter that serves HTTP, a package that runs a
// program, one that reaches net/http through the standard library, a
// pure one, and a front end (its entry forbids nothing it does).
func fakeLayout() Layout {
	return Layout{
		Module:    "example.com/fakemod",
		Forbidden: []string{"net/http", "os/exec"},
		Packages: map[string]Rule{
			"app":           {},
			"core":          {Pure: true, Importers: []string{"app", "adapter", "front"}},
			"core/units":    {Pure: true, Importers: []string{"core/..."}},
			"adapter":       {Importers: []string{"app", "front"}},
			"front":         {Importers: []string{"app"}},
			"pure/leaky":    {Importers: []string{"app"}},
			"pure/indirect": {Importers: []string{"app"}},
			"pure/shaded":   {Pure: true, Importers: []string{"app"}},
			"cmd/config":    {Pure: true, Importers: []string{"app", "feature/..."}},
			"feature/leaky": {Importers: []string{"app"}},
		},
		FrontEnds: map[string]FrontEnd{"front": {Forbidden: []string{"pure/..."}, Names: []string{"Store"}}},
	}
}

// Each rule fails on a violation planted in testdata/fakemod (a small
// module of its own; each case turns one entry of its true layout into a
// lie), and the true layout passes. The test names start with
// TestDependencyDirection so that make check-deps runs them too.
func TestDependencyDirectionCatchesViolations(t *testing.T) {
	pkgs, err := Load(filepath.Join("testdata", "fakemod"))
	if err != nil {
		t.Fatal(err)
	}
	pure := func(r Rule) Rule { r.Pure = true; return r }
	cases := map[string]struct {
		edit func(l *Layout)
		want []string
	}{
		"the true layout holds": {edit: func(*Layout) {}},
		"a pure package importing I/O": {
			edit: func(l *Layout) { l.Packages["pure/leaky"] = pure(l.Packages["pure/leaky"]) },
			want: []string{"pure/leaky is pure but depends on os/exec (os/exec); move that code to an adapter"},
		},
		"a pure package reaching I/O through the standard library": {
			edit: func(l *Layout) { l.Packages["pure/indirect"] = pure(l.Packages["pure/indirect"]) },
			want: []string{"pure/indirect is pure but depends on net/http (expvar -> net/http); move that code to an adapter"},
		},
		"a pure package importing an impure one of the module": {
			edit: func(l *Layout) { l.Packages["core/units"] = Rule{Importers: []string{"core/..."}} },
			want: []string{"core is pure but imports core/units, which is not pure (core/units); move that code to an adapter"},
		},
		"an importer not listed": {
			edit: func(l *Layout) { l.Packages["core"] = Rule{Pure: true, Importers: []string{"app", "front"}} },
			want: []string{"adapter imports core, which only app, front may import: move the code, or add adapter to the importers of core in internal/archtest/layout.go if the edge is meant"},
		},
		"a package nobody may import": {
			edit: func(l *Layout) { l.Packages["pure/shaded"] = Rule{Pure: true} },
			want: []string{"app imports pure/shaded, which only no package may import: move the code, or add app to the importers of pure/shaded in internal/archtest/layout.go if the edge is meant"},
		},
		"a listed package that does not exist": {
			edit: func(l *Layout) { l.Packages["reserve/calendar"] = Rule{Pure: true} },
			want: []string{"reserve/calendar is in the layout table but no such package exists: it was renamed or removed; update internal/archtest/layout.go"},
		},
		"a cross-folder edge without a reason": {
			edit: func(l *Layout) { l.Domains = []string{"core", "adapter"} },
			want: []string{"core lets adapter import it across the domain folders without saying why: give its rule a Why in internal/archtest/layout.go"},
		},
		"a cross-folder edge with its reason": {
			edit: func(l *Layout) {
				l.Domains = []string{"core", "adapter"}
				r := l.Packages["core"]
				r.Why = "the adapter serves prices"
				l.Packages["core"] = r
			},
		},
		"an import running up the floors": {
			edit: func(l *Layout) { l.Floors = [][]string{{"core"}, {"app", "adapter"}} },
			want: []string{
				"adapter imports core, which stands on a higher floor (core above app, adapter): imports run from the roof down to the ground; move the code down, or pass it in through a port",
				"app imports core, which stands on a higher floor (core above app, adapter): imports run from the roof down to the ground; move the code down, or pass it in through a port",
			},
		},
		"a feature importing the configuration type of the roof": {
			edit: func(l *Layout) { l.Floors = [][]string{{"app", "cmd"}, {"feature"}} },
			want: []string{"feature/leaky imports cmd/config, which stands on a higher floor (app, cmd above feature): imports run from the roof down to the ground; move the code down, or pass it in through a port"},
		},
		"the floors in their true order": {
			edit: func(l *Layout) { l.Floors = [][]string{{"app"}, {"feature"}, {"adapter", "cmd"}, {"core", "pure"}} },
		},
		"production code importing test support": {
			edit: func(l *Layout) { l.Packages["core/units"] = Rule{Pure: true, TestOnly: true} },
			want: []string{"core imports core/units, a test-support package: production code never imports one (tests, benchmarks and test support do); move what it needs into a package of its own"},
		},
		"a package without a doc.go": {
			edit: func(l *Layout) { l.RequireDoc = true },
			want: []string{"pure/shaded has no doc.go: write one that says what the package owns and who may import it"},
		},
		"a front end importing an adapter": {
			edit: func(l *Layout) { l.FrontEnds["front"] = FrontEnd{Forbidden: []string{"adapter"}} },
			want: []string{"front imports adapter: a front end reaches the features through the use cases (cmd/gpubridge/app, passed to its ports), never a store, adapter or service of theirs"},
		},
		"a front end importing a package a pattern forbids": {
			edit: func(l *Layout) { l.FrontEnds["front"] = FrontEnd{Forbidden: []string{"*/units", "ad*"}} },
			want: []string{"front imports adapter: a front end reaches the features through the use cases (cmd/gpubridge/app, passed to its ports), never a store, adapter or service of theirs"},
		},
		"a front end naming a service of an allowed import": {
			edit: func(l *Layout) { l.FrontEnds["front"] = FrontEnd{Names: []string{"Service"}} },
			want: []string{"front/doc.go:11 names core.Service (core): a front end calls the use cases through its ports, never a feature's service"},
		},
		"a front end that does not exist": {
			edit: func(l *Layout) { l.FrontEnds["api"] = FrontEnd{} },
			want: []string{"api is a front end in the layout but no such package exists: update FrontEnds in internal/archtest/layout.go"},
		},
		"a package without an entry": {
			edit: func(l *Layout) { delete(l.Packages, "pure/shaded") },
			want: []string{"pure/shaded has no entry in the layout table: add it to internal/archtest/layout.go, saying whether it is pure and who may import it"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := fakeLayout()
			tc.edit(&l)
			if d := cmp.Diff(tc.want, Check(l, pkgs)); d != "" {
				t.Errorf("violations (-want +got)\n%s", d)
			}
		})
	}
}
