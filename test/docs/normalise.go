package docs

import (
	"regexp"
	"strings"
)

// Rule replaces one kind of variable text with a fixed mark, in the text's
// output and in the command's alike.
type Rule struct {
	Name string
	Re   *regexp.Regexp
	Repl string
}

// Rules is the whole list of what may differ between the text and a run;
// everything else must match to the character (but for trailing spaces).
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
	{"jobid", regexp.MustCompile(`\b(batch job|[Jj]ob[Ii]d=|[Jj]ob) \d+`), "$1 <JOBID>"},
	// process ids of background commands ("[1] 12345").
	{"pid", regexp.MustCompile(`^\[\d+\] \d+$`), "[<N>] <PID>"},
	// a node's state flag from a reservation that another run on the shared testbed holds now.
	{"reserved", regexp.MustCompile(`\b([A-Z]+)\+RESERVED\b`), "$1"},
	// column alignment, which the variable parts above (and a table's other rows) move:
	// runs of spaces inside a line, and a table's rule of dashes.
	{"align", regexp.MustCompile(`(\S)  +`), "$1  "},
	{"rule", regexp.MustCompile(`^-[- ]*-$`), "<RULE>"},
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
// normalised line by line; an Elision line of want matches zero or more
// lines of got.
func Match(want, got []string) bool {
	w := make([]string, len(want))
	for i, l := range want {
		w[i] = Normalise(l)
	}
	g := make([]string, len(got))
	for i, l := range got {
		g[i] = Normalise(l)
	}
	return match(w, g)
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
