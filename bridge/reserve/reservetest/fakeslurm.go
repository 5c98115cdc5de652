package reservetest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// FakeSlurm is an in-memory slurmctld for the projector's tests: it keeps
// reservations, refuses a reservation that does not fit the nodes (ErrBusy),
// refuses to delete one with jobs inside (ErrInUse, names in InUse), and
// places GPU reservations as Slurm 26.05 does with IGNORE_JOBS (measured,
// docs/bookings.md): on the first node (of its node list, when it has one)
// with enough GPUs of the type free for the whole window, taking the
// lowest-indexed of them. A reservation holds those GPUs for its whole
// window, so the node's GPUs fragment as Slurm's do.
type FakeSlurm struct {
	mu    sync.Mutex
	Nodes []reserve.Node
	Res   map[string]reserve.Reservation
	InUse map[string]bool
	Calls []string
	// idx are the GPU indices (of its type, on its node) each GPU
	// reservation holds.
	idx map[string][]int
	// ReplaceDown mimics slurmctld 26.05 (measured): when a node goes
	// down, a GPU reservation on it moves to another node that is up,
	// keeping its GPUs only where that node has them free, else with none.
	ReplaceDown bool
}

var _ reserve.Slurm = (*FakeSlurm)(nil)

// NewFakeSlurm returns a cluster of the given nodes without reservations.
func NewFakeSlurm(nodes ...reserve.Node) *FakeSlurm {
	return &FakeSlurm{Nodes: nodes, Res: map[string]reserve.Reservation{}, InUse: map[string]bool{}, idx: map[string][]int{}}
}

// Inventory returns the nodes and reservations.
func (f *FakeSlurm) Inventory(context.Context) (reserve.Inventory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	inv := reserve.Inventory{Nodes: slices.Clone(f.Nodes)}
	names := make([]string, 0, len(f.Res))
	for n := range f.Res {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		inv.Reservations = append(inv.Reservations, cloneRes(f.Res[n]))
	}
	return inv, nil
}

func cloneRes(r reserve.Reservation) reserve.Reservation {
	r.Accounts, r.Flags, r.Nodes = slices.Clone(r.Accounts), slices.Clone(r.Flags), slices.Clone(r.Nodes)
	g := map[string]int{}
	for k, v := range r.GPUs {
		g[k] = v
	}
	r.GPUs = g
	return r
}

// Set puts a reservation in place as an admin would, out of band.
func (f *FakeSlurm) Set(r reserve.Reservation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Res[r.Name] = cloneRes(r)
	f.place(r.Name)
}

// place gives a GPU reservation the lowest GPU indices of its type free on
// its node for its window (as many as there are).
func (f *FakeSlurm) place(name string) {
	if f.idx == nil {
		f.idx = map[string][]int{}
	}
	delete(f.idx, name)
	r := f.Res[name]
	if r.WholeNodes || len(r.Nodes) == 0 {
		return
	}
	for t, c := range r.GPUs {
		free := f.freeIdx(r.Nodes[0], t, reserve.ReservationSpec{Name: name, Start: r.Start, End: r.End})
		f.idx[name] = free[:min(c, len(free))]
	}
}

// freeIdx are the indices of typ's GPUs on node n that no other
// reservation holds in the spec's window, lowest first.
func (f *FakeSlurm) freeIdx(n, typ string, r reserve.ReservationSpec) []int {
	total := 0
	for _, nd := range f.Nodes {
		if nd.Name == n {
			total = nd.GPUs[typ]
		}
	}
	busy := map[int]bool{}
	for _, o := range f.Res {
		if o.Name == r.Name || !o.Start.Before(r.End) || !o.End.After(r.Start) || !slices.Contains(o.Nodes, n) {
			continue
		}
		if o.WholeNodes {
			return nil
		}
		if o.GPUs[typ] > 0 {
			for _, x := range f.idx[o.Name] {
				busy[x] = true
			}
		}
	}
	var free []int
	for x := range total {
		if !busy[x] {
			free = append(free, x)
		}
	}
	return free
}

// GPUIndices returns the GPU indices a GPU reservation holds on its node.
func (f *FakeSlurm) GPUIndices(name string) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.idx[name])
}

// Drop deletes a reservation out of band.
func (f *FakeSlurm) Drop(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.Res, name)
	delete(f.idx, name)
}

