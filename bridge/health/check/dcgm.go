package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// dcgmi diag -r 1|2|3 prints either a table (the default) or, with -j, a
// JSON document. Both are read here, in the forms of DCGM 3.x (tests named
// "GPU Memory", "Pass - All", results per "gpu_ids") and 4.x (plugin names
// such as "memory", a result line per entity "GPU0: Pass", JSON
// "test_summary" and "entity_id"):
//
//	Successfully ran diagnostic for group.
//	+---------------------------+------------------------------------------------+
//	| Diagnostic                | Result                                         |
//	+===========================+================================================+
//	|-----  Metadata  ----------+------------------------------------------------|
//	| DCGM Version              | 3.3.5                                          |
//	|-----  Deployment  --------+------------------------------------------------|
//	| Denylist                  | Pass                                           |
//	+-----  Hardware  ----------+------------------------------------------------+
//	| GPU Memory                | Pass - GPUs: 0, 2, 3                           |
//	|                           | Fail - GPU: 1                                  |
//	| Warning                   | GPU 1 Error using CUDA API cudaMalloc ...      |
//	+---------------------------+------------------------------------------------+
//
//	{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware",
//	  "tests": [{"name": "GPU Memory", "results": [{"gpu_ids": "1", "status": "Fail",
//	  "warnings": [{"warning": "...", "error_id": 29}]}]}]}]}}
//
// A failed test fails the check, a warned one warns, skipped ones are
// ignored. The run must be complete: the table's closing border, valid
// JSON, and the categories of the level (Deployment for -r 1, Integration
// or Hardware as well for -r 2, Stress as well for -r 3); otherwise the
// output is truncated and the check fails.

type dcgmTest struct {
	name     string
	category string
	verdict  Verdict
	ran      bool // at least one status that is not Skip
	failed   []string
	warned   []string
	msgs     []string
}

func (t *dcgmTest) add(status Verdict, skip bool, gpu string) {
	if t.verdict == "" {
		t.verdict = Pass
	}
	if skip {
		return
	}
	t.ran = true
	t.verdict = t.verdict.Worse(status)
	switch status {
	case Fail:
		if gpu != "" && !slices.Contains(t.failed, gpu) {
			t.failed = append(t.failed, gpu)
		}
	case Warn:
		if gpu != "" && !slices.Contains(t.warned, gpu) {
			t.warned = append(t.warned, gpu)
		}
	}
}

func parseDCGM(in Input, level int) Result {
	out := bytes.TrimSpace(in.Output)
	if len(out) == 0 {
		return failf("dcgmi printed nothing (exit %d)", in.ExitCode)
	}
	var tests []*dcgmTest
	var r *Result
	if i := bytes.IndexByte(out, '{'); i >= 0 && (i == 0 || !bytes.Contains(out[:i], []byte("|"))) {
		tests, r = parseDCGMJSON(out[i:])
	} else {
		tests, r = parseDCGMTable(out)
	}
	if r != nil {
		return *r
	}
	return judgeDCGM(tests, level, in.ExitCode)
}

// judgeDCGM turns the tests of a complete run into a result.
func judgeDCGM(tests []*dcgmTest, level, exit int) Result {
	cats := map[string]bool{}
	res := Result{Verdict: Pass}
	var why []string
	var run, failed, warned int
	for _, t := range tests {
		if !t.ran {
			continue
		}
		run++
		cats[strings.ToLower(t.category)] = true
		if t.verdict == Pass {
			continue
		}
		res.Verdict = res.Verdict.Worse(t.verdict)
		s := t.name + " " + map[Verdict]string{Fail: "failed", Warn: "warned"}[t.verdict]
		gpus := t.failed
		if t.verdict == Warn {
			gpus = t.warned
		}
		if len(gpus) > 0 {
			s += " on GPU " + strings.Join(gpus, ",")
		}
		if len(t.msgs) > 0 {
			s += ": " + clip(strings.TrimSpace(t.msgs[0]), 120)
		}
		if t.verdict == Fail {
			failed++
			why = append([]string{s}, why...) // failures first
		} else {
			warned++
			why = append(why, s)
		}
	}
	if run == 0 {
		return failf("dcgmi diag output holds no test result (garbage or truncated output)")
	}
	for _, need := range dcgmLevelCategories(level) {
		found := false
		for _, c := range need {
			found = found || cats[c]
		}
		if !found {
			return failf("dcgmi diag -r %d output has no %s results: the run is incomplete", level, strings.Join(need, " or "))
		}
	}
	res.Values = []Value{
		{Name: "tests_run", Value: float64(run), Unit: "tests"},
		{Name: "tests_failed", Value: float64(failed), Unit: "tests"},
		{Name: "tests_warned", Value: float64(warned), Unit: "tests"},
	}
	if exit != 0 && res.Verdict == Pass {
		// dcgmi returns non-zero when a test failed; a zero-failure table
		// with a failing exit is a run that broke after printing.
		return Result{Verdict: Fail, Reason: fmt.Sprintf("dcgmi exited %d although no test failed", exit), Values: res.Values}
	}
	res.Reason = clip(strings.Join(why, "; "), 300)
	return res
}

