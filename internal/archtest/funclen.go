package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// MaxFuncLines is the longest a function of production code may be, from
// its signature to its closing brace: longer ones are split into named
// steps (STYLE.md 5d).
const MaxFuncLines = 80

// LongFuncs lists, as "path/file.go:Func" relative to the module root,
// the functions over MaxFuncLines lines in the production code under dir:
// tests, test-support packages (Rule.TestOnly of l) and the benchmarks
// under test/bench are not production code.
func LongFuncs(l Layout, dir string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || rel == "test/bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || l.Packages[filepath.ToSlash(filepath.Dir(rel))].TestOnly {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > MaxFuncLines {
				out = append(out, fmt.Sprintf("%s:%s", rel, funcName(fn)))
			}
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// funcName is fn's name, with its receiver's type for a method (T.M).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
