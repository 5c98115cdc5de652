package slurmstr

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every error of this package: the string is not
// one Slurm prints (or one we refuse to read, see the package doc).
var ErrSyntax = errors.New("not a Slurm string of this kind")

// Error says which string of which kind was refused, which entry of it,
// and why.
type Error struct {
	Kind   string // "TRES", "TRES id list", "GRES", "hostlist"
	Input  string // the whole string (shortened when long)
	Entry  string // the entry at fault; "" when the whole string is
	Reason string
}

func (e *Error) Error() string {
	if e.Entry == "" || e.Entry == e.Input {
		return fmt.Sprintf("%s %q: %s", e.Kind, e.Input, e.Reason)
	}
	return fmt.Sprintf("%s %q: entry %q: %s", e.Kind, e.Input, e.Entry, e.Reason)
}

// Unwrap makes errors.Is(err, ErrSyntax) hold.
func (e *Error) Unwrap() error { return ErrSyntax }

// maxShown bounds the input an error repeats.
const maxShown = 200

func newError(kind, input, entry, format string, args ...any) *Error {
	if len(input) > maxShown {
		input = input[:maxShown] + "..."
	}
	if len(entry) > maxShown {
		entry = entry[:maxShown] + "..."
	}
	return &Error{Kind: kind, Input: input, Entry: entry, Reason: fmt.Sprintf(format, args...)}
}
