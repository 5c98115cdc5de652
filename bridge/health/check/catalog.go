package check

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// NamePattern is what a check name may be.
var NamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// smiECCQuery and smiPagesQuery are the nvidia-smi queries of the built-in
// checks (field names from nvidia-smi --help-query-gpu).
const (
	smiECCQuery   = "nvidia-smi --query-gpu=index,pci.bus_id,ecc.mode.current,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.aggregate.total --format=csv"
	smiPagesQuery = "nvidia-smi --query-gpu=index,pci.bus_id,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv"
	xidScan       = `set -o pipefail
if log=$(dmesg --time-format iso 2>/dev/null || journalctl -k -b --no-pager -o short-iso 2>/dev/null); then
  printf '%s\n' "$log" | grep -F 'NVRM: Xid' || true
  echo "xid-scan=ok lines=$(printf '%s\n' "$log" | wc -l)"
else
  echo "cannot read the kernel log (dmesg and journalctl -k failed)"
  exit 1
fi`
)

func f64(v float64) *float64 { return &v }

// Builtins returns the built-in checks, by name. Sites override their
// command, timeout or thresholds and add their own (Def).
func Builtins() map[string]Check {
	cs := []Check{
		{Name: "dcgm-r1", Kind: KindDCGM, Level: 1, Command: "dcgmi diag -r 1 -j", Timeout: 5 * time.Minute},
		{Name: "dcgm-r2", Kind: KindDCGM, Level: 2, Command: "dcgmi diag -r 2 -j", Timeout: 20 * time.Minute, Exclusive: true},
		{Name: "dcgm-r3", Kind: KindDCGM, Level: 3, Command: "dcgmi diag -r 3 -j", Timeout: 2 * time.Hour, Exclusive: true},
		{Name: "nvidia-smi-ecc", Kind: KindSMIECC, Command: smiECCQuery, Timeout: time.Minute},
		{Name: "nvidia-smi-pages", Kind: KindSMIPages, Command: smiPagesQuery, Timeout: time.Minute,
			Thresholds: Thresholds{AnyModel: {"retired_pages_total": {Max: f64(59)}}}},
		{Name: "xid", Kind: KindXID, Command: xidScan, Timeout: time.Minute, FailXIDs: DefaultFailXIDs},
		{Name: "nvbandwidth", Kind: KindNVBandwidth, Timeout: 20 * time.Minute, Exclusive: true, Judged: []string{"*_min_gbps"},
			Command: "nvbandwidth -t host_to_device_memcpy_ce -t device_to_host_memcpy_ce -t device_to_device_memcpy_read_ce"},
		{Name: "nccl-1node", Kind: KindNCCL, Timeout: 20 * time.Minute, Exclusive: true, Judged: []string{"busbw_gbps"},
			Command: "all_reduce_perf -b 8 -e 8G -f 2 -g {{gpus}}"},
		{Name: "nccl-2node", Kind: KindNCCL, Nodes: 2, Timeout: 30 * time.Minute, Exclusive: true, Judged: []string{"busbw_gbps"},
			Command: "srun --nodes=2 --ntasks-per-node=1 all_reduce_perf -b 8 -e 8G -f 2 -g {{gpus}}"},
	}
	out := make(map[string]Check, len(cs))
	for _, c := range cs {
		if c.Nodes == 0 {
			c.Nodes = 1
		}
		out[c.Name] = c
	}
	return out
}

// Def is a site's check definition: a new site check (Command required),
// or an override of a built-in of the same name (empty fields keep the
// built-in's).
type Def struct {
	Name       string
	Command    string
	Timeout    time.Duration
	Fatal      *bool
	Exclusive  *bool
	Thresholds Thresholds
	FailXIDs   []int
	// Nodes a site check spans: 0 or 1 one node, 2 a job on two nodes
	// whose command runs srun across them (a built-in keeps its own).
	Nodes int
}

// Catalog is the checks a site can run, by name.
type Catalog map[string]Check

// Problem is one invalid field of the check definitions.
type Problem struct{ Field, Msg string }

// Problems lists every problem at once.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid health checks (%d problem(s)):", len(ps))
	for _, p := range ps {
		b.WriteString("\n  - " + p.Field + ": " + p.Msg)
	}
	return b.String()
}

// MaxTimeout bounds a check's timeout.
const MaxTimeout = 24 * time.Hour

