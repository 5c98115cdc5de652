package mig

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// GPU is one GPU the planner may lay out.
type GPU struct {
	Index int
	Model Model
}

// Demand is what is wanted across a set of GPUs: a count per MIG profile
// name ("1g.10gb": 7), or per model Type ("h100": 2) for whole GPUs left
// with MIG disabled.
type Demand map[string]int

// GPUPlan is the plan for one GPU. A GPU that is not Whole and has no
// Layout is not needed by the demand and stays a whole GPU with MIG
// disabled.
type GPUPlan struct {
	Index  int    `json:"index"`
	Model  string `json:"model"`
	Whole  bool   `json:"whole,omitempty"` // serves one unit of the model's Type demand
	Layout Layout `json:"layout,omitempty"`
}

// MIGEnabled reports whether the plan needs MIG mode on this GPU.
func (g GPUPlan) MIGEnabled() bool { return len(g.Layout) > 0 }

// Plan is a layout per GPU that provides exactly the demand.
type Plan struct {
	GPUs []GPUPlan `json:"gpus"`
}

// UnfitError says which part of a demand cannot fit and why.
type UnfitError struct {
	Reasons []string
}

func (e *UnfitError) Error() string {
	return "the demand cannot fit:\n  - " + strings.Join(e.Reasons, "\n  - ")
}

// PlanFor lays out want across gpus: every MIG instance gets a GPU and a
// start slot, whole-GPU demand gets GPUs with MIG disabled, and the result
// provides exactly want. Each returned layout passes Model.Validate. When
// there is no such plan the error is an *UnfitError with the reasons.
func PlanFor(gpus []GPU, want Demand) (Plan, error) {
	if len(gpus) == 0 {
		return Plan{}, &UnfitError{Reasons: []string{"no GPUs to plan on"}}
	}
	gpus = slices.Clone(gpus)
	slices.SortFunc(gpus, func(a, b GPU) int { return a.Index - b.Index })
	for i := 1; i < len(gpus); i++ {
		if gpus[i].Index == gpus[i-1].Index {
			return Plan{}, fmt.Errorf("GPU index %d is listed twice", gpus[i].Index)
		}
	}
	rem := Demand{}
	for k, v := range want {
		if v < 0 {
			return Plan{}, fmt.Errorf("%s=%d: counts cannot be negative", k, v)
		}
		if v > 0 {
			rem[k] = v
		}
	}
	if reasons := precheck(gpus, rem); len(reasons) > 0 {
		return Plan{}, &UnfitError{Reasons: reasons}
	}
	s := &solver{gpus: gpus, configs: map[string][]Counts{}, memo: map[string]choice{}}
	for _, g := range gpus {
		if _, ok := s.configs[g.Model.Name]; !ok {
			s.configs[g.Model.Name] = g.Model.Configs()
		}
	}
	left := s.best(0, rem)
	if left.weight > 0 {
		return Plan{}, &UnfitError{Reasons: []string{fmt.Sprintf(
			"the instances cannot be packed onto these GPUs together (every count fits on its own, but the placement rules leave no room for all at once); the closest plan leaves %s unplaced",
			describe(left.rem))}}
	}
	plan := Plan{}
	cur := rem
	for i, g := range gpus {
		c := s.memo[s.key(i, cur)]
		gp := GPUPlan{Index: g.Index, Model: g.Model.Name}
		switch {
		case c.whole:
			gp.Whole = true
			cur = sub(cur, Demand{g.Model.Type: 1})
		case c.config != nil:
			l, err := g.Model.Place(c.config)
			if err != nil { // Configs only holds sets that Place accepts
				return Plan{}, fmt.Errorf("internal error: GPU %d: %w", g.Index, err)
			}
			gp.Layout = l
			cur = sub(cur, Demand(c.config))
		}
		plan.GPUs = append(plan.GPUs, gp)
	}
	return plan, nil
}

