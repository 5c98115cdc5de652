package kv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Args is a parsed argument list.
type Args struct {
	Names []string          // positional words before any key=value
	Where map[string]string // pairs before `set` (or all pairs when there is no `set`)
	Set   map[string]string // pairs after `set`
	// Format is the format= column list of a command whose Spec has
	// Columns (lower case, in order); nil when not given.
	Format []string
	// Filters are the pairs of such a command whose key is none of its
	// Keys: column filters (`where gputype=h100`), checked against the
	// printed table's columns.
	Filters map[string]string
}

// Spec names the keys a command accepts.
type Spec struct {
	Keys    []string // accepted keys in the where-part (lower case)
	SetKeys []string // accepted keys after `set`; nil means `set` is not accepted
	// Columns are the columns of a command that prints a table (every
	// `show`), by name (lower case): format= picks among them, and a key
	// that is one of them and none of Keys filters the rows by it.
	Columns []string
}

// MissingSetError is a change given without `set` to a command that takes
// its changes after `set`. Fixed is the argument list with `set` put in.
type MissingSetError struct {
	Word  string
	Fixed []string
}

func (e *MissingSetError) Error() string {
	return fmt.Sprintf("%q: no key=value options are accepted here; the changes go after `set`: %s", e.Word, strings.Join(e.Fixed, " "))
}

// UnknownKeyError is a key the command does not accept.
type UnknownKeyError struct {
	Key     string
	Known   []string
	Columns []string // of a command that prints a table
}

func (e *UnknownKeyError) Error() string {
	if e.Columns != nil {
		msg := fmt.Sprintf("unknown option or column %q%s; ", e.Key, DidYouMean(e.Key, slices.Concat(e.Known, e.Columns)))
		if len(e.Known) > 0 {
			msg += "options: " + strings.Join(e.Known, ", ") + "; "
		}
		return msg + "columns (format= and where filters): " + strings.Join(e.Columns, ",")
	}
	if len(e.Known) == 0 {
		return fmt.Sprintf("%q: no key=value options are accepted here", e.Key)
	}
	return fmt.Sprintf("unknown option %q%s; known options: %s", e.Key, DidYouMean(e.Key, e.Known), strings.Join(e.Known, ", "))
}

// column is the column of cols that name is, without case ("" if none).
func column(name string, cols []string) string {
	for _, c := range cols {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	return ""
}

// Parse splits args per spec. Every problem is an error naming the word.
func Parse(args []string, spec Spec) (Args, error) {
	a := Args{Where: map[string]string{}, Set: map[string]string{}}
	inSet, sawSet := false, slices.ContainsFunc(args, func(w string) bool { return strings.EqualFold(w, "set") })
	for i, w := range args {
		if clause, err := clauseWord(w, spec, &inSet); err != nil || clause {
			if err != nil {
				return a, err
			}
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			if inSet || len(a.Where) > 0 || len(a.Filters) > 0 || a.Format != nil {
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
			if inSet {
				return a, &UnknownKeyError{Key: k, Known: allowed}
			}
			if err := a.whereOther(args, i, k, v, spec, sawSet); err != nil {
				return a, err
			}
			continue
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

// clauseWord reads the words set and where (any case), reporting whether
// w is one: set opens the set clause, once, in a command that has one;
// where may only come before it.
func clauseWord(w string, spec Spec, inSet *bool) (bool, error) {
	switch strings.ToLower(w) {
	case "set":
		if spec.SetKeys == nil {
			return true, fmt.Errorf("%q: this command takes no `set` clause", w)
		}
		if *inSet {
			return true, fmt.Errorf("`set` given twice")
		}
		*inSet = true
		return true, nil
	case "where":
		if *inSet {
			return true, fmt.Errorf("`where` must come before `set`")
		}
		return true, nil
	}
	return false, nil
}

// whereOther reads args[i], k=v before any `set`, whose key is not one of
// spec's: a key of the set clause without the `set` word (a
// MissingSetError with the fixed command), format=, or a filter on a
// column; else an UnknownKeyError.
func (a *Args) whereOther(args []string, i int, k, v string, spec Spec, sawSet bool) error {
	switch {
	case !sawSet && slices.Contains(spec.SetKeys, k):
		fixed := slices.Concat(args[:i:i], []string{"set"}, args[i:])
		return &MissingSetError{Word: args[i], Fixed: fixed}
	case spec.Columns != nil && k == "format":
		return a.setFormat(k, v, spec.Columns)
	case spec.Columns != nil && column(k, spec.Columns) != "":
		if a.Filters == nil {
			a.Filters = map[string]string{}
		}
		if _, dup := a.Filters[k]; dup {
			return fmt.Errorf("option %q given twice", k)
		}
		a.Filters[k] = v
		return nil
	case spec.Columns != nil:
		return &UnknownKeyError{Key: k, Known: spec.Keys, Columns: spec.Columns}
	}
	return &UnknownKeyError{Key: k, Known: spec.Keys}
}

// setFormat reads format=v (k): once, naming known columns.
func (a *Args) setFormat(k, v string, cols []string) error {
	if a.Format != nil {
		return fmt.Errorf("option %q given twice", k)
	}
	if a.Format = List(strings.ToLower(v)); len(a.Format) == 0 {
		return fmt.Errorf("format=: name the columns, e.g. format=%s", strings.Join(cols[:min(2, len(cols))], ","))
	}
	for _, item := range a.Format {
		c, _, err := FormatItem(item)
		if err != nil {
			return err
		}
		if column(c, cols) == "" {
			return fmt.Errorf("format=%s: no such column%s; columns: %s", c, DidYouMean(c, cols), strings.Join(cols, ","))
		}
	}
	return nil
}

// FormatItem splits one item of format= into its column and width, as
// sacctmgr's format=name%20 (right-justified in 20 characters) and
// name%-20 (left-justified): 0 when no width is given.
func FormatItem(item string) (col string, width int, err error) {
	col, w, ok := strings.Cut(item, "%")
	if !ok {
		return item, 0, nil
	}
	width, err = strconv.Atoi(w)
	if err != nil || width == 0 {
		return col, 0, fmt.Errorf("format=%s: after %% give the column's width, e.g. %s%%20 (right-justified) or %s%%-20 (left-justified)", item, col, col)
	}
	return col, width, nil
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
