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
	var cases []*nvbCase
	var cur *nvbCase
	var errs []string
	for _, raw := range strings.Split(strings.ReplaceAll(string(in.Output), "\r\n", "\n"), "\n") {
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
				return failf("nvbandwidth SUM for %s without its testcase", m[1])
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
		f := strings.Fields(l)
		if cur.columns == 0 {
			if allInts(f) {
				cur.columns = len(f) // the header of column indices
			}
			continue // the description line, or the header
		}
		if len(f) < 2 || !isInt(f[0]) {
			continue
		}
		if len(f)-1 != cur.columns {
			return failf("nvbandwidth %s: row %s has %d cells, the header %d (truncated output)", cur.name, f[0], len(f)-1, cur.columns)
		}
		for _, c := range f[1:] {
			if c == "N/A" {
				continue
			}
			v, err := strconv.ParseFloat(c, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return failf("nvbandwidth %s: cell %q is not a bandwidth", cur.name, clip(c, 20))
			}
			cur.cells = append(cur.cells, v)
		}
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
		if len(c.cells) == 0 {
			return failf("nvbandwidth %s printed no bandwidth (truncated output?)", c.name)
		}
		if !c.hasSum {
			return failf("nvbandwidth %s has no SUM line (truncated output, or nvbandwidth older than v0.4)", c.name)
		}
		ran++
		lo, total := c.cells[0], 0.0
		for _, v := range c.cells {
			lo = math.Min(lo, v)
			total += v
		}
		// SUM is the sum of the printed cells; a SUM that does not match
		// was cut short.
		if math.Abs(total-c.sum) > math.Max(0.05, total*0.01) {
			return failf("nvbandwidth %s: SUM %s does not match its cells (%s): truncated output", c.name, formatNumber(c.sum), formatNumber(total))
		}
		res.Values = append(res.Values,
			Value{Name: c.name + "_min_gbps", Value: lo, Unit: "GB/s"},
			Value{Name: c.name + "_sum_gbps", Value: c.sum, Unit: "GB/s"})
	}
	if ran == 0 {
		res.Verdict = Warn
		res.Reason = fmt.Sprintf("every nvbandwidth testcase was waived (%d)", len(cases))
	}
	return res
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
