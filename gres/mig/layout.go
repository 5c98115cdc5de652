package mig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Slice is one GPU instance of a layout: a profile at a start slot.
type Slice struct {
	Profile string `json:"profile"`
	Start   int    `json:"start"`
}

// Layout is the GPU instances of one GPU.
type Layout []Slice

// Counts is a number of instances per profile name.
type Counts map[string]int

// String prints counts biggest profile first: "2x 3g.40gb, 1x 1g.10gb".
func (c Counts) string(m Model) string {
	names := slices.Collect(maps.Keys(c))
	m.sortProfiles(names)
	var parts []string
	for _, n := range names {
		if c[n] > 0 {
			parts = append(parts, fmt.Sprintf("%dx %s", c[n], n))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Counts returns how many instances of each profile l has.
func (l Layout) Counts() Counts {
	c := Counts{}
	for _, s := range l {
		c[s.Profile]++
	}
	return c
}

// String prints a layout as "4g.40gb@0 2g.20gb@4 1g.10gb@6".
func (l Layout) String() string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = fmt.Sprintf("%s@%d", s.Profile, s.Start)
	}
	return strings.Join(parts, " ")
}

// Validate checks a layout against m's rules and reports every problem:
// unknown profiles, start slots a profile cannot use, overlapping memory
// slices, more than 7 compute slices, and more instances of a profile than
// NVIDIA allows (one "+me" instance per GPU).
func (m Model) Validate(l Layout) error {
	var errs []error
	var owner [MemorySlicesPerGPU]int // 1-based index into l of the slice's owner
	compute := 0
	count := Counts{}
	for i, s := range l {
		p, ok := m.Profile(s.Profile)
		if !ok {
			errs = append(errs, fmt.Errorf("%s has no MIG profile %q (profiles: %s)", m.Name, s.Profile, strings.Join(m.ProfileNames(), ", ")))
			continue
		}
		count[p.Name]++
		compute += p.ComputeSlices
		if !slices.Contains(p.Starts, s.Start) {
			errs = append(errs, fmt.Errorf("%s cannot start at memory slice %d on %s (allowed start slots: %s)", p.Name, s.Start, m.Name, p.startsString()))
			continue
		}
		for k := s.Start; k < s.Start+p.MemorySlices; k++ {
			if owner[k] != 0 {
				o := l[owner[k]-1]
				errs = append(errs, fmt.Errorf("%s@%d overlaps %s@%d on memory slice %d", s.Profile, s.Start, o.Profile, o.Start, k))
				break
			}
			owner[k] = i + 1
		}
	}
	if compute > ComputeSlicesPerGPU {
		errs = append(errs, fmt.Errorf("the layout uses %d compute slices; a %s has %d", compute, m.Name, ComputeSlicesPerGPU))
	}
	names := slices.Sorted(maps.Keys(count))
	for _, n := range names {
		p, _ := m.Profile(n)
		if count[n] > p.MaxInstances {
			errs = append(errs, fmt.Errorf("%d instances of %s; %s allows at most %d", count[n], n, m.article(), p.MaxInstances))
		}
	}
	return errors.Join(errs...)
}

// Place finds start slots for the given instances on one GPU of model m,
// biggest profile first, trying every combination. It returns an error
// saying why when there is none.
func (m Model) Place(want Counts) (Layout, error) {
	var names []string
	total := 0
	for n, c := range want {
		if c < 0 {
			return nil, fmt.Errorf("%s: a negative count (%d)", n, c)
		}
		if c == 0 {
			continue
		}
		if _, ok := m.Profile(n); !ok {
			return nil, fmt.Errorf("%s has no MIG profile %q (profiles: %s)", m.Name, n, strings.Join(m.ProfileNames(), ", "))
		}
		names = append(names, n)
		total += c
	}
	m.sortProfiles(names)
	var items []Profile
	for _, n := range names {
		p, _ := m.Profile(n)
		if want[n] > p.MaxInstances {
			return nil, fmt.Errorf("%dx %s: %s allows at most %d", want[n], n, m.article(), p.MaxInstances)
		}
		for range want[n] {
			items = append(items, p)
		}
	}
	var used [MemorySlicesPerGPU]bool
	out := make(Layout, 0, total)
	var place func(i, minStart int) bool
	place = func(i, minStart int) bool {
		if i == len(items) {
			return true
		}
		p := items[i]
		for _, st := range p.Starts {
			// Identical instances are placed in increasing start order, so
			// each set of slots is tried once.
			if st < minStart || !free(used[:], st, p.MemorySlices) {
				continue
			}
			mark(used[:], st, p.MemorySlices, true)
			out = append(out, Slice{Profile: p.Name, Start: st})
			next := 0
			if i+1 < len(items) && items[i+1].Name == p.Name {
				next = st + p.MemorySlices
			}
			if place(i+1, next) {
				return true
			}
			out = out[:len(out)-1]
			mark(used[:], st, p.MemorySlices, false)
		}
		return false
	}
	if !place(0, 0) {
		return nil, fmt.Errorf("%s do not fit together on one %s: no combination of their start slots leaves their memory slices disjoint", want.string(m), m.Name)
	}
	if err := m.Validate(out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Slice) int { return a.Start - b.Start })
	return out, nil
}

