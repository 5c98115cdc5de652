package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpubridge/gpubridge/internal/kv"
)

// Options selects the output form. JSON wins over Parsable and Trailing.
type Options struct {
	Parsable bool // -P/--parsable2: '|' between fields, none at the end
	Trailing bool // -p/--parsable: '|' after every field, the last too
	NoHeader bool // -n/--noheader
	JSON     bool // --json
	// Format picks the columns and their order (format=a,b): column keys
	// or headers, without case, each with an optional width as sacctmgr's
	// (name%20: right-justified in 20 characters, name%-20: left; a longer
	// value is cut to the width with a '+' last), which only the aligned
	// text form uses.
	Format []string
	// Where keeps the rows whose column (key or header, without case) holds
	// one of the comma-separated values (`where gputype=h100,1g.10gb`).
	Where map[string]string
	// Options are the command's own keys, named (with the columns) when a
	// format= or filter key is neither.
	Options []string
}

// Kind is how a column's cells are written in JSON.
type Kind int

// The kinds of column. A Number, Decimal or Bool cell that is empty or
// does not parse ("no rate", "-") is JSON null.
const (
	String Kind = iota
	// Number is a JSON number: counts, ids, GPU-seconds.
	Number
	// Decimal is an exact decimal (money, GPU-hours) kept as a JSON string
	// ("2.10"), so that no reader rounds it through a float.
	Decimal
	Bool
)

// Table is a header row and data rows of equal width. Keys, when set, are the
// JSON object keys for the columns; otherwise the lower-cased headers are used.
type Table struct {
	Header []string
	Keys   []string
	// Kinds, when set, gives each column's JSON kind (default String).
	Kinds []Kind
	Rows  [][]string
	// Raw, when set, is marshalled for --json instead of Rows (typed
	// values: numbers stay numbers, lists stay lists). A slice with one
	// element per row is filtered and projected like the rows.
	Raw any
}

// ColumnError is a format= or filter key that names no column.
type ColumnError struct {
	What    string // "format" or "filter"
	Name    string
	Columns []string
	Options []string
}

func (e *ColumnError) Error() string {
	msg := fmt.Sprintf("format=%s: no such column%s; columns: %s", e.Name, kv.DidYouMean(e.Name, e.Columns), strings.Join(e.Columns, ","))
	if e.What == "filter" {
		msg = fmt.Sprintf("%s=: neither an option nor a column%s; columns: %s", e.Name, kv.DidYouMean(e.Name, slices.Concat(e.Options, e.Columns)), strings.Join(e.Columns, ","))
		if len(e.Options) > 0 {
			msg += "; options: " + strings.Join(e.Options, ",")
		}
	}
	return msg
}

// Write prints t to w in the form o asks for.
func Write(w io.Writer, o Options, t Table) error {
	for i, r := range t.Rows {
		if len(r) != len(t.Header) {
			return fmt.Errorf("table: row %d has %d fields, header has %d", i, len(r), len(t.Header))
		}
	}
	cols, widths, rows, err := t.selection(o)
	if err != nil {
		return err
	}
	if o.JSON {
		return t.writeJSON(w, cols, rows, o)
	}
	header := pick(t.Header, cols)
	switch {
	case o.Parsable || o.Trailing:
		end := ""
		if o.Trailing {
			end = "|"
		}
		if !o.NoHeader {
			if _, err := fmt.Fprintln(w, strings.Join(header, "|")+end); err != nil {
				return err
			}
		}
		for _, r := range rows {
			if _, err := fmt.Fprintln(w, strings.Join(pick(t.Rows[r], cols), "|")+end); err != nil {
				return err
			}
		}
		return nil
	default:
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if !o.NoHeader {
			fmt.Fprintln(tw, strings.Join(fit(header, widths), "\t"))
			dashes := make([]string, len(cols))
			for i, c := range cols {
				width := len(t.Header[c])
				for _, r := range rows {
					width = max(width, len(t.Rows[r][c]))
				}
				if widths[i] != 0 {
					width = abs(widths[i])
				}
				dashes[i] = strings.Repeat("-", width)
			}
			fmt.Fprintln(tw, strings.Join(dashes, "\t"))
		}
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(fit(pick(t.Rows[r], cols), widths), "\t"))
		}
		return tw.Flush()
	}
}

// fit gives each cell with a width (format=name%20) that width, as
// sacctmgr does: right-justified (a width below 0: left-justified), a
// longer value cut to the width with a '+' last.
func fit(cells []string, widths []int) []string {
	for i, w := range widths {
		if w == 0 {
			continue
		}
		n, c := abs(w), cells[i]
		if len(c) > n {
			c = c[:n-1] + "+"
		}
		if w > 0 {
			c = strings.Repeat(" ", n-len(c)) + c
		} else {
			c += strings.Repeat(" ", n-len(c))
		}
		cells[i] = c
	}
	return cells
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func pick(r []string, cols []int) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = r[c]
	}
	return out
}