// dcgmLevelCategories: for each level, the categories (lower case) of which
// one per group must have run.
func dcgmLevelCategories(level int) [][]string {
	switch {
	case level <= 1:
		return [][]string{{"deployment"}}
	case level == 2:
		return [][]string{{"deployment"}, {"integration", "hardware"}}
	default:
		return [][]string{{"deployment"}, {"stress"}}
	}
}

var (
	dcgmCategory = regexp.MustCompile(`^[|+]-{3,}\s+([A-Za-z][A-Za-z ]*?)\s+-+\+`)
	dcgmBorder   = regexp.MustCompile(`^\+[-=+]+\+$`)
	dcgmHeader   = regexp.MustCompile(`^\|\s*Diagnostic\s*\|\s*Result\s*\|$`)
	// "Pass", "Pass - All", "Fail - GPU: 1", "Warn - GPUs: 0, 1", "Skip - All"
	dcgmStatus = regexp.MustCompile(`^(Pass|Fail|Warn|Skip)(?:\s*-\s*(All|GPUs?:\s*([0-9, ]+)))?$`)
	// DCGM 4: "GPU0: Pass", "CPU1: Fail"
	dcgmEntity = regexp.MustCompile(`^([A-Za-z]+)(\d+):\s*(Pass|Fail|Warn|Skip)$`)
	// The names of message rows: "Warning", "Error", "Info", and in DCGM 4
	// "Warning: GPU1".
	dcgmMessage = regexp.MustCompile(`^(Warning|Error|Info)(:\s.*)?$`)
)

// dcgmWrap is the width at which dcgmi cuts long messages into rows.
const dcgmWrap = 45

// msgChunk is one row's part of a wrapped message: dcgmi writes the message
// in pieces of 45 characters, each padded in the 46-character cell after a
// space, so the first 45 characters of the cell are the piece as it was
// (spaces at its ends included).
func msgChunk(cell string) string {
	cell = strings.TrimPrefix(cell, " ")
	if len(cell) > dcgmWrap {
		cell = cell[:dcgmWrap]
	}
	return cell
}

var dcgmMetadata = []string{"DCGM Version", "Driver Version Detected", "GPU Device IDs Detected", "CPU Device IDs Detected",
	"Number of CPUs Detected", "EUD Test Version", "CPU EUD Test Version"}

func statusVerdict(s string) (Verdict, bool) {
	switch strings.ToLower(s) {
	case "pass":
		return Pass, false
	case "warn", "warning":
		return Warn, false
	case "skip", "skipped", "":
		return Pass, true
	}
	return Fail, false // "Fail", and anything unexpected
}

// parseDCGMTable reads the table form; r is non-nil when the output cannot
// be judged.
func parseDCGMTable(out []byte) ([]*dcgmTest, *Result) {
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	start, r := dcgmTableStart(lines, out)
	if r != nil {
		return nil, r
	}
	t := &dcgmTable{}
	complete := false
	for _, raw := range lines[start+1:] {
		l := strings.TrimSpace(raw)
		if l == "" {
			continue
		}
		if m := dcgmCategory.FindStringSubmatch(l); m != nil {
			t.category, t.cur, t.lastMsg = m[1], nil, false
			continue
		}
		if dcgmBorder.MatchString(l) {
			if strings.Contains(l, "=") {
				continue // the line under the header
			}
			if t.rows > 0 {
				complete = true
				break
			}
			continue
		}
		if r := t.row(l); r != nil {
			return nil, r
		}
	}
	if !complete {
		r := failf("dcgmi diag table has no closing border: the output is truncated")
		return nil, &r
	}
	return t.tests, nil
}

