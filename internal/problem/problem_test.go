package problem

import (
	"errors"
	"fmt"
	"testing"
)

var errBad = errors.New("bad input")

type bad struct{}

func (bad) Sentinel() error { return errBad }

type other struct{}

func (other) Sentinel() error { return errors.New("other") }

func TestList(t *testing.T) {
	var ps List[bad]
	if ps.Err() != nil {
		t.Fatal("an empty list is no error")
	}
	ps.Add("gpus", "%q is not a count", "x")
	ps.Add("", "no tenant")
	err := fmt.Errorf("add: %w", ps.Err())
	if !errors.Is(err, errBad) {
		t.Errorf("errors.Is(%v, errBad) = false", err)
	}
	var o List[other]
	o.Add("a", "b")
	if errors.Is(o.Err(), errBad) {
		t.Error("another kind's list matches errBad")
	}
	want := "2 problem(s), nothing was changed:\n  - gpus: \"x\" is not a count\n  - : no tenant"
	if ps.Error() != want {
		t.Errorf("Error() = %q; want %q", ps.Error(), want)
	}
	var back List[bad]
	if !errors.As(err, &back) || len(back) != 2 {
		t.Errorf("errors.As: %v", back)
	}
	if got := fmt.Sprint(ps.Prefixed("tenants[0]").Fields()); got != "[tenants[0].gpus tenants[0]]" {
		t.Errorf("Prefixed fields = %s", got)
	}
}
