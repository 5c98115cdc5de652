package docs

import (
	"regexp"
	"slices"
	"strings"
)

// Rule replaces one kind of variable text with a fixed mark, in the text's
// output and in the command's alike.
type Rule struct {
	Name string
	Re   *regexp.Regexp
	Repl string
}

// Rules is the whole list of what may differ between the text and a run,
// with JobColumns (a table's column of job ids); everything else must
// match to the character (but for trailing spaces).
var Rules = []Rule{
	// RFC 3339 instants and "YYYY-MM-DD HH:MM[:SS]" times (printed in UTC or local time).
	{"time", regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d| UTC)?`), "<TIME>"},
	// durations a command measures ("in 1.234s", "12ms", "0.31 s").
	{"duration", regexp.MustCompile(`\b\d+(\.\d+)?\s?(ms|µs|s)\b`), "<DUR>"},
	// API tokens (gpb_ and its secret).
	{"token", regexp.MustCompile(`\bgpb_[A-Za-z0-9_-]+`), "<TOKEN>"},
	// loopback ports the harness picks.
	{"port", regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<PORT>"},
	// Slurm job ids ("Submitted batch job 123", "jobid=123", "job 123").
	{"jobid", regexp.MustCompile(`\b(batch job |[Jj]ob[Ii]d=|[Jj]ob )\d+`), "${1}<JOBID>"},
	// a job in the tenant API's job lists ({"id":123,"name":...}; a booking's id is followed by "tenant").
	{"apijob", regexp.MustCompile(`"id":\d+,"name":`), `"id":<JOBID>,"name":`},
	// the process and host of a gpubridge command holding the writer lock ("apply by root (pid 4242 on head1)").
	{"holder", regexp.MustCompile(`\(pid \d+ on [^) ]+\)`), "(pid <PID> on <HOST>)"},
	// process ids of background commands ("[1] 12345").
	{"pid", regexp.MustCompile(`^\[\d+\] \d+$`), "[<N>] <PID>"},
	// a node's state flag from a reservation that another run on the shared testbed holds now.
	{"reserved", regexp.MustCompile(`\b([A-Z]+)\+RESERVED\b`), "$1"},
	// column alignment, which the variable parts above (and a table's other rows) move:
	// runs of spaces inside a line, and a table's rule of dashes.
	{"align", regexp.MustCompile(`(\S)  +`), "$1  "},
	{"rule", regexp.MustCompile(`^-[- ]*-$`), "<RULE>"},
}

// Noise is output that a command prints or not from run to run for reasons
// of the cluster's plumbing, not of what the text shows: sacctmgr's error
// on closing its slurmdbd connection (DBD_FINI), printed after its answer
// now and then. Such lines are dropped from the output before it is
// compared (from the text's too).
var Noise = []*regexp.Regexp{
	regexp.MustCompile(`^sacctmgr: error: Getting response to message type: DBD_FINI$`),
}

// quiet returns lines without the Noise lines.
func quiet(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !slices.ContainsFunc(Noise, func(re *regexp.Regexp) bool { return re.MatchString(strings.TrimRight(l, " \t")) }) {
			out = append(out, l)
		}
	}
	return out
}

// Normalise applies Rules to one line and drops its trailing spaces.
func Normalise(line string) string {
	for _, r := range Rules {
		line = r.Re.ReplaceAllString(line, r.Repl)
	}
	return strings.TrimRight(line, " \t")
}

// Elision is a line of the text that stands for any number of lines of
// output, the text's own "...".
const Elision = "..."

// Match reports whether the output got is what the text wants, both
// without Noise and normalised line by line (after JobColumns); an
// Elision line of want matches zero or more lines of got.
func Match(want, got []string) bool {
	want, got = quiet(want), quiet(got)
	w := JobColumns(want)
	for i, l := range w {
		w[i] = Normalise(l)
	}
	g := JobColumns(got)
	for i, l := range g {
		g[i] = Normalise(l)
	}
	return match(w, g)
}

// jobHeader names a table's column of Slurm job ids: JobID (a table
// aligned with spaces under a rule of dashes) or job_id (CSV).
var jobHeader = regexp.MustCompile(`(^|\s)JobID(\s|$)|(^|,)job_id(,|$)`)

// JobColumns returns lines with the values of a table's job id column
// (whole numbers in the column headed JobID or job_id) replaced by
// <JOBID>: a table of jobs that the document submitted shows the ids Slurm
// gave them on that run. Nothing else of the table changes; a table ends
// at a blank line.
func JobColumns(lines []string) []string {
	out := append([]string(nil), lines...)
	for i := 0; i < len(out); i++ {
		if !jobHeader.MatchString(out[i]) {
			continue
		}
		if strings.Contains(out[i], ",") {
			i = csvJobColumn(out, i)
		} else if i+1 < len(out) && strings.HasPrefix(out[i+1], "--") {
			i = alignedJobColumn(out, i)
		}
	}
	return out
}

// wholeNumber is a job id as a table shows it.
var wholeNumber = regexp.MustCompile(`^\d+$`)

// alignedJobColumn rewrites the JobID column of the aligned table whose
// header is lines[h] (its rule below it): the field of each row under the
// header's JobID, up to the next column's start. It returns the table's
// last line.
func alignedJobColumn(lines []string, h int) int {
	at := regexp.MustCompile(`(^|\s)JobID(\s|$)`).FindStringIndex(lines[h])
	start := at[0]
	if lines[h][start] == ' ' {
		start++
	}
	end := -1 // the next column's start, or the end of the row
	if m := regexp.MustCompile(`\S`).FindStringIndex(lines[h][start+len("JobID"):]); m != nil {
		end = start + len("JobID") + m[0]
	}
	i := h + 2
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		row := lines[i]
		if len(row) <= start {
			continue
		}
		e := len(row)
		if end >= 0 && end < e {
			e = end
		}
		if f := strings.TrimSpace(row[start:e]); wholeNumber.MatchString(f) {
			lines[i] = row[:start] + strings.Replace(row[start:e], f, "<JOBID>", 1) + row[e:]
		}
	}
	return i
}

// csvJobColumn rewrites the job_id field of the CSV rows after the header
// lines[h] that have as many fields as it. It returns the table's last
// line.
func csvJobColumn(lines []string, h int) int {
	head := strings.Split(lines[h], ",")
	col := slices.Index(head, "job_id")
	if col < 0 {
		return h
	}
	i := h + 1
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		f := strings.Split(lines[i], ",")
		if len(f) == len(head) && wholeNumber.MatchString(f[col]) {
			f[col] = "<JOBID>"
			lines[i] = strings.Join(f, ",")
		}
	}
	return i
}

// match is Match on normalised lines (backtracking on elisions).
func match(w, g []string) bool {
	if len(w) == 0 {
		return len(g) == 0
	}
	if w[0] == Elision {
		for k := 0; k <= len(g); k++ {
			if match(w[1:], g[k:]) {
				return true
			}
		}
		return false
	}
	return len(g) > 0 && w[0] == g[0] && match(w[1:], g[1:])
}