// NewCatalog builds the catalog: the built-ins, overridden and extended by
// defs. field names the config list for messages (health.checks).
func NewCatalog(defs []Def, field string) (Catalog, error) {
	cat := Catalog(Builtins())
	var ps Problems
	seen := map[string]bool{}
	for i, d := range defs {
		at := fmt.Sprintf("%s[%d]", field, i)
		if !NamePattern.MatchString(d.Name) {
			ps = append(ps, Problem{at + ".name", fmt.Sprintf("%q: a check name is lower-case letters, digits and '-', starting with a letter (at most 40)", d.Name)})
			continue
		}
		at = fmt.Sprintf("%s[%s]", field, d.Name)
		if seen[d.Name] {
			ps = append(ps, Problem{at, "defined twice"})
			continue
		}
		seen[d.Name] = true
		c, builtin := cat[d.Name]
		if !builtin {
			if strings.TrimSpace(d.Command) == "" {
				ps = append(ps, Problem{at + ".command", "a site check needs a command (or name a built-in: " + strings.Join(BuiltinNames(), ", ") + ")"})
				continue
			}
			c = Check{Name: d.Name, Kind: KindSite, Nodes: 1, Timeout: 5 * time.Minute}
		}
		if d.Command != "" {
			c.Command = d.Command
		}
		if d.Timeout != 0 {
			c.Timeout = d.Timeout
		}
		if c.Timeout <= 0 || c.Timeout > MaxTimeout {
			ps = append(ps, Problem{at + ".timeout", fmt.Sprintf("%s: want a duration above 0 and at most %s", c.Timeout, MaxTimeout)})
		}
		if d.Fatal != nil {
			c.Fatal = *d.Fatal
		}
		if d.Exclusive != nil {
			c.Exclusive = *d.Exclusive
		}
		if d.Thresholds != nil {
			c.Thresholds = d.Thresholds
		}
		for model, vals := range c.Thresholds {
			if model == "" {
				ps = append(ps, Problem{at + ".thresholds", "an empty GPU model; use \"*\" for every model"})
			}
			for name, b := range vals {
				p := at + ".thresholds." + model + "." + name
				switch {
				case b.Min == nil && b.Max == nil:
					ps = append(ps, Problem{p, "needs min or max"})
				case b.Min != nil && b.Max != nil && *b.Min > *b.Max:
					ps = append(ps, Problem{p, fmt.Sprintf("min %s is above max %s", formatNumber(*b.Min), formatNumber(*b.Max))})
				}
			}
		}
		switch {
		case d.Nodes < 0 || d.Nodes > 2:
			ps = append(ps, Problem{at + ".nodes", fmt.Sprintf("%d: a check spans 1 or 2 nodes", d.Nodes)})
		case d.Nodes > 0 && builtin && d.Nodes != c.Nodes:
			ps = append(ps, Problem{at + ".nodes", fmt.Sprintf("%d: the built-in %s spans %d node(s)", d.Nodes, d.Name, c.Nodes)})
		case d.Nodes > 0:
			c.Nodes = d.Nodes
		}
		if d.FailXIDs != nil {
			if c.Kind != KindXID {
				ps = append(ps, Problem{at + ".failXIDs", "only the xid check reads failXIDs"})
			}
			c.FailXIDs = slices.Clone(d.FailXIDs)
		}
		if strings.Contains(c.Command, markerPrefix) {
			ps = append(ps, Problem{at + ".command", "may not contain " + strings.TrimSpace(markerPrefix)})
		}
		cat[d.Name] = c
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return cat, nil
}

// BuiltinNames lists the built-in checks, sorted.
func BuiltinNames() []string {
	var n []string
	for k := range Builtins() {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Names lists the catalog's checks, sorted.
func (c Catalog) Names() []string {
	var n []string
	for k := range c {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Resolve returns the checks named, in order, or an error naming the
// unknown ones.
func (c Catalog) Resolve(names []string) ([]Check, error) {
	var out []Check
	var unknown []string
	for _, n := range names {
		ch, ok := c[n]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		out = append(out, ch)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown check(s) %s; known: %s", strings.Join(unknown, ", "), strings.Join(c.Names(), ", "))
	}
	return out, nil
}

// Judge judges a recorded output of a check (the command's output and exit
// code, on a node with GPUs of model): what a run would make of it.
func (c Catalog) Judge(name string, in Input) (Result, error) {
	ch, ok := c[name]
	if !ok {
		return Result{}, fmt.Errorf("unknown check %q; known: %s", name, strings.Join(c.Names(), ", "))
	}
	return ch.Evaluate(in), nil
}
