package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Layout is a module's dependency rules: every package of the module has
// an entry, saying whether it is pure and which packages may import it.
type Layout struct {
	// Module is the module path, e.g. github.com/gpubridge/gpubridge.
	Module string
	// Packages maps a package path relative to the module (bridge/tenant)
	// to its rule.
	Packages map[string]Rule
	// Forbidden are import paths no pure package may depend on, directly
	// or through others; each also covers the paths below it (net/http
	// covers net/http/httptrace).
	Forbidden []string
	// Domains are the top-level folders whose packages import each other
	// only where a Rule says why (bridge, accounting, gres).
	Domains []string
	// RequireDoc makes a package without a doc.go (saying what it owns and
	// who may import it) a violation.
	RequireDoc bool
	// Floors are the top-level folders from the roof down to the ground
	// ({cmd, test}, {bridge}, {accounting, gres}, {internal}): a package
	// imports packages of its own floor or a lower one, never of a higher
	// one, whatever its Rule says. Test-support packages (Rule.TestOnly)
	// stand outside the floors.
	Floors [][]string
	// FrontEnds are the packages that face users (the tenant API), by
	// path relative to the module: each reaches the features only through
	// the use cases, passed to its ports, and never calls a feature's
	// service, store or adapter itself.
	FrontEnds map[string]FrontEnd
}

// FrontEnd is one front end's entry.
type FrontEnd struct {
	// Forbidden are the packages of the module it must not import: the
	// features' stores, adapters and services, the wiring. Each is a path
	// relative to the module, a path ending in "/..." for that directory
	// and everything below it, or a path.Match pattern of whole segments
	// (bridge/*/store).
	Forbidden []string
	// Names are identifiers its production code must not name in any
	// package of the module it imports (Service: a feature's service,
	// which a domain package may hold next to its types), so that a
	// service reached through an allowed import is caught too. An import
	// is known by its alias, else by the last element of its path.
	Names []string
}

// Rule is one package's entry.
type Rule struct {
	// Pure packages hold domain logic without I/O: they depend on nothing
	// in Forbidden and import only pure packages of the module.
	Pure bool
	// Importers are the packages that may import this one (production
	// code; tests may import anything): a path relative to the module, a
	// path ending in "/..." for that directory and everything below it, or
	// "*" for any package of the module.
	Importers []string
	// Why says, for an edge that crosses the top-level folders (bridge,
	// accounting, gres), why it exists.
	Why string
	// TestOnly marks a test-support package (fakes, conformance suites,
	// testbed clients): only tests, test-support packages and the programs
	// under test/ import it; it stands outside the floors and may import
	// any package of the module.
	TestOnly bool
}

// Package is what the checker needs of one package: its import path and
// its direct imports (production files only).
type Package struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
	Standard   bool
	Module     *struct{ Path string }
}

