package reserve

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched (errors.Is) by Problems: the input was wrong and
// nothing was changed.
var ErrInvalid = errors.New("invalid booking input")

// Problem is one thing wrong with one field of the input.
type Problem struct {
	Field string `json:"field"`
	Msg   string `json:"message"`
}

func (p Problem) String() string { return p.Field + ": " + p.Msg }

// Problems is every problem found; as an error it lists them all.
type Problems []Problem

func (ps *Problems) add(field, format string, a ...any) {
	*ps = append(*ps, Problem{Field: field, Msg: fmt.Sprintf(format, a...)})
}

// Err returns ps as an error, or nil when there are none.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s), nothing was changed:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (ps Problems) Is(target error) bool { return target == ErrInvalid }

// Fields returns the fields named, in order, for tests and callers that
// branch on them.
func (ps Problems) Fields() []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Field
	}
	return out
}
