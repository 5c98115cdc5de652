package export

import (
	"bufio"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Neutralize makes a CSV cell safe to open in a spreadsheet (OWASP "CSV
// Injection"): a cell that starts with = + - @, a tab or a carriage return
// would be read as a formula (=HYPERLINK(...), @SUM(...), -2+3), so it gets
// a leading apostrophe, which spreadsheets show as text. Plain numbers
// (-0.50) are left as they are. The writer also quotes a neutralized cell.
func Neutralize(s string) (string, bool) {
	if s == "" {
		return s, false
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
	default:
		return s, false
	}
	if isPlainNumber(s) {
		return s, false
	}
	return "'" + s, true
}

// isPlainNumber reports whether s is -?[0-9]+(\.[0-9]+)?: the numbers the
// exports write (amounts, GPU-seconds, GPU-hours, rates), which a
// spreadsheet reads as numbers, never as formulas, so a negative amount
// keeps its sign.
func isPlainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") {
		return false
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// cellWriter writes RFC 4180 CSV records (comma separated, LF line ends,
// like encoding/csv) with every cell neutralized. A neutralized cell is
// always quoted, as OWASP recommends; other cells are quoted only when they
// need it (a comma, quote, CR or LF, or a leading space), so ordinary
// output is the same bytes encoding/csv writes.
type cellWriter struct {
	w   *bufio.Writer
	err error
}

func newCellWriter(w io.Writer) *cellWriter {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
	}
	return &cellWriter{w: bw}
}

// Write writes one record.
func (c *cellWriter) Write(rec []string) error {
	if c.err != nil {
		return c.err
	}
	for i, f := range rec {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if plainCell(f) {
			c.w.WriteString(f)
			continue
		}
		f, forced := Neutralize(f)
		if !forced && !needsQuotes(f) {
			c.w.WriteString(f)
			continue
		}
		c.w.WriteByte('"')
		for {
			j := strings.IndexByte(f, '"')
			if j < 0 {
				break
			}
			c.w.WriteString(f[:j+1])
			c.w.WriteByte('"')
			f = f[j+1:]
		}
		c.w.WriteString(f)
		c.w.WriteByte('"')
	}
	_, c.err = c.w.WriteString("\n")
	return c.err
}

// Flush writes buffered records out.
func (c *cellWriter) Flush() {
	if err := c.w.Flush(); c.err == nil {
		c.err = err
	}
}

// Error returns the first error of a Write or Flush.
func (c *cellWriter) Error() error { return c.err }

func needsQuotes(f string) bool {
	if f == "" {
		return false
	}
	if f == `\.` {
		return true
	}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsSpace(r)
}

// plainCell reports, quickly, that f is written as it is: neither
// neutralized nor quoted. It may say false of a cell that is (a negative
// number, a non-ASCII start); Write then decides the long way.
func plainCell(f string) bool {
	if f == "" {
		return true
	}
	switch c := f[0]; {
	case c >= 0x80, c <= ' ', c == '=', c == '+', c == '-', c == '@':
		return false
	}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case ',', '"', '\r', '\n':
			return false
		}
	}
	return f != `\.`
}
