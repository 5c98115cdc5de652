package check

import (
	"fmt"
	"strconv"
	"strings"
)

// nvidia-smi --query-gpu=... --format=csv prints a header line naming the
// fields ("index, ecc.errors.uncorrected.volatile.total"; fields with a unit
// get it in brackets: "memory.used [MiB]") and one line per GPU, values
// separated by ", ". Fields a GPU does not support read "[N/A]" (older
// drivers: "N/A") or "[Not Supported]". nvidia-smi itself cannot report
// XIDs: the driver logs them to the kernel log (see xid.go).

// smiRule judges one field of one GPU.
type smiRule struct {
	field string // nvidia-smi field name
	value string // Value name we report ("" = not a number)
	unit  string
	// judge returns the verdict and why for the field's raw text; Pass
	// means nothing to say.
	judge func(raw string) (Verdict, string)
}

func countAbove(limit int64, verdict Verdict, what string) func(string) (Verdict, string) {
	return func(raw string) (Verdict, string) {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= limit {
			return Pass, ""
		}
		return verdict, fmt.Sprintf("%s=%d", what, n)
	}
}

func yes(verdict Verdict, what string) func(string) (Verdict, string) {
	return func(raw string) (Verdict, string) {
		switch strings.ToLower(raw) {
		case "yes":
			return verdict, what
		case "no":
			return Pass, ""
		}
		return Fail, fmt.Sprintf("unexpected %q where nvidia-smi prints Yes or No (truncated output?)", clip(raw, 20))
	}
}

// eccRules: an uncorrectable ECC error since the driver loaded fails the
// GPU; ECC switched off warns. Corrected errors are measured (bound them
// with a threshold on ecc_corrected_volatile).
var eccRules = []smiRule{
	{field: "ecc.mode.current", judge: func(raw string) (Verdict, string) {
		if strings.EqualFold(raw, "disabled") {
			return Warn, "ECC disabled"
		}
		return Pass, ""
	}},
	{field: "ecc.errors.uncorrected.volatile.total", value: "ecc_uncorrected_volatile", unit: "errors",
		judge: countAbove(0, Fail, "ecc_uncorrected_volatile")},
	{field: "ecc.errors.corrected.volatile.total", value: "ecc_corrected_volatile", unit: "errors"},
	{field: "ecc.errors.uncorrected.aggregate.total", value: "ecc_uncorrected_aggregate", unit: "errors"},
}

// pageRules: a pending page retirement or row remap (the GPU needs a reset)
// and a failed row remap (the GPU is out of spare rows) fail the GPU.
// Retired pages and remapped rows are measured; the built-in threshold on
// retired_pages_total follows NVIDIA's RMA criterion of 60 pages.
var pageRules = []smiRule{
	{field: "retired_pages.single_bit_ecc.count", value: "retired_pages_sbe", unit: "pages"},
	{field: "retired_pages.double_bit.count", value: "retired_pages_dbe", unit: "pages"},
	{field: "retired_pages.pending", judge: yes(Fail, "retired_pages.pending=Yes (GPU reset needed)")},
	{field: "remapped_rows.correctable", value: "remapped_rows_correctable", unit: "rows"},
	{field: "remapped_rows.uncorrectable", value: "remapped_rows_uncorrectable", unit: "rows"},
	{field: "remapped_rows.pending", judge: yes(Fail, "remapped_rows.pending=Yes (GPU reset needed)")},
	{field: "remapped_rows.failure", judge: yes(Fail, "remapped_rows.failure=Yes (no spare rows left)")},
}

func notAvailable(raw string) bool {
	switch strings.ToLower(raw) {
	case "[n/a]", "n/a", "[not supported]", "not supported":
		return true
	}
	return false
}

// parseSMI reads nvidia-smi's CSV and applies rules per GPU.
func parseSMI(in Input, rules []smiRule) Result {
	lines, r := smiLines(in)
	if r != nil {
		return *r
	}
	t := &smiTable{header: splitCSV(lines[0]), rules: rules, res: Result{Verdict: Pass}}
	if r := t.columns(lines[0]); r != nil {
		return *r
	}
	rows := lines[1:]
	if len(rows) == 0 {
		return failf("nvidia-smi lists no GPU")
	}
	for n, line := range rows {
		if r := t.gpu(n+2, line); r != nil {
			return *r
		}
	}
	res, why := t.res, t.why
	if hasPages(rules) {
		res.Values = append(res.Values, retiredTotals(res.Values)...)
	}
	if in.GPUs > 0 && len(rows) < in.GPUs {
		res.Verdict = Fail
		why = append([]string{fmt.Sprintf("nvidia-smi lists %d GPU(s), the node has %d", len(rows), in.GPUs)}, why...)
	}
	if t.measured == 0 && res.Verdict == Pass {
		res.Verdict = Warn
		why = append(why, "every field reads N/A: nothing measured")
	}
	res.Reason = clip(strings.Join(why, "; "), 300)
	return res
}

