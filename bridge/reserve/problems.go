package reserve

import (
	"errors"

	"github.com/gpubridge/gpubridge/internal/problem"
)

// ErrInvalid is matched (errors.Is) by Problems: the input was wrong and
// nothing was changed.
var ErrInvalid = errors.New("invalid booking input")

// Problem is one thing wrong with one field of the input.
type Problem = problem.Problem

// Problems is every problem found; as an error it lists them all and
// matches ErrInvalid.
type Problems = problem.List[invalidInput]

type invalidInput struct{}

func (invalidInput) Sentinel() error { return ErrInvalid }