// dcgmTableStart is the index of the table's header line; without one the
// output cannot be judged, and r says why (dcgmi's own error when it
// printed one).
func dcgmTableStart(lines []string, out []byte) (int, *Result) {
	for i, l := range lines {
		if dcgmHeader.MatchString(strings.TrimSpace(l)) {
			return i, nil
		}
	}
	for _, l := range lines {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Error") {
			r := failf("dcgmi: %s", clip(l, 200))
			return -1, &r
		}
	}
	r := failf("no dcgmi diag result table in the output (garbage or truncated output): %s", firstLine(out))
	return -1, &r
}

// dcgmTable is what parseDCGMTable gathered so far: the tests, the one
// whose rows are being read, the category they sit in, whether the last
// row was a message (the next unnamed row may continue it) and how many
// rows there were.
type dcgmTable struct {
	tests    []*dcgmTest
	cur      *dcgmTest
	category string
	lastMsg  bool
	rows     int
}

// row takes in one row of the table: metadata is skipped, a named row
// opens a test, a message row gives the current test a reason, an unnamed
// row carries more results or the rest of a wrapped message. r is non-nil
// when a test's result cannot be read.
func (t *dcgmTable) row(l string) *Result {
	if !strings.HasPrefix(l, "|") {
		return nil
	}
	parts := strings.Split(l, "|")
	if len(parts) < 4 {
		return nil
	}
	name := strings.TrimSpace(parts[1])
	info := strings.TrimSpace(strings.Join(parts[2:len(parts)-1], "|"))
	t.rows++
	if t.category == "" || t.category == "Metadata" {
		if slices.Contains(dcgmMetadata, name) || t.category == "Metadata" {
			return nil
		}
	}
	switch {
	case name == "":
		t.more(info, parts[2])
	case dcgmMessage.MatchString(name):
		if strings.HasPrefix(name, "Info") {
			t.lastMsg = false // info lines are evidence, not reasons
			return nil
		}
		if t.cur != nil {
			t.cur.msgs = append(t.cur.msgs, msgChunk(parts[2]))
		}
		t.lastMsg = true
	default:
		test := &dcgmTest{name: name, category: t.category}
		t.tests = append(t.tests, test)
		t.cur, t.lastMsg = test, false
		m := dcgmStatus.FindStringSubmatch(info)
		if m == nil {
			r := failf("dcgmi diag: test %q has an unknown result %q", clip(name, 40), clip(info, 40))
			return &r
		}
		addDCGMStatus(test, m)
	}
	return nil
}

// more takes in an unnamed row under the current test: a status for more
// GPUs (DCGM 3), one entity's status (DCGM 4), or the next piece of a
// wrapped message.
func (t *dcgmTable) more(info, cell string) {
	if t.cur == nil {
		return
	}
	if m := dcgmStatus.FindStringSubmatch(info); m != nil {
		addDCGMStatus(t.cur, m)
		t.lastMsg = false
	} else if m := dcgmEntity.FindStringSubmatch(info); m != nil {
		v, skip := statusVerdict(m[3])
		t.cur.add(v, skip, m[2])
		t.lastMsg = false
	} else if t.lastMsg && len(t.cur.msgs) > 0 {
		t.cur.msgs[len(t.cur.msgs)-1] += msgChunk(cell) // a wrapped message
	}
}

// addDCGMStatus gives test the status of a dcgmStatus match m, for each
// GPU it lists (or for the whole test when it lists none).
func addDCGMStatus(test *dcgmTest, m []string) {
	v, skip := statusVerdict(m[1])
	gpus := splitGPUList(m[3])
	if len(gpus) == 0 {
		test.add(v, skip, "")
	}
	for _, g := range gpus {
		test.add(v, skip, g)
	}
}

func splitGPUList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// JSON forms.
type dcgmJSONDoc struct {
	RuntimeError string `json:"runtime_error"`
	Categories   []struct {
		Category string `json:"category"`
		Tests    []struct {
			Name    string           `json:"name"`
			Status  string           `json:"status"`
			Results []dcgmJSONResult `json:"results"`
			Summary *dcgmJSONResult  `json:"test_summary"`
		} `json:"tests"`
	} `json:"test_categories"`
}