// smiLines are the non-empty lines of a complete nvidia-smi run; r is
// non-nil when it failed, printed nothing, or was cut inside a line.
func smiLines(in Input) ([]string, *Result) {
	fail := func(format string, a ...any) ([]string, *Result) {
		r := failf(format, a...)
		return nil, &r
	}
	if in.ExitCode != 0 {
		return fail("nvidia-smi exited %d: %s", in.ExitCode, firstLine(in.Output))
	}
	text := strings.ReplaceAll(string(in.Output), "\r\n", "\n")
	if t := strings.TrimRight(text, " \t"); t != "" && !strings.HasSuffix(t, "\n") {
		return fail("nvidia-smi output ends inside a line (truncated): %s", lastMeaningful(in.Output))
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fail("nvidia-smi printed nothing")
	}
	return lines, nil
}

// smiTable is parseSMI's reading of the CSV: the header and where each
// field is, the rules applied, and what they found so far.
type smiTable struct {
	header   []string
	col      map[string]int // field name (unit cut off) -> column
	idx      int            // the column of the GPU index
	rules    []smiRule
	res      Result
	why      []string
	measured int
}

// columns finds the fields in the header line: the GPU index must be
// there, and at least one field a rule reads.
func (t *smiTable) columns(line string) *Result {
	t.col = map[string]int{}
	for i, h := range t.header {
		if j := strings.Index(h, " ["); j > 0 {
			h = h[:j]
		}
		t.col[h] = i
	}
	idx, ok := t.col["index"]
	if !ok {
		r := failf("nvidia-smi output has no CSV header with an index field (query with --format=csv and index first): %s", clip(line, 80))
		return &r
	}
	t.idx = idx
	known := 0
	for _, r := range t.rules {
		if _, ok := t.col[r.field]; ok {
			known++
		}
	}
	if known == 0 {
		r := failf("nvidia-smi output has none of the fields this check reads (%s)", t.rules[0].field)
		return &r
	}
	return nil
}

// gpu applies the rules to one GPU's line (number n of the output): each
// field read is measured, and judged where its rule judges. r is non-nil
// when the line is malformed.
func (t *smiTable) gpu(n int, line string) *Result {
	fail := func(format string, a ...any) *Result {
		r := failf(format, a...)
		return &r
	}
	f := splitCSV(line)
	if len(f) != len(t.header) {
		return fail("nvidia-smi line %d has %d fields, the header %d (truncated or not CSV): %s", n, len(f), len(t.header), clip(line, 80))
	}
	gpu := f[t.idx]
	if _, err := strconv.Atoi(gpu); err != nil {
		return fail("nvidia-smi line %d: GPU index %q is not a number", n, clip(gpu, 20))
	}
	for _, r := range t.rules {
		i, ok := t.col[r.field]
		if !ok {
			continue
		}
		if f[i] == "" {
			return fail("nvidia-smi GPU %s has an empty %s (truncated output)", gpu, r.field)
		}
		if notAvailable(f[i]) {
			continue
		}
		raw := f[i]
		t.measured++
		if r.value != "" {
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return fail("nvidia-smi GPU %s %s=%q is not a number", gpu, r.field, clip(raw, 20))
			}
			t.res.Values = append(t.res.Values, Value{Name: r.value, GPU: gpu, Value: v, Unit: r.unit})
		}
		if r.judge == nil {
			continue
		}
		if v, msg := r.judge(raw); v != Pass {
			t.res.Verdict = t.res.Verdict.Worse(v)
			t.why = append(t.why, "GPU "+gpu+" "+msg)
		}
	}
	return nil
}

func hasPages(rules []smiRule) bool { return len(rules) > 0 && rules[0].field == pageRules[0].field }

// retiredTotals adds retired_pages_total per GPU (single + double bit).
func retiredTotals(vs []Value) []Value {
	sum := map[string]float64{}
	var order []string
	for _, v := range vs {
		if v.Name != "retired_pages_sbe" && v.Name != "retired_pages_dbe" {
			continue
		}
		if _, ok := sum[v.GPU]; !ok {
			order = append(order, v.GPU)
		}
		sum[v.GPU] += v.Value
	}
	var out []Value
	for _, g := range order {
		out = append(out, Value{Name: "retired_pages_total", GPU: g, Value: sum[g], Unit: "pages"})
	}
	return out
}

func splitCSV(line string) []string {
	parts := strings.Split(line, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no output)"
	}
	return clip(s, 160)
}