// Load lists the packages of the module in dir and every package they
// depend on (go list -deps -json ./...).
func Load(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,Imports,GoFiles,Standard,Module", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %v: %s", dir, err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list in %s: %w", dir, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// Check applies l to the packages and returns one line per violation,
// sorted; none means the layout holds. It checks these rules:
//   - every package of the module has an entry in l.Packages;
//   - every entry names a package that exists (a renamed package must not
//     drop out of the rules unnoticed);
//   - every import of a module package by another comes from one of its
//     listed importers;
//   - a pure package depends on nothing Forbidden and imports only pure
//     packages of the module;
//   - a rule that lets a package of another domain folder import its
//     package says why;
//   - with RequireDoc, every package has a doc.go;
//   - no import runs up the Floors, and no production package imports a
//     test-support one;
//   - a front end imports nothing its entry forbids and names none of its
//     forbidden identifiers (frontEndViolations).
func Check(l Layout, pkgs []Package) []string {
	byPath := map[string]Package{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	rel := func(path string) (string, bool) {
		if path == l.Module {
			return ".", true
		}
		r, ok := strings.CutPrefix(path, l.Module+"/")
		return r, ok
	}
	var out []string
	present := map[string]bool{}
	for _, p := range pkgs {
		r, ok := rel(p.ImportPath)
		if !ok || p.Module == nil || p.Module.Path != l.Module {
			continue
		}
		present[r] = true
		if _, listed := l.Packages[r]; !listed {
			out = append(out, fmt.Sprintf("%s has no entry in the layout table: add it to internal/archtest/layout.go, saying whether it is pure and who may import it", r))
		}
		if l.RequireDoc && !slices.Contains(p.GoFiles, "doc.go") {
			out = append(out, fmt.Sprintf("%s has no doc.go: write one that says what the package owns and who may import it", r))
		}
	}
	for r := range l.Packages {
		if !present[r] {
			out = append(out, fmt.Sprintf("%s is in the layout table but no such package exists: it was renamed or removed; update internal/archtest/layout.go", r))
		}
	}
	for _, p := range pkgs {
		from, ok := rel(p.ImportPath)
		if !ok || !present[from] {
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok || !present[to] {
				continue
			}
			rule, listed := l.Packages[to]
			if v := l.floorViolation(from, to); v != "" {
				out = append(out, v)
			}
			if listed && !rule.TestOnly && !l.Packages[from].TestOnly && !allowed(rule.Importers, from) {
				out = append(out, fmt.Sprintf("%s imports %s, which only %s may import: move the code, or add %s to the importers of %s in internal/archtest/layout.go if the edge is meant",
					from, to, describeImporters(rule.Importers), from, to))
			}
		}
	}
	top := func(p string) string { t, _, _ := strings.Cut(p, "/"); return t }
	for r, rule := range l.Packages {
		if !slices.Contains(l.Domains, top(r)) || rule.Why != "" {
			continue
		}
		for _, imp := range rule.Importers {
			if t := top(imp); t != top(r) && slices.Contains(l.Domains, t) {
				out = append(out, fmt.Sprintf("%s lets %s import it across the domain folders without saying why: give its rule a Why in internal/archtest/layout.go", r, imp))
			}
		}
	}
	for r, rule := range l.Packages {
		if !rule.Pure || !present[r] {
			continue
		}
		if v := impurity(l, byPath, rel, l.Module+"/"+r); v != "" {
			out = append(out, fmt.Sprintf("%s is pure but %s; move that code to an adapter", r, v))
		}
	}
	out = append(out, l.frontEndViolations(byPath, rel)...)
	slices.Sort(out)
	return out
}

// floorViolation describes the import of to by from when it runs up the
// floors or reaches a test-support package from production code; "" when
// the import is allowed.
func (l Layout) floorViolation(from, to string) string {
	fromRule, toRule := l.Packages[from], l.Packages[to]
	if toRule.TestOnly && !fromRule.TestOnly && !strings.HasPrefix(from, "test/") {
		return fmt.Sprintf("%s imports %s, a test-support package: production code never imports one (tests, benchmarks and test support do); move what it needs into a package of its own", from, to)
	}
	if fromRule.TestOnly {
		return ""
	}
	f, t := l.floor(from), l.floor(to)
	if f < 0 || t < 0 || t >= f {
		return ""
	}
	return fmt.Sprintf("%s imports %s, which stands on a higher floor (%s above %s): imports run from the roof down to the ground; move the code down, or pass it in through a port", from, to, strings.Join(l.Floors[t], ", "), strings.Join(l.Floors[f], ", "))
}

// floor is the index in l.Floors of the floor of package r (0 is the
// roof), or -1 when its top-level folder is on none.
func (l Layout) floor(r string) int {
	top, _, _ := strings.Cut(r, "/")
	for i, fl := range l.Floors {
		if slices.Contains(fl, top) {
			return i
		}
	}
	return -1
}

// impurity walks the imports of a pure package breadth first and describes
// the first forbidden dependency with the chain that leads to it, or the
// first impure package of the module it imports; "" when there is none.
func impurity(l Layout, byPath map[string]Package, rel func(string) (string, bool), start string) string {
	parent := map[string]string{start: ""}
	queue := []string{start}
	chain := func(p string) string {
		var c []string
		for ; p != start; p = parent[p] {
			c = append(c, p)
		}
		slices.Reverse(c)
		for i, x := range c {
			if r, ok := rel(x); ok {
				c[i] = r
			}
		}
		return strings.Join(c, " -> ")
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, imp := range byPath[cur].Imports {
			if _, seen := parent[imp]; seen {
				continue
			}
			parent[imp] = cur
			for _, f := range l.Forbidden {
				if imp == f || strings.HasPrefix(imp, f+"/") {
					return "depends on " + f + " (" + chain(imp) + ")"
				}
			}
			if r, ok := rel(imp); ok {
				if rule, listed := l.Packages[r]; listed && !rule.Pure {
					return "imports " + r + ", which is not pure (" + chain(imp) + ")"
				}
			}
			queue = append(queue, imp)
		}
	}
	return ""
}

func allowed(patterns []string, from string) bool {
	for _, p := range patterns {
		switch {
		case p == "*", p == from:
			return true
		case strings.HasSuffix(p, "/..."):
			dir := strings.TrimSuffix(p, "/...")
			if from == dir || strings.HasPrefix(from, dir+"/") {
				return true
			}
		}
	}
	return false
}

func describeImporters(patterns []string) string {
	if len(patterns) == 0 {
		return "no package"
	}
	return strings.Join(patterns, ", ")
}

// frontEndViolations describes each import a front end's entry forbids,
// each use of an identifier it forbids (file and line), and each entry
// that names no package of the module.
func (l Layout) frontEndViolations(byPath map[string]Package, rel func(string) (string, bool)) []string {
	var out []string
	for fe, rule := range l.FrontEnds {
		p, ok := byPath[l.Module+"/"+fe]
		if !ok {
			out = append(out, fmt.Sprintf("%s is a front end in the layout but no such package exists: update FrontEnds in internal/archtest/layout.go", fe))
			continue
		}
		for _, imp := range p.Imports {
			if to, ok := rel(imp); ok && matchesAny(rule.Forbidden, to) {
				out = append(out, fmt.Sprintf("%s imports %s: a front end reaches the features through the use cases (cmd/gpubridge/app, passed to its ports), never a store, adapter or service of theirs", fe, to))
			}
		}
		if len(rule.Names) > 0 {
			out = append(out, namedViolations(l.Module, fe, p, rule.Names)...)
		}
	}
	return out
}

// namedViolations parses front end fe's production files and describes
// each selector pkg.Name of a module package whose Name is in names.
func namedViolations(module, fe string, p Package, names []string) []string {
	var out []string
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			out = append(out, fmt.Sprintf("%s/%s: %v", fe, name, err))
			continue
		}
		imports := map[string]string{} // the name a file knows a module package by -> its path
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if path != module && !strings.HasPrefix(path, module+"/") {
				continue
			}
			local := pathpkg.Base(path)
			if is.Name != nil {
				local = is.Name.Name
			}
			imports[local] = strings.TrimPrefix(path, module+"/")
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || imports[x.Name] == "" || !slices.Contains(names, sel.Sel.Name) {
				return true
			}
			out = append(out, fmt.Sprintf("%s/%s:%d names %s.%s (%s): a front end calls the use cases through its ports, never a feature's service", fe, name, fset.Position(sel.Pos()).Line, x.Name, sel.Sel.Name, imports[x.Name]))
			return true
		})
	}
	return out
}

// matchesAny says whether package r (relative to the module) is one of
// patterns: a path, a path ending in "/..." for that directory and
// everything below it, or a path.Match pattern of whole segments.
func matchesAny(patterns []string, r string) bool {
	for _, p := range patterns {
		if allowed([]string{p}, r) {
			return true
		}
		if ok, _ := pathpkg.Match(p, r); ok {
			return true
		}
	}
	return false
}
