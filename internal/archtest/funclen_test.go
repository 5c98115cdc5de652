package archtest

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestFunctionLength: no function of production code is longer than
// MaxFuncLines (measured with go/ast).
func TestFunctionLength(t *testing.T) {
	long, err := LongFuncs(Gpubridge, "../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s is longer than %d lines: split it into named steps", f, MaxFuncLines)
	}
}

// The measure itself: testdata/funclen holds one function of 81 lines,
// one of 80, a long method and a long function in a test file.
func TestFunctionLengthMeasure(t *testing.T) {
	l := Layout{Packages: map[string]Rule{}}
	got, err := LongFuncs(l, filepath.Join("testdata", "funclen"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"long.go:T.longMethod", "long.go:long81"}
	if !slices.Equal(got, want) {
		t.Errorf("LongFuncs = %v, want %v", got, want)
	}
}
