package main

import (
	"errors"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"
	"github.com/gpubridge/gpubridge/internal/kv"
)

// TestParseNames: a command's count of names is checked before anything
// runs, with its own refusal (exit 2), the names put into it.
func TestParseNames(t *testing.T) {
	a := &App{}
	spec := kv.Spec{Keys: []string{"k"}}
	for _, c := range []struct {
		words []string
		t     takes
		want  string // "" for no error
	}{
		{[]string{"x", "k=1"}, takes{Spec: spec, names: oneName, usage: "one name (got %q)"}, ""},
		{[]string{"x", "y"}, takes{Spec: spec, names: oneName, usage: "one name (got %q)"}, `one name (got ["x" "y"])`},
		{nil, takes{Spec: spec, names: oneName, usage: "give one name"}, "give one name"},
		{[]string{"x"}, takes{Spec: spec, names: noName, usage: "unexpected %q: use k=V"}, `unexpected "x": use k=V`},
		{[]string{"k=1"}, takes{Spec: spec, names: noName, usage: "unexpected %q"}, ""},
		{[]string{"x", "y"}, takes{Spec: spec, names: twoNames, usage: "two"}, ""},
		{[]string{"x"}, takes{Spec: spec, names: twoNames, usage: "two"}, "two"},
		{[]string{"x", "y", "z"}, takes{Spec: spec}, ""},
		{[]string{"zzzz=1"}, takes{Spec: spec}, `unknown option "zzzz"; known options: k`},
	} {
		_, err := a.parse(c.words, c.t)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.words, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !errors.Is(err, app.ErrInput)):
			t.Errorf("%q: got %v, want input error %q", c.words, err, c.want)
		}
	}
}
