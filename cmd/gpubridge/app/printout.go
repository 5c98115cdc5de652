package app

import (
	"fmt"
	"io"

	"github.com/gpubridge/gpubridge/internal/table"
)

// Printout is what a command prints of a result where the output options
// (--json, -P, format=, where) decide what: its parts, in order. The
// builders add a part to a copy: Printout{}.Notes(note).Table(t).Text(s).
type Printout struct {
	Parts []Part
	// Err, when set, is the command's error instead of the parts: what it
	// prints could not be made.
	Err error
}

// Part is a table (printed in the form the output options ask for) or,
// without one, text printed as it is on stdout, or on stderr (Stderr).
type Part struct {
	Table  *table.Table
	Text   string
	Stderr bool
}

// Table adds t.
func (p Printout) Table(t table.Table) Printout {
	p.Parts = append(p.Parts, Part{Table: &t})
	return p
}

// Text adds s for stdout (nothing when it is empty).
func (p Printout) Text(s string) Printout {
	if s != "" {
		p.Parts = append(p.Parts, Part{Text: s})
	}
	return p
}

// Note adds s for stderr as it is (nothing when it is empty).
func (p Printout) Note(s string) Printout {
	if s != "" {
		p.Parts = append(p.Parts, Part{Text: s, Stderr: true})
	}
	return p
}

// Notes adds each non-empty line for stderr, with its newline.
func (p Printout) Notes(lines ...string) Printout {
	for _, l := range lines {
		if l != "" {
			p = p.Note(l + "\n")
		}
	}
	return p
}

// Tables is a view's tables, a blank line between two, after its note
// about the choice of tables (none: "").
func Tables(ts []table.Table, note string) Printout {
	p := Printout{}.Notes(note)
	for i, t := range ts {
		if i > 0 {
			p = p.Text("\n")
		}
		p = p.Table(t)
	}
	return p
}

// Write writes p's parts in order: tables with print (the command's, in
// the form its output options ask for), text to out or to errw. It writes
// nothing of a printout with Err and returns Err.
func (p Printout) Write(out, errw io.Writer, print func(table.Table) error) error {
	if p.Err != nil {
		return p.Err
	}
	for _, part := range p.Parts {
		var err error
		switch {
		case part.Table != nil:
			err = print(*part.Table)
		case part.Stderr:
			fmt.Fprint(errw, part.Text)
		default:
			_, err = fmt.Fprint(out, part.Text)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