// SetDown marks a node down (why: its Slurm state, e.g. DRAIN) or, with
// "", up again.
func (f *FakeSlurm) SetDown(node, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Nodes {
		if f.Nodes[i].Name == node {
			f.Nodes[i].Down = why
		}
	}
	if why == "" || !f.ReplaceDown {
		return
	}
	names := make([]string, 0, len(f.Res))
	for n := range f.Res {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		r := f.Res[name]
		if r.WholeNodes || !slices.Contains(r.Nodes, node) {
			continue
		}
		delete(f.Res, name)
		moved := false
		for _, n := range f.Nodes {
			if n.Down != "" || n.Name == node {
				continue
			}
			spec := reserve.ReservationSpec{Name: name, Start: r.Start, End: r.End}
			u, whole := f.used(n.Name, spec)
			if whole {
				continue
			}
			gpus := map[string]int{}
			for t, c := range r.GPUs {
				if n.GPUs[t]-u[t] >= c {
					gpus[t] = c
				}
			}
			r.Nodes, r.GPUs, moved = []string{n.Name}, gpus, true
			break
		}
		if !moved {
			r.GPUs = map[string]int{}
		}
		r.WholeNodes = len(r.GPUs) == 0 // cores only: what slurmadapter reads as whole nodes
		f.Res[name] = r
		f.place(name)
	}
}

// TakeCalls returns the calls made since the last TakeCalls.
func (f *FakeSlurm) TakeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.Calls
	f.Calls = nil
	return c
}

// used is what the reservations overlapping [s, e) take on node n: GPUs by
// type, and whether one holds it whole.
func (f *FakeSlurm) used(n string, r reserve.ReservationSpec) (map[string]int, bool) {
	u := map[string]int{}
	whole := false
	for _, o := range f.Res {
		if o.Name == r.Name || !o.Start.Before(r.End) || !o.End.After(r.Start) || !slices.Contains(o.Nodes, n) {
			continue
		}
		if o.WholeNodes {
			whole = true
		}
		for t, c := range o.GPUs {
			u[t] += c
		}
	}
	return u, whole
}

// CreateReservation creates a reservation if it fits.
func (f *FakeSlurm) CreateReservation(_ context.Context, r reserve.ReservationSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, "create "+r.Name)
	if _, ok := f.Res[r.Name]; ok {
		return fmt.Errorf("create %s: name in use", r.Name)
	}
	res := reserve.Reservation{Name: r.Name, Accounts: slices.Clone(r.Accounts), Start: r.Start, End: r.End, Flags: slices.Clone(r.Flags), GPUs: map[string]int{}}
	if len(r.Nodes) > 0 && r.GPUType == "" {
		for _, n := range r.Nodes {
			u, whole := f.used(n, r)
			if whole || len(u) > 0 {
				return fmt.Errorf("create %s: %w: node %s is taken", r.Name, reserve.ErrBusy, n)
			}
		}
		res.Nodes, res.WholeNodes = slices.Clone(r.Nodes), true
		f.Res[r.Name] = res
		return nil
	}
	for _, n := range f.Nodes {
		if n.Down != "" || n.GPUs[r.GPUType] == 0 || (len(r.Nodes) > 0 && !slices.Contains(r.Nodes, n.Name)) {
			continue
		}
		if free := f.freeIdx(n.Name, r.GPUType, r); len(free) >= r.Count {
			res.GPUs[r.GPUType] = r.Count
			res.Nodes = []string{n.Name}
			f.Res[r.Name] = res
			f.idx[r.Name] = free[:r.Count]
			return nil
		}
	}
	return fmt.Errorf("create %s: %w: Requested nodes are busy (fake 2016)", r.Name, reserve.ErrBusy)
}

// UpdateReservation changes accounts, times and flags.
func (f *FakeSlurm) UpdateReservation(_ context.Context, r reserve.ReservationSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, "update "+r.Name)
	res, ok := f.Res[r.Name]
	if !ok {
		return fmt.Errorf("update %s: %w", r.Name, reserve.ErrNotFound)
	}
	if r.Accounts != nil {
		res.Accounts = slices.Clone(r.Accounts)
	}
	if !r.Start.IsZero() {
		res.Start = r.Start
	}
	if !r.End.IsZero() {
		res.End = r.End
	}
	for _, fl := range r.Flags {
		if off, ok := strings.CutPrefix(fl, "NO_"); ok {
			res.Flags = slices.DeleteFunc(res.Flags, func(x string) bool { return x == off })
		} else if !slices.Contains(res.Flags, fl) {
			res.Flags = append(res.Flags, fl)
		}
	}
	f.Res[r.Name] = res
	return nil
}

// DeleteReservation deletes one unless jobs run inside.
func (f *FakeSlurm) DeleteReservation(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, "delete "+name)
	if f.InUse[name] {
		return fmt.Errorf("delete %s: %w (fake 2055)", name, reserve.ErrInUse)
	}
	delete(f.Res, name)
	delete(f.idx, name)
	return nil
}