// key is column i's JSON key.
func (t Table) key(i int) string {
	if t.Keys != nil {
		return t.Keys[i]
	}
	return strings.ToLower(t.Header[i])
}

// column finds a column by key or header, without case.
func (t Table) column(name string) int {
	for i, h := range t.Header {
		if strings.EqualFold(h, name) || strings.EqualFold(t.key(i), name) {
			return i
		}
	}
	return -1
}

func (t Table) columnNames() []string {
	names := make([]string, len(t.Header))
	for i := range t.Header {
		names[i] = t.key(i)
	}
	return names
}

// Columns names the columns of tables (their JSON keys; a header that is
// not its key without case too), once each: what format= and the column
// filters of a command that prints them may name (kv.Spec.Columns).
func Columns(tables ...Table) []string {
	var names []string
	add := func(n string) {
		if !slices.ContainsFunc(names, func(x string) bool { return strings.EqualFold(x, n) }) {
			names = append(names, n)
		}
	}
	for _, t := range tables {
		for i, h := range t.Header {
			add(t.key(i))
			add(h)
		}
	}
	return names
}

// selection is the columns (format=) with their widths (0: none) and the
// rows (where) o keeps.
func (t Table) selection(o Options) (cols, widths, rows []int, err error) {
	if len(o.Format) == 0 {
		for i := range t.Header {
			cols = append(cols, i)
		}
		widths = make([]int, len(cols))
	}
	for _, item := range o.Format {
		f, width, err := kv.FormatItem(item)
		if err != nil {
			return nil, nil, nil, err
		}
		c := t.column(f)
		if c < 0 {
			return nil, nil, nil, &ColumnError{What: "format", Name: f, Columns: t.columnNames()}
		}
		cols, widths = append(cols, c), append(widths, width)
	}
	type cond struct {
		col    int
		values []string
	}
	var conds []cond
	for _, k := range slicesSorted(o.Where) {
		c := t.column(k)
		if c < 0 {
			return nil, nil, nil, &ColumnError{What: "filter", Name: k, Columns: t.columnNames(), Options: o.Options}
		}
		conds = append(conds, cond{c, kv.List(o.Where[k])})
	}
rowLoop:
	for i, r := range t.Rows {
		for _, c := range conds {
			if !matches(r[c.col], c.values) {
				continue rowLoop
			}
		}
		rows = append(rows, i)
	}
	return cols, widths, rows, nil
}

// matches: the cell equals one of the values, or is a comma-separated list
// holding one (a node's partitions "pool,ondemand" match pool).
func matches(cell string, values []string) bool {
	if len(values) == 0 {
		return cell == ""
	}
	for _, v := range values {
		if cell == v || strings.Contains(cell, ",") && slices.Contains(strings.Split(cell, ","), v) {
			return true
		}
	}
	return false
}

func slicesSorted(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (t Table) writeJSON(w io.Writer, cols, rows []int, o Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if t.Raw == nil {
		out := make([]object, 0, len(rows))
		for _, r := range rows {
			obj := make(object, 0, len(cols))
			for _, c := range cols {
				obj = append(obj, field{t.key(c), t.cell(r, c)})
			}
			out = append(out, obj)
		}
		return enc.Encode(out)
	}
	if len(o.Format) == 0 && len(o.Where) == 0 {
		return enc.Encode(t.Raw)
	}
	v := reflect.ValueOf(t.Raw)
	if v.Kind() != reflect.Slice || v.Len() != len(t.Rows) {
		return fmt.Errorf("format= and column filters do not apply to this command's --json (it prints one object); leave them out, or print a table")
	}
	out := make([]json.RawMessage, 0, len(rows))
	for _, r := range rows {
		b, err := json.Marshal(v.Index(r).Interface())
		if err != nil {
			return err
		}
		if len(o.Format) > 0 {
			if b, err = project(b, t, cols); err != nil {
				return err
			}
		}
		out = append(out, b)
	}
	return enc.Encode(out)
}

// cell is row r's column c as a JSON value of the column's kind.
func (t Table) cell(r, c int) any {
	s := t.Rows[r][c]
	k := String
	if t.Kinds != nil {
		k = t.Kinds[c]
	}
	switch k {
	case Number:
		var n json.Number
		if json.Unmarshal([]byte(s), &n) != nil || s == "" {
			return nil
		}
		return n
	case Decimal:
		var n json.Number
		if json.Unmarshal([]byte(s), &n) != nil || s == "" {
			return nil
		}
		return s
	case Bool:
		switch s {
		case "true", "yes", "on":
			return true
		case "false", "no", "off":
			return false
		}
		return nil
	}
	return s
}

// project keeps the members of a JSON object that the columns name (by
// key, without case), in the columns' order.
func project(b []byte, t Table, cols []int) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("format= with --json: the rows are not objects")
	}
	var obj object
	for _, c := range cols {
		for k, v := range m {
			if strings.EqualFold(k, t.key(c)) {
				obj = append(obj, field{k, v})
			}
		}
	}
	return json.Marshal(obj)
}

// object is a JSON object that keeps its members' order.
type object []field

type field struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
