package check

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// nvbandwidth prints, per testcase:
//
//	Running host_to_device_memcpy_ce.
//	memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
//	           0         1         2         3
//	 0     55.46     55.48     55.46     55.47
//
//	SUM host_to_device_memcpy_ce 221.87
//
// Cells of pairs it does not measure read N/A. A testcase that cannot run
// on the machine prints "Waived" instead of a matrix. nvbandwidth does not
// judge its numbers: the check's thresholds per GPU model do, on
// <testcase>_min_gbps (the weakest pair) and <testcase>_sum_gbps.

var (
	nvbRunning = regexp.MustCompile(`^Running ([A-Za-z0-9_]+)\.?$`)
	nvbSum     = regexp.MustCompile(`^SUM ([A-Za-z0-9_]+) ([0-9.]+)$`)
)

type nvbCase struct {
	name    string
	cells   []float64
	sum     float64
	hasSum  bool
	waived  bool
	columns int
}

// nvbTestcases are the testcases a command names with -t/--testcase: each
// must be in the output (run or waived).
func nvbTestcases(command string) []string {
	f := strings.Fields(command)
	var out []string
	for i := 0; i < len(f); i++ {
		switch {
		case (f[i] == "-t" || f[i] == "--testcase") && i+1 < len(f):
			out = append(out, strings.Split(f[i+1], ",")...)
			i++
		case strings.HasPrefix(f[i], "--testcase="):
			out = append(out, strings.Split(strings.TrimPrefix(f[i], "--testcase="), ",")...)
		}
	}
	return out
}

func parseNVBandwidth(in Input, expected []string) Result {
	if in.ExitCode != 0 {
		return failf("nvbandwidth exited %d: %s", in.ExitCode, lastMeaningful(in.Output))
	}
	cases, errs, r := scanNVBandwidth(in.Output)
	if r != nil {
		return *r
	}
	if len(errs) > 0 {
		return failf("nvbandwidth reported errors: %s", strings.Join(errs, "; "))
	}
	if len(cases) == 0 {
		return failf("no nvbandwidth testcase in the output (garbage or truncated output)")
	}
	for _, e := range expected {
		if !isInt(e) && findCase(cases, e) == nil {
			return failf("nvbandwidth testcase %s is not in the output (truncated output, or the testcase is unknown to this nvbandwidth)", e)
		}
	}
	res := Result{Verdict: Pass}
	ran := 0
	for _, c := range cases {
		if c.waived {
			continue
		}
		vals, r := c.values()
		if r != nil {
			return *r
		}
		ran++
		res.Values = append(res.Values, vals...)
	}
	if ran == 0 {
		res.Verdict = Warn
		res.Reason = fmt.Sprintf("every nvbandwidth testcase was waived (%d)", len(cases))
	}
	return res
}

// scanNVBandwidth reads the testcases of nvbandwidth's output, their cells
// and SUM lines, and the error lines; r is non-nil when the output is
// malformed (a SUM without its testcase, a short row, a cell that is not a
// bandwidth).
func scanNVBandwidth(out []byte) (cases []*nvbCase, errs []string, r *Result) {
	var cur *nvbCase
	for _, raw := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n") {
		l := strings.TrimSpace(raw)
		if l == "" {
			continue
		}
		if m := nvbRunning.FindStringSubmatch(l); m != nil {
			cur = &nvbCase{name: m[1]}
			cases = append(cases, cur)
			continue
		}
		if m := nvbSum.FindStringSubmatch(l); m != nil {
			c := findCase(cases, m[1])
			if c == nil {
				f := failf("nvbandwidth SUM for %s without its testcase", m[1])
				return nil, nil, &f
			}
			c.sum, _ = strconv.ParseFloat(m[2], 64)
			c.hasSum = true
			continue
		}
		up := strings.ToUpper(l)
		if strings.Contains(up, "ERROR") || strings.HasPrefix(up, "[CUDA_") {
			errs = append(errs, clip(l, 120))
			continue
		}
		if cur == nil {
			continue // version and device lines before the first testcase
		}
		if strings.HasPrefix(up, "WAIVED") {
			cur.waived = true
			continue
		}
		if r := cur.line(strings.Fields(l)); r != nil {
			return nil, nil, r
		}
	}
	return cases, errs, nil
}

// line takes in a line of c's matrix, split in fields: the description and
// the header of column indices come first, then rows of a row index and
// one cell per column (N/A for a pair not measured).
func (c *nvbCase) line(f []string) *Result {
	if c.columns == 0 {
		if allInts(f) {
			c.columns = len(f) // the header of column indices
		}
		return nil // the description line, or the header
	}
	if len(f) < 2 || !isInt(f[0]) {
		return nil
	}
	if len(f)-1 != c.columns {
		r := failf("nvbandwidth %s: row %s has %d cells, the header %d (truncated output)", c.name, f[0], len(f)-1, c.columns)
		return &r
	}
	for _, cell := range f[1:] {
		if cell == "N/A" {
			continue
		}
		v, err := strconv.ParseFloat(cell, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			r := failf("nvbandwidth %s: cell %q is not a bandwidth", c.name, clip(cell, 20))
			return &r
		}
		c.cells = append(c.cells, v)
	}
	return nil
}

// values are a testcase that ran, as the weakest pair and the SUM; r is
// non-nil when its output is incomplete (no cell, no SUM, or a SUM that
// does not match the cells).
func (c *nvbCase) values() ([]Value, *Result) {
	if len(c.cells) == 0 {
		r := failf("nvbandwidth %s printed no bandwidth (truncated output?)", c.name)
		return nil, &r
	}
	if !c.hasSum {
		r := failf("nvbandwidth %s has no SUM line (truncated output, or nvbandwidth older than v0.4)", c.name)
		return nil, &r
	}
	lo, total := c.cells[0], 0.0
	for _, v := range c.cells {
		lo = math.Min(lo, v)
		total += v
	}
	// SUM is the sum of the printed cells; a SUM that does not match
	// was cut short.
	if math.Abs(total-c.sum) > math.Max(0.05, total*0.01) {
		r := failf("nvbandwidth %s: SUM %s does not match its cells (%s): truncated output", c.name, formatNumber(c.sum), formatNumber(total))
		return nil, &r
	}
	return []Value{
		{Name: c.name + "_min_gbps", Value: lo, Unit: "GB/s"},
		{Name: c.name + "_sum_gbps", Value: c.sum, Unit: "GB/s"},
	}, nil
}

func findCase(cs []*nvbCase, name string) *nvbCase {
	for _, c := range cs {
		if c.name == name {
			return c
		}
	}
	return nil
}

func isInt(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func allInts(f []string) bool {
	if len(f) == 0 {
		return false
	}
	for _, s := range f {
		if !isInt(s) {
			return false
		}
	}
	return true
}

// lastMeaningful is the last non-empty line of b, for error messages.
func lastMeaningful(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return clip(l, 160)
		}
	}
	return "(no output)"
}
