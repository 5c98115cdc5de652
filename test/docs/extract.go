package docs

import (
	"fmt"
	"regexp"
	"strings"
)

// Step is one command of an example and the output the text shows for it.
type Step struct {
	Line int      // the line of the command in the file, from 1
	Cmd  string   // the command, without its "$ " (continuation lines joined by newlines)
	Want []string // the lines shown after it, up to the next command or the end of the block
	Next int      // the line after the command's last (continuation) line: Want starts there
}

// Example is one fenced block that shows at least one command.
type Example struct {
	File  string
	Line  int      // the line of the opening fence, from 1
	Skip  string   // the reason of a `<!-- doc-test: skip REASON -->` mark, empty when it runs
	Setup []string // the commands of the `<!-- doc-test: setup COMMAND -->` marks since the block before
	// Teardown are the commands of the `<!-- doc-test: teardown COMMAND -->`
	// marks since the block before: they run at the end of the document.
	Teardown []string
	Steps    []Step
}

// Name is FILE:LINE, how a report names the example.
func (e Example) Name() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// Key is FILE, the example's first command and the first line it shows,
// how the pending list names the example (line numbers move with every
// edit).
func (e Example) Key() string {
	cmd, _, _ := strings.Cut(e.Steps[0].Cmd, "\n")
	k := e.File + ": $ " + cmd
	if len(e.Steps[0].Want) > 0 {
		k += " | " + e.Steps[0].Want[0]
	}
	return k
}

var (
	skipMark  = regexp.MustCompile(`^<!--\s*doc-test:\s*skip\s+(.+?)\s*-->\s*$`)
	setupMark = regexp.MustCompile(`^<!--\s*doc-test:\s*setup\s+(.+?)\s*-->\s*$`)
	fileMark  = regexp.MustCompile(`^<!--\s*doc-test:\s*file\s+(\S+)\s*-->\s*$`)
	downMark  = regexp.MustCompile(`^<!--\s*doc-test:\s*teardown\s+(.+?)\s*-->\s*$`)
)

// Extract returns the examples of a Markdown document: the fenced blocks
// (```) with a line starting with "$ ". The lines of a block before its
// first command are context (a root prompt's "# ...", a file's text), not
// compared; a command line ending in a backslash continues on the next line. A skip mark
// applies to the block that follows it, with at most blank lines between.
// A setup mark's command runs before the next block's, unseen by a reader
// of the rendered page: it makes the state the text assumes (a file, a
// tenant) where the text does not show how. A `<!-- doc-test: file NAME -->`
// mark before a block (a configuration, a tenants file the text shows)
// makes its content the file NAME, written there, before the next
// example's commands. A `<!-- doc-test: teardown COMMAND -->` mark's
// command runs when the document ends (its examples passed or not): it
// undoes what a setup did outside the document's own database and tenants
// (rows written to slurmdbd's database).
func Extract(file string, src string) ([]Example, error) {
	lines := strings.Split(src, "\n")
	var out []Example
	var setup, teardown []string
	skip, fileName := "", ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := skipMark.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			skip = m[1]
			continue
		}
		if m := setupMark.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			setup = append(setup, m[1])
			continue
		}
		if m := fileMark.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			fileName = m[1]
			continue
		}
		if m := downMark.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			teardown = append(teardown, m[1])
			continue
		}
		if !strings.HasPrefix(l, "```") {
			if strings.TrimSpace(l) != "" {
				skip, fileName = "", ""
			}
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: fenced block not closed", file, start+1)
		}
		if fileName != "" {
			setup = append(setup, "cat >"+fileName+" <<'DOCTEST_EOF'\n"+strings.Join(body, "\n")+"\nDOCTEST_EOF")
			fileName = ""
			continue
		}
		if ex := parseBlock(file, start+1, body); ex != nil {
			ex.Skip, ex.Setup, ex.Teardown = skip, setup, teardown
			out = append(out, *ex)
			setup, teardown = nil, nil
		}
		skip = ""
	}
	return out, nil
}

// parseBlock makes the example of one block's lines (nil when it shows no
// command); fence is the line of the opening fence.
func parseBlock(file string, fence int, body []string) *Example {
	has := false
	for _, l := range body {
		if strings.HasPrefix(l, "$ ") {
			has = true
		}
	}
	if !has {
		return nil
	}
	ex := &Example{File: file, Line: fence}
	for j := 0; j < len(body); j++ {
		l := body[j]
		line := fence + 1 + j
		if !strings.HasPrefix(l, "$ ") {
			if len(ex.Steps) == 0 {
				continue // lines before the first command: context the text gives, not output
			}
			st := &ex.Steps[len(ex.Steps)-1]
			st.Want = append(st.Want, l)
			continue
		}
		cmd := strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(cmd, `\`) && j+1 < len(body) {
			j++
			cmd += "\n" + body[j]
		}
		ex.Steps = append(ex.Steps, Step{Line: line, Cmd: cmd, Next: fence + 2 + j})
	}
	for k := range ex.Steps {
		ex.Steps[k].Want = trimBlank(ex.Steps[k].Want)
	}
	return ex
}

// trimBlank drops the blank lines at the end (the text separates one
// command's output from the next command with them).
func trimBlank(ls []string) []string {
	for len(ls) > 0 && strings.TrimSpace(ls[len(ls)-1]) == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}
