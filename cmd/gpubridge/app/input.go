package app

import (
	"errors"
	"fmt"
)

// ErrInput marks an error in what the user gave (a flag, an argument, the
// configuration): the CLI exits 2 for it, the API answers 400, and nothing
// was changed.
var ErrInput = errors.New("invalid input")

type inputError struct{ error }

func (e inputError) Unwrap() error        { return e.error }
func (e inputError) Is(target error) bool { return target == ErrInput }

// Input marks err as an error in the input (errors.Is(err, ErrInput));
// nil stays nil.
func Input(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

// Inputf is Input of fmt.Errorf.
func Inputf(format string, a ...any) error { return inputError{fmt.Errorf(format, a...)} }
