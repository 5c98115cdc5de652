package archtest

import (
	"fmt"
	"slices"
	"strings"
)

// Markdown renders l's floors and package rules for people
// (docs/architecture.md shows it between its layout markers): one table
// per floor, each package with whether it is pure or test support, who
// may import it, and why where an import crosses the feature folders.
func Markdown(l Layout) string {
	var b strings.Builder
	names := []string{"the roof", "the features", "the features below", "the ground"}
	for i, fl := range l.Floors {
		name := fmt.Sprintf("floor %d", len(l.Floors)-i)
		if i < len(names) && len(l.Floors) == len(names) {
			name = names[i]
		}
		fmt.Fprintf(&b, "**%s** (`%s/`)\n\n", capitalize(name), strings.Join(fl, "/`, `"))
		b.WriteString("| package | kind | imported by |\n|---|---|---|\n")
		for _, p := range l.packagesOn(fl) {
			r := l.Packages[p]
			by := "nobody"
			if len(r.Importers) > 0 {
				by = "`" + strings.Join(r.Importers, "`, `") + "`"
			}
			if r.TestOnly {
				by = "tests only"
			}
			if r.Why != "" {
				by += " (" + r.Why + ")"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p, kind(r), by)
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// packagesOn lists, sorted, the packages whose top-level folder is one of
// folders.
func (l Layout) packagesOn(folders []string) []string {
	var out []string
	for p := range l.Packages {
		top, _, _ := strings.Cut(p, "/")
		if slices.Contains(folders, top) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func kind(r Rule) string {
	switch {
	case r.TestOnly && r.Pure:
		return "test support, pure"
	case r.TestOnly:
		return "test support"
	case r.Pure:
		return "pure"
	}
	return "may do I/O"
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