// precheck finds the simple reasons a demand cannot fit: names no GPU
// offers, more instances of a profile than the GPUs allow, more whole GPUs
// than there are, more compute or memory slices than exist.
func precheck(gpus []GPU, want Demand) []string {
	var reasons []string
	byModel := map[string]int{}
	var modelOrder []Model
	for _, g := range gpus {
		if byModel[g.Model.Name] == 0 {
			modelOrder = append(modelOrder, g.Model)
		}
		byModel[g.Model.Name]++
	}
	names := slices.Sorted(maps.Keys(want))
	compute, memory := 0, 0
	for _, n := range names {
		w := want[n]
		capacity, known, isType := 0, false, false
		var per []string
		for _, m := range modelOrder {
			if m.Type == n {
				known, isType = true, true
				capacity += byModel[m.Name]
				continue
			}
			if p, ok := m.Profile(n); ok {
				known = true
				capacity += p.MaxInstances * byModel[m.Name]
				per = append(per, fmt.Sprintf("%d per %s (each %s takes %d of the %d memory slices, at start slot %s), and there %s %d %s",
					p.MaxInstances, m.Name, p.Name, p.MemorySlices, MemorySlicesPerGPU, orList(p.Starts), isAre(byModel[m.Name]), byModel[m.Name], m.Name))
			}
		}
		if !known {
			var offers []string
			for _, m := range modelOrder {
				offers = append(offers, fmt.Sprintf("%s offers %s (whole GPU: %s)", m.Name, strings.Join(m.ProfileNames(), ", "), m.Type))
			}
			reasons = append(reasons, fmt.Sprintf("%s: none of the GPUs (%s) has a MIG profile or GPU type of that name; %s",
				n, describeGPUs(gpus), strings.Join(offers, "; ")))
			continue
		}
		if w > capacity {
			if isType {
				reasons = append(reasons, fmt.Sprintf("%dx %s (whole GPUs): only %d such GPU%s", w, n, capacity, plural(capacity)))
			} else {
				reasons = append(reasons, fmt.Sprintf("%dx %s: at most %d fit: %s", w, n, capacity, strings.Join(per, "; ")))
			}
		}
		c, mem := slicesOf(n, modelOrder)
		compute += c * w
		memory += mem * w
	}
	if len(reasons) > 0 {
		return reasons
	}
	if have := ComputeSlicesPerGPU * len(gpus); compute > have {
		reasons = append(reasons, fmt.Sprintf("the demand needs %d compute slices; %s %s %d in all (%d each)",
			compute, describeGPUs(gpus), haveHas(len(gpus)), have, ComputeSlicesPerGPU))
	}
	if have := MemorySlicesPerGPU * len(gpus); memory > have {
		reasons = append(reasons, fmt.Sprintf("the demand needs %d memory slices; %s %s %d in all (%d each)",
			memory, describeGPUs(gpus), haveHas(len(gpus)), have, MemorySlicesPerGPU))
	}
	return reasons
}

// slicesOf is the fewest compute and memory slices one unit of name takes
// on any of the models.
func slicesOf(name string, models []Model) (compute, memory int) {
	first := true
	for _, m := range models {
		c, mem := 0, 0
		if m.Type == name {
			c, mem = ComputeSlicesPerGPU, MemorySlicesPerGPU
		} else if p, ok := m.Profile(name); ok {
			c, mem = p.ComputeSlices, p.MemorySlices
		} else {
			continue
		}
		if first || c < compute {
			compute = c
		}
		if first || mem < memory {
			memory = mem
		}
		first = false
	}
	return compute, memory
}

type choice struct {
	whole  bool
	config Counts
	weight int    // what is left unplaced, weighted
	rem    Demand // what is left unplaced
}

type solver struct {
	gpus    []GPU
	configs map[string][]Counts
	memo    map[string]choice
}

func (s *solver) key(i int, rem Demand) string {
	keys := slices.Sorted(maps.Keys(rem))
	var b strings.Builder
	fmt.Fprintf(&b, "%d|", i)
	for _, k := range keys {
		if rem[k] > 0 {
			fmt.Fprintf(&b, "%s=%d,", k, rem[k])
		}
	}
	return b.String()
}

// best returns the choice for GPU i that leaves the least of rem unplaced
// over GPUs i and later (weight 0: everything placed). Ties go to the
// first option in order: whole GPU, MIG configs biggest first, unused.
func (s *solver) best(i int, rem Demand) choice {
	if i == len(s.gpus) {
		return choice{weight: weightOf(rem, s.gpus), rem: rem}
	}
	k := s.key(i, rem)
	if c, ok := s.memo[k]; ok {
		return c
	}
	m := s.gpus[i].Model
	var bestC choice
	found := false
	try := func(c choice, next Demand) bool {
		r := s.best(i+1, next)
		if !found || r.weight < bestC.weight {
			c.weight, c.rem = r.weight, r.rem
			bestC, found = c, true
		}
		return bestC.weight == 0
	}
	done := false
	if rem[m.Type] > 0 {
		done = try(choice{whole: true}, sub(rem, Demand{m.Type: 1}))
	}
	if !done {
		for _, cfg := range s.configs[m.Name] {
			if !fits(cfg, rem) {
				continue
			}
			if try(choice{config: cfg}, sub(rem, Demand(cfg))) {
				done = true
				break
			}
		}
	}
	if !done {
		try(choice{}, rem)
	}
	s.memo[k] = bestC
	return bestC
}

func fits(c Counts, rem Demand) bool {
	for n, v := range c {
		if v > rem[n] {
			return false
		}
	}
	return true
}

func sub(a, b Demand) Demand {
	out := Demand{}
	for k, v := range a {
		if r := v - b[k]; r > 0 {
			out[k] = r
		}
	}
	return out
}

// weightOf weighs unplaced demand so that any leftover counts: compute
// slices plus one per instance.
func weightOf(rem Demand, gpus []GPU) int {
	var models []Model
	for _, g := range gpus {
		models = append(models, g.Model)
	}
	w := 0
	for n, v := range rem {
		c, _ := slicesOf(n, models)
		w += (c + 1) * v
	}
	return w
}

func describe(d Demand) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, fmt.Sprintf("%dx %s", d[n], n))
	}
	return strings.Join(parts, ", ")
}

func describeGPUs(gpus []GPU) string {
	count := map[string]int{}
	var order []string
	for _, g := range gpus {
		if count[g.Model.Name] == 0 {
			order = append(order, g.Model.Name)
		}
		count[g.Model.Name]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%d %s", count[n], n)
	}
	return strings.Join(parts, " + ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func haveHas(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// orList prints slots as "0", "0 or 4", "0, 2 or 4".
func orList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
