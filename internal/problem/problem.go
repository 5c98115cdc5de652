package problem

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with one field of the input.
type Problem struct {
	Field string `json:"field"`
	Msg   string `json:"message"`
}

func (p Problem) String() string { return p.Field + ": " + p.Msg }

// Kind gives a List its sentinel error, which errors.Is matches.
type Kind interface{ Sentinel() error }

// List is every problem found; as an error it lists them all.
type List[K Kind] []Problem

// Add appends a problem of field, its message formatted like fmt.Sprintf.
func (ps *List[K]) Add(field, format string, a ...any) {
	*ps = append(*ps, Problem{Field: field, Msg: fmt.Sprintf(format, a...)})
}

// Err returns ps as an error, or nil when there are none.
func (ps List[K]) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func (ps List[K]) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s), nothing was changed:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, sentinel) true for the List's Kind.
func (ps List[K]) Is(target error) bool {
	var k K
	return target == k.Sentinel()
}

// Fields returns the fields named, in order, for tests and callers that
// branch on them.
func (ps List[K]) Fields() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Field
	}
	return out
}

// Prefixed returns ps with prefix+"." before each field (prefix alone for
// a problem without a field).
func (ps List[K]) Prefixed(prefix string) List[K] {
	out := make(List[K], len(ps))
	for i, p := range ps {
		out[i] = p
		if p.Field == "" {
			out[i].Field = prefix
		} else {
			out[i].Field = prefix + "." + p.Field
		}
	}
	return out
}
