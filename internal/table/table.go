package table

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Options selects the output form. JSON wins over Parsable.
type Options struct {
	Parsable bool // -P/--parsable2: '|' between fields, none at the end
	NoHeader bool // -n/--noheader
	JSON     bool // --json
}

// Table is a header row and data rows of equal width. Keys, when set, are the
// JSON object keys for the columns; otherwise the lower-cased headers are used.
type Table struct {
	Header []string
	Keys   []string
	Rows   [][]string
	// Raw, when set, is marshalled as is for --json instead of Rows
	// (for typed values: numbers stay numbers).
	Raw any
}

// Write prints t to w in the form o asks for.
func Write(w io.Writer, o Options, t Table) error {
	for i, r := range t.Rows {
		if len(r) != len(t.Header) {
			return fmt.Errorf("table: row %d has %d fields, header has %d", i, len(r), len(t.Header))
		}
	}
	switch {
	case o.JSON:
		return writeJSON(w, t)
	case o.Parsable:
		if !o.NoHeader {
			if _, err := fmt.Fprintln(w, strings.Join(t.Header, "|")); err != nil {
				return err
			}
		}
		for _, r := range t.Rows {
			if _, err := fmt.Fprintln(w, strings.Join(r, "|")); err != nil {
				return err
			}
		}
		return nil
	default:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if !o.NoHeader {
			fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
			dashes := make([]string, len(t.Header))
			for i, h := range t.Header {
				width := len(h)
				for _, r := range t.Rows {
					width = max(width, len(r[i]))
				}
				dashes[i] = strings.Repeat("-", width)
			}
			fmt.Fprintln(tw, strings.Join(dashes, "\t"))
		}
		for _, r := range t.Rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		return tw.Flush()
	}
}

func writeJSON(w io.Writer, t Table) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if t.Raw != nil {
		return enc.Encode(t.Raw)
	}
	keys := t.Keys
	if keys == nil {
		keys = make([]string, len(t.Header))
		for i, h := range t.Header {
			keys[i] = strings.ToLower(h)
		}
	}
	out := make([]map[string]string, 0, len(t.Rows))
	for _, r := range t.Rows {
		m := make(map[string]string, len(r))
		for i, v := range r {
			m[keys[i]] = v
		}
		out = append(out, m)
	}
	return enc.Encode(out)
}
