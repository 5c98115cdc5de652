package slurmrest

import (
	"fmt"
	"strconv"
)

// Limit is one of Slurm's numeric limits, which its JSON carries as
// {"set", "infinite", "number"}. It has three states:
//   - unset (the zero value): no value. On read, nothing is configured;
//     on write, the field is left as it is.
//   - infinite: on read, explicitly unlimited; on write, it CLEARS the limit
//     (what sacctmgr writes as -1).
//   - a number >= 0.
//
// Slurm also accepts a bare -1 to clear a limit; this client never sends
// one. Writes with a negative Number fail with ErrInvalid.
type Limit struct {
	Set      bool
	Infinite bool
	Number   int64
}

// LimitOf is the limit n (n must be >= 0 to be written).
func LimitOf(n int64) Limit { return Limit{Set: true, Number: n} }

// Unlimited is an explicit "no limit"; writing it clears a limit.
func Unlimited() Limit { return Limit{Set: true, Infinite: true} }

// IsZero reports whether the limit is unset.
func (l Limit) IsZero() bool { return !l.Set && !l.Infinite && l.Number == 0 }

// Value returns the number and true when the limit is a finite number.
func (l Limit) Value() (int64, bool) { return l.Number, l.Set && !l.Infinite }

// String is "" when unset, "unlimited" when infinite, else the number.
func (l Limit) String() string {
	switch {
	case l.Infinite:
		return "unlimited"
	case !l.Set:
		return ""
	}
	return strconv.FormatInt(l.Number, 10)
}

func (l Limit) validate(field string) error {
	if l.Set && !l.Infinite && l.Number < 0 {
		return fmt.Errorf("%w: %s is %d; limits are >= 0 (use Unlimited() to clear one)", ErrInvalid, field, l.Number)
	}
	return nil
}
