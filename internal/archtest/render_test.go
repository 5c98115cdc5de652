package archtest

import (
	"os"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/golden"
)

const (
	docPath    = "../../docs/architecture.md"
	beginMark  = "<!-- layout:begin (generated from internal/archtest/layout.go: go test ./internal/archtest -update) -->\n"
	endMark    = "<!-- layout:end -->"
	missingDoc = "docs/architecture.md has no layout section: put the begin and end markers in it and run go test ./internal/archtest -update"
)

// TestArchitectureDocShowsTheLayout: the floors and rules that
// docs/architecture.md shows are layout.go's (the rules live in one place).
func TestArchitectureDocShowsTheLayout(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), beginMark)
	if !ok {
		t.Fatal(missingDoc)
	}
	shown, after, ok := strings.Cut(rest, endMark)
	if !ok {
		t.Fatal(missingDoc)
	}
	want := Markdown(Gpubridge) + "\n"
	if shown == want {
		return
	}
	if golden.Updating() { // go test ./internal/archtest -update
		if err := os.WriteFile(docPath, []byte(before+beginMark+want+endMark+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/architecture.md's layout section is not layout.go's: run go test ./internal/archtest -update")
}