func free(used []bool, start, size int) bool {
	if start+size > len(used) {
		return false
	}
	for k := start; k < start+size; k++ {
		if used[k] {
			return false
		}
	}
	return true
}

func mark(used []bool, start, size int, v bool) {
	for k := start; k < start+size; k++ {
		used[k] = v
	}
}

// Configs returns every distinct non-empty set of instances (by count per
// profile) that fits on one GPU of model m, biggest first. Each one has a
// valid placement (Place finds it).
func (m Model) Configs() []Counts {
	configsMu.Lock()
	defer configsMu.Unlock()
	if c, ok := configsCache[m.Name]; ok {
		return slices.Clone(c)
	}
	c := m.configs()
	configsCache[m.Name] = c
	return slices.Clone(c)
}

var (
	configsMu    sync.Mutex
	configsCache = map[string][]Counts{} // by model name; the catalog is fixed
)

func (m Model) configs() []Counts {
	seen := map[string]Counts{}
	var used [MemorySlicesPerGPU]bool
	var cur Layout
	var walk func(pi, si int)
	// walk adds instances in catalog order (profile pi, start index si and
	// later), so each set of placements is visited once.
	walk = func(pi, si int) {
		if len(cur) > 0 && m.Validate(cur) == nil {
			c := cur.Counts()
			seen[c.key(m)] = c
		}
		for p := pi; p < len(m.Profiles); p++ {
			prof := m.Profiles[p]
			from := 0
			if p == pi {
				from = si
			}
			for s := from; s < len(prof.Starts); s++ {
				st := prof.Starts[s]
				if !free(used[:], st, prof.MemorySlices) {
					continue
				}
				cur = append(cur, Slice{Profile: prof.Name, Start: st})
				if m.Validate(cur) == nil {
					mark(used[:], st, prof.MemorySlices, true)
					walk(p, s+1)
					mark(used[:], st, prof.MemorySlices, false)
				}
				cur = cur[:len(cur)-1]
			}
		}
	}
	walk(0, 0)
	out := slices.Collect(maps.Values(seen))
	// Biggest first; among equals, fewer different profiles first, so the
	// planner prefers uniform GPUs (7x 1g.10gb and 2x 3g.40gb over two
	// mixed ones).
	slices.SortFunc(out, func(a, b Counts) int {
		if d := b.compute(m) - a.compute(m); d != 0 {
			return d
		}
		if d := len(a) - len(b); d != 0 {
			return d
		}
		return strings.Compare(a.key(m), b.key(m))
	})
	return out
}

// key is a canonical text form of c for map keys and sorting.
func (c Counts) key(m Model) string {
	var parts []string
	for _, p := range m.Profiles {
		if c[p.Name] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", p.Name, c[p.Name]))
		}
	}
	return strings.Join(parts, ",")
}

func (c Counts) compute(m Model) int {
	n := 0
	for name, k := range c {
		p, _ := m.Profile(name)
		n += p.ComputeSlices * k
	}
	return n
}
