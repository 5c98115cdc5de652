package check

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Verdict is a check's judgement of a node: pass, warn or fail.
type Verdict string

const (
	Pass Verdict = "pass"
	Warn Verdict = "warn"
	Fail Verdict = "fail"
)

// rank orders verdicts from best to worst; an unknown verdict is a fail.
func (v Verdict) rank() int {
	switch v {
	case Pass:
		return 0
	case Warn:
		return 1
	}
	return 2
}

// Worse returns the worse of v and o.
func (v Verdict) Worse(o Verdict) Verdict {
	if o.rank() > v.rank() {
		return o
	}
	return v
}

// Valid reports whether v is one of the three verdicts.
func (v Verdict) Valid() bool { return v == Pass || v == Warn || v == Fail }

// Value is one measured value, for the node or for one of its GPUs.
type Value struct {
	Name  string  `json:"name"`          // e.g. busbw_gbps, ecc_uncorrected_volatile
	GPU   string  `json:"gpu,omitempty"` // GPU index, empty for the node
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"` // GB/s, errors, ...
}

func (v Value) String() string {
	s := v.Name + "=" + formatNumber(v.Value)
	if v.GPU != "" {
		s = "GPU " + v.GPU + " " + s
	}
	return s
}

// Result is a check's outcome on one node.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Reason says why in one line; for a fail it is what the drain reason
	// quotes (`gpubridge: <check> failed: <reason>`).
	Reason string  `json:"reason"`
	Values []Value `json:"values,omitempty"`
}

func failf(format string, a ...any) Result {
	return Result{Verdict: Fail, Reason: fmt.Sprintf(format, a...)}
}

// Input is what a check's parser reads: the output of its command on one
// node (stdout and stderr together), the command's exit code and what the
// node is.
type Input struct {
	Output   []byte
	ExitCode int
	// Model is the node's GPU model as its GRES type (h100, a100, ...):
	// the key of per-model thresholds.
	Model string
	// GPUs is how many GPUs the node has.
	GPUs int
}

// Bound is an acceptable range of a value; nil ends are open.
type Bound struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// violated says how v breaks b ("" when it does not).
func (b Bound) violated(v float64) string {
	switch {
	case math.IsNaN(v):
		return "is not a number"
	case b.Min != nil && v < *b.Min:
		return "< " + formatNumber(*b.Min)
	case b.Max != nil && v > *b.Max:
		return "> " + formatNumber(*b.Max)
	}
	return ""
}

// AnyModel is the Thresholds key that applies to every GPU model without
// its own entry.
const AnyModel = "*"

// Thresholds are bounds per GPU model and value name:
// {"h100": {"busbw_gbps": {Min: 350}}}. A model's own entry replaces the
// AnyModel entry for the same value.
type Thresholds map[string]map[string]Bound

// bound returns the bound of value name for model.
func (t Thresholds) bound(model, name string) (Bound, bool) {
	if b, ok := t[model][name]; ok {
		return b, true
	}
	b, ok := t[AnyModel][name]
	return b, ok
}

// Kind selects a check's parser.
type Kind string

const (
	KindDCGM        Kind = "dcgm"             // dcgmi diag -r N (table or -j JSON)
	KindSMIECC      Kind = "nvidia-smi-ecc"   // nvidia-smi --query-gpu ECC counters, --format=csv
	KindSMIPages    Kind = "nvidia-smi-pages" // retired pages and remapped rows, --format=csv
	KindXID         Kind = "xid"              // NVRM Xid lines of the kernel log
	KindNVBandwidth Kind = "nvbandwidth"      // nvbandwidth bandwidth matrices
	KindNCCL        Kind = "nccl"             // nccl-tests all_reduce_perf
	KindSite        Kind = "site"             // any command: exit code and key=value lines
)

// Check is a named command run on a node as a Slurm job, with a timeout
// and a parser that judges its output.
type Check struct {
	Name string
	Kind Kind
	// Command is a bash script; {{gpus}} and {{model}} are replaced by the
	// node's GPU count and model.
	Command string
	Timeout time.Duration
	// Nodes is 1, or 2 for a check that spans two nodes (srun -N2).
	Nodes int
	// Exclusive checks need every GPU of the node: their job asks for all
	// of them and so waits until the node is idle.
	Exclusive bool
	// Fatal: a failure stops the node at once (running jobs are killed)
	// instead of draining it (running jobs finish).
	Fatal bool
	// Level is dcgmi's run level (1-3) for KindDCGM.
	Level int
	// Thresholds bound the check's values per GPU model.
	Thresholds Thresholds
	// Judged lists values that must have a threshold for the node's model:
	// without one the result is at best a warn (a bandwidth check does not
	// judge its own numbers).
	Judged []string
	// FailXIDs are the XIDs that fail a KindXID check (any other warns).
	FailXIDs []int
}

// Evaluate judges one node's output: the kind's parser, then the
// thresholds. Whatever the parser cannot read is a fail, never a pass.
func (c Check) Evaluate(in Input) Result {
	var r Result
	switch c.Kind {
	case KindDCGM:
		r = parseDCGM(in, c.Level)
	case KindSMIECC:
		r = parseSMI(in, eccRules)
	case KindSMIPages:
		r = parseSMI(in, pageRules)
	case KindXID:
		r = parseXID(in, c.FailXIDs)
	case KindNVBandwidth:
		r = parseNVBandwidth(in, nvbTestcases(c.Command))
	case KindNCCL:
		r = parseNCCL(in, max(c.Nodes, 1))
	case KindSite:
		r = parseSite(in)
	default:
		return failf("check %s has unknown kind %q", c.Name, c.Kind)
	}
	if !r.Verdict.Valid() {
		r.Verdict = Fail
	}
	return c.judge(r, in.Model)
}

// judge applies the thresholds to r's values and the Judged rule.
func (c Check) judge(r Result, model string) Result {
	var violations []string
	for _, v := range r.Values {
		b, ok := c.Thresholds.bound(model, v.Name)
		if !ok {
			continue
		}
		if why := b.violated(v.Value); why != "" {
			violations = append(violations, v.String()+" "+why)
		}
	}
	if len(violations) > 0 {
		msg := strings.Join(violations, ", ")
		if model != "" {
			msg += " (" + model + ")"
		}
		if r.Verdict == Fail && r.Reason != "" {
			msg = r.Reason + "; " + msg
		}
		r.Verdict, r.Reason = Fail, msg
		return r
	}
	if r.Verdict != Pass {
		return r
	}
	var missing []string
	for _, v := range r.Values {
		if !c.judged(v.Name) || slices.Contains(missing, v.Name) {
			continue
		}
		if _, ok := c.Thresholds.bound(model, v.Name); !ok {
			missing = append(missing, v.Name)
		}
	}
	if len(missing) > 0 {
		r.Verdict = Warn
		m := model
		if m == "" {
			m = "(unknown model)"
		}
		r.Reason = fmt.Sprintf("not judged: no threshold for GPU model %s on %s (set health.checks[%s].thresholds.%s)",
			m, strings.Join(missing, ", "), c.Name, model)
	}
	return r
}

// judged reports whether value name must have a threshold: it is listed in
// Judged, or matches an entry "*suffix".
func (c Check) judged(name string) bool {
	for _, j := range c.Judged {
		if j == name || (strings.HasPrefix(j, "*") && strings.HasSuffix(name, j[1:])) {
			return true
		}
	}
	return false
}

// formatNumber prints integers without a fraction and others with up to
// two decimals.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// clip shortens s to n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
