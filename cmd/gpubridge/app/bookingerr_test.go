package app

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// TestBookingErrExitStatus: bad input exits 2; a booking changed since the
// command read it is a refusal (exit 1), like a booking that does not fit.
func TestBookingErrExitStatus(t *testing.T) {
	changed := reserve.Changed{Problems: reserve.Problems{{Field: "id", Msg: "booking 7 changed since you read it"}}}
	cases := map[string]struct {
		err   error
		input bool
	}{
		"problems":  {reserve.Problems{{Field: "start", Msg: "bad"}}, true},
		"not found": {fmt.Errorf("booking 7: %w", reserve.ErrNotFound), true},
		"changed":   {fmt.Errorf("modify: %w", changed), false},
		"refusal":   {&reserve.Refusal{}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := errors.Is(bookingErr(c.err), ErrInput); got != c.input {
				t.Errorf("input error: %v; want %v", got, c.input)
			}
		})
	}
}
