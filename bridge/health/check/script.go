package check

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A run is one Slurm batch job that runs one or more checks on a node, one
// after the other. Its script (Script.Render) frames each check's output
// with marker lines carrying the run's key,
//
//	@@gpubridge-health <key> begin <check> <unix time>
//	...the command's stdout and stderr...
//	@@gpubridge-health <key> end <check> rc=<exit code> <unix time>
//
// and bounds each command with timeout(1). Split reads the job's output
// back into one Section per check; a check whose end marker is missing
// (the job was killed, timed out, lost its node, or the file is cut) has an
// incomplete section and fails.

// markerPrefix starts every marker line.
const markerPrefix = "@@gpubridge-health "

// KeyPattern is what a run key may hold (it is written into the script and
// a file name).
var KeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Script is the batch script of one run.
type Script struct {
	Key    string
	Checks []Check
	Model  string // the node's GPU model, for {{model}}
	GPUs   int    // the node's GPU count, for {{gpus}}
}

// killGrace is how long timeout(1) waits after SIGTERM before SIGKILL.
const killGrace = 10 * time.Second

// Render returns the bash script.
func (s Script) Render() (string, error) {
	if !KeyPattern.MatchString(s.Key) {
		return "", fmt.Errorf("run key %q: want lower-case letters, digits and '-'", s.Key)
	}
	if len(s.Checks) == 0 {
		return "", fmt.Errorf("run %s has no check", s.Key)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# gpubridge health run %s: %s\n", s.Key, strings.Join(s.Names(), ", "))
	b.WriteString("export LC_ALL=C\n")
	fmt.Fprintf(&b, "mark() { printf '%s%s %%s\\n' \"$*\"; }\n", markerPrefix, s.Key)
	b.WriteString("run_check() {\n  local name=$1 secs=$2 cmd=$3 rc\n  mark \"begin $name $(date +%s)\"\n" +
		"  timeout --kill-after=" + strconv.Itoa(int(killGrace/time.Second)) + " \"$secs\" bash -c \"$cmd\" </dev/null 2>&1\n" +
		"  rc=$?\n  mark \"end $name rc=$rc $(date +%s)\"\n}\n")
	rep := strings.NewReplacer("{{gpus}}", strconv.Itoa(s.GPUs), "{{model}}", s.Model)
	for i, c := range s.Checks {
		if !NamePattern.MatchString(c.Name) {
			return "", fmt.Errorf("check name %q is not valid", c.Name)
		}
		eof := fmt.Sprintf("GPUBRIDGE_CHECK_%d_EOF", i)
		cmd := rep.Replace(c.Command)
		if strings.Contains(cmd, eof) || strings.Contains(cmd, markerPrefix) {
			return "", fmt.Errorf("check %s: its command may not contain %q or %q", c.Name, eof, strings.TrimSpace(markerPrefix))
		}
		secs := int(math.Ceil(c.Timeout.Seconds()))
		if secs <= 0 {
			return "", fmt.Errorf("check %s has no timeout", c.Name)
		}
		fmt.Fprintf(&b, "IFS= read -r -d '' cmd_%d <<'%s'\n%s\n%s\n", i, eof, strings.TrimRight(cmd, "\n"), eof)
		fmt.Fprintf(&b, "run_check %s %d \"$cmd_%d\"\n", c.Name, secs, i)
	}
	b.WriteString("exit 0\n")
	return b.String(), nil
}

// Names lists the checks in run order.
func (s Script) Names() []string {
	out := make([]string, len(s.Checks))
	for i, c := range s.Checks {
		out[i] = c.Name
	}
	return out
}

// TimeLimit is what the run's job may take: every check's timeout and kill
// grace, plus a minute for the job's start and end.
func (s Script) TimeLimit() time.Duration {
	d := time.Minute
	for _, c := range s.Checks {
		d += c.Timeout + killGrace
	}
	return d
}

// Section is one check's part of a run's output.
type Section struct {
	Check    string
	Output   []byte
	ExitCode int
	Started  bool // its begin marker is there
	Complete bool // and its end marker
	Start    time.Time
	End      time.Time
}

// Split cuts a run's output into sections by check name.
func Split(out []byte, key string) map[string]*Section {
	prefix := []byte(markerPrefix + key + " ")
	secs := map[string]*Section{}
	var cur *Section
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\r\n")
		if !bytes.HasPrefix(trimmed, prefix) {
			if cur != nil {
				cur.Output = append(cur.Output, line...)
			}
			continue
		}
		f := strings.Fields(string(trimmed[len(prefix):]))
		switch {
		case len(f) == 3 && f[0] == "begin":
			cur = &Section{Check: f[1], Started: true, Start: unixField(f[2])}
			secs[f[1]] = cur
		case len(f) == 4 && f[0] == "end" && cur != nil && cur.Check == f[1] && strings.HasPrefix(f[2], "rc="):
			rc, err := strconv.Atoi(strings.TrimPrefix(f[2], "rc="))
			if err == nil {
				cur.ExitCode, cur.Complete, cur.End = rc, true, unixField(f[3])
			}
			cur = nil
		}
	}
	return secs
}

func unixField(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// Outcome is one check's result in a run.
type Outcome struct {
	Check  string
	Result Result
	Start  time.Time
	End    time.Time
	// ExitCode of the command (-1 when it did not finish).
	ExitCode int
	Output   []byte
}

// Evaluate judges every check of the run from its output. A check that did
// not start or did not finish fails with the reason; a command that hit
// its timeout (exit 124 or 137 from timeout(1)) fails as timed out.
func (s Script) Evaluate(out []byte) []Outcome {
	secs := Split(out, s.Key)
	res := make([]Outcome, 0, len(s.Checks))
	for _, c := range s.Checks {
		o := Outcome{Check: c.Name, ExitCode: -1}
		sec := secs[c.Name]
		switch {
		case sec == nil:
			o.Result = failf("did not run: the job ended before this check started (killed, timed out or its node failed)")
		case !sec.Complete:
			o.Output, o.Start = sec.Output, sec.Start
			o.Result = failf("output ends before the check finished (the job was killed or its output is cut): %s", lastMeaningful(sec.Output))
		case sec.ExitCode == 124 || sec.ExitCode == 137:
			o.Output, o.Start, o.End, o.ExitCode = sec.Output, sec.Start, sec.End, sec.ExitCode
			o.Result = failf("timed out after %s", c.Timeout)
		default:
			o.Output, o.Start, o.End, o.ExitCode = sec.Output, sec.Start, sec.End, sec.ExitCode
			o.Result = c.Evaluate(Input{Output: sec.Output, ExitCode: sec.ExitCode, Model: s.Model, GPUs: s.GPUs})
		}
		res = append(res, o)
	}
	return res
}
