package kv

import (
	"fmt"
	"slices"
	"strings"
)

// Args is a parsed argument list.
type Args struct {
	Names []string          // positional words before any key=value
	Where map[string]string // pairs before `set` (or all pairs when there is no `set`)
	Set   map[string]string // pairs after `set`
}

// Spec names the keys a command accepts.
type Spec struct {
	Keys    []string // accepted keys in the where-part (lower case)
	SetKeys []string // accepted keys after `set`; nil means `set` is not accepted
}

// Parse splits args per spec. Every problem is an error naming the word.
func Parse(args []string, spec Spec) (Args, error) {
	a := Args{Where: map[string]string{}, Set: map[string]string{}}
	inSet := false
	for _, w := range args {
		lw := strings.ToLower(w)
		switch {
		case lw == "set":
			if spec.SetKeys == nil {
				return a, fmt.Errorf("%q: this command takes no `set` clause", w)
			}
			if inSet {
				return a, fmt.Errorf("`set` given twice")
			}
			inSet = true
			continue
		case lw == "where":
			if inSet {
				return a, fmt.Errorf("`where` must come before `set`")
			}
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			if inSet || len(a.Where) > 0 {
				return a, fmt.Errorf("%q: expected key=value here", w)
			}
			a.Names = append(a.Names, w)
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		allowed, dst := spec.Keys, a.Where
		if inSet {
			allowed, dst = spec.SetKeys, a.Set
		}
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return a, fmt.Errorf("%q: no key=value options are accepted here", w)
			}
			return a, fmt.Errorf("unknown option %q; known options: %s", k, strings.Join(allowed, ", "))
		}
		if _, dup := dst[k]; dup {
			return a, fmt.Errorf("option %q given twice", k)
		}
		dst[k] = v
	}
	if inSet && len(a.Set) == 0 {
		return a, fmt.Errorf("`set` needs at least one key=value")
	}
	return a, nil
}

// List splits a comma-separated value, dropping empty items and spaces.
func List(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