type dcgmJSONResult struct {
	Status   string          `json:"status"`
	GPUID    json.RawMessage `json:"gpu_id"`
	GPUIDs   json.RawMessage `json:"gpu_ids"`
	EntityID json.RawMessage `json:"entity_id"`
	Group    string          `json:"entity_group"`
	Warnings json.RawMessage `json:"warnings"`
}

func (r dcgmJSONResult) gpu() string {
	if r.Group != "" && !strings.EqualFold(r.Group, "GPU") {
		return ""
	}
	for _, raw := range []json.RawMessage{r.EntityID, r.GPUID, r.GPUIDs} {
		if len(raw) == 0 {
			continue
		}
		s := strings.Trim(string(raw), `"`)
		if _, err := strconv.Atoi(s); err == nil {
			return s
		}
	}
	return ""
}

// warnings reads DCGM's warnings: a list of {"warning": ...} objects, a
// list of strings, or one string (older versions).
func (r dcgmJSONResult) warnings() []string {
	if len(r.Warnings) == 0 {
		return nil
	}
	var objs []struct {
		Warning string `json:"warning"`
	}
	if json.Unmarshal(r.Warnings, &objs) == nil {
		var out []string
		for _, o := range objs {
			if o.Warning != "" {
				out = append(out, o.Warning)
			}
		}
		return out
	}
	var strs []string
	if json.Unmarshal(r.Warnings, &strs) == nil {
		return strs
	}
	var one string
	if json.Unmarshal(r.Warnings, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

func parseDCGMJSON(b []byte) ([]*dcgmTest, *Result) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		r := failf("dcgmi diag -j output is not complete JSON (truncated?): %v", err)
		return nil, &r
	}
	if raw, ok := top["iterations"]; ok {
		// dcgmi diag --iterations N: one document per iteration.
		var its []json.RawMessage
		if err := json.Unmarshal(raw, &its); err != nil {
			r := failf("dcgmi diag -j iterations: %v", err)
			return nil, &r
		}
		var all []*dcgmTest
		for i, it := range its {
			ts, r := parseDCGMJSON(it)
			if r != nil {
				rr := failf("iteration %d: %s", i+1, r.Reason)
				return nil, &rr
			}
			all = append(all, ts...)
		}
		var overall string
		_ = json.Unmarshal(top["Overall Result"], &overall)
		if strings.EqualFold(overall, "Fail") && !slices.ContainsFunc(all, func(t *dcgmTest) bool { return t.verdict == Fail }) {
			all = append(all, &dcgmTest{name: "Overall Result", category: "Deployment", verdict: Fail, ran: true})
		}
		return all, nil
	}
	var docRaw json.RawMessage
	for _, k := range []string{"DCGM Diagnostic", "DCGM GPU Diagnostic"} {
		if v, ok := top[k]; ok {
			docRaw = v
			break
		}
	}
	if docRaw == nil {
		r := failf("dcgmi diag -j output has no \"DCGM Diagnostic\" object")
		return nil, &r
	}
	var doc dcgmJSONDoc
	if err := json.Unmarshal(docRaw, &doc); err != nil {
		r := failf("dcgmi diag -j: %v", err)
		return nil, &r
	}
	if doc.RuntimeError != "" {
		r := failf("dcgmi: %s", clip(doc.RuntimeError, 200))
		return nil, &r
	}
	var tests []*dcgmTest
	for _, c := range doc.Categories {
		for _, jt := range c.Tests {
			t := &dcgmTest{name: jt.Name, category: c.Category}
			for _, res := range jt.Results {
				v, skip := statusVerdict(res.Status)
				t.add(v, skip, res.gpu())
				if v != Pass {
					t.msgs = append(t.msgs, res.warnings()...)
				}
			}
			if jt.Summary != nil {
				v, skip := statusVerdict(jt.Summary.Status)
				t.add(v, skip, "")
				if v != Pass {
					t.msgs = append(t.msgs, jt.Summary.warnings()...)
				}
			} else if jt.Status != "" {
				v, skip := statusVerdict(jt.Status)
				t.add(v, skip, "")
			}
			tests = append(tests, t)
		}
	}
	return tests, nil
}
