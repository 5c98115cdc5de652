package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// ErrConflict: a Slurm object that gpubridge does not own is in the way.
var ErrConflict = errors.New("conflict with Slurm objects not managed by gpubridge")

// ErrPartial: Slurm refused some tenants' changes; the others were
// applied (Outcome.Failed says which and why).
var ErrPartial = errors.New("some changes were refused by Slurm")

// Compute reads the cluster (three bulk reads, plus one read of jobs when
// something is to be removed) and returns the plan for tenants, without a
// delete policy (see ComputeWith).
func Compute(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming) (*Plan, error) {
	return ComputeWith(ctx, r, tenants, n, Options{})
}

// ComputeScoped is Compute limited to removing the tenants scope accepts
// (see Input.Scope).
func ComputeScoped(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming, scope func(string) bool) (*Plan, error) {
	return ComputeWith(ctx, r, tenants, n, Options{Scope: scope})
}

// Options are what a plan is computed with besides the tenants.
type Options struct {
	// Scope limits removals (see Input.Scope); nil: all.
	Scope func(tenant string) bool
	// Deletes is the delete policy (see Input.Deletes).
	Deletes *DeletePolicy
}

// ComputeWith is Compute with options.
func ComputeWith(ctx context.Context, r Reader, tenants []tenant.Tenant, n tenant.Naming, o Options) (*Plan, error) {
	st, err := r.ReadState(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	in := Input{Tenants: tenants, Naming: n, State: st, Scope: o.Scope, Deletes: o.Deletes}
	if accts := NeedJobs(in); len(accts) > 0 {
		jobs, err := r.ActiveJobs(ctx, accts)
		if err != nil {
			return nil, fmt.Errorf("read jobs of %d account(s) to be cleaned up: %w", len(accts), err)
		}
		in.Jobs, in.JobsRead = jobs, true
	}
	return Diff(in), nil
}

// Refusal is what a Writer's error implements when Slurm refused the
// batch because of what it holds (nothing of the batch was written), as
// opposed to a failure to reach Slurm. Apply then finds the tenants whose
// objects are refused and applies the others' (see ApplyOutcome).
// Concerning names the objects Slurm's errors mention, as the Writer
// names them (a hint; may be empty).
type Refusal interface {
	error
	Refused() bool
	Concerning() []string
}

// PartlyWritten is what a Writer's error implements when it wrote the
// batch with separate requests and some of them failed: NotWritten names
// those objects (as the Writer names them); the others were written.
type PartlyWritten interface {
	error
	NotWritten() []string
}

// Failure is a tenant's change that Slurm refused.
type Failure struct {
	// Tenant is the tenant the objects belong to; "" for an object of no
	// one tenant (the shared on-demand QOS).
	Tenant string `json:"tenant"`
	// Step is the batch: "create or modify QOS".
	Step string `json:"step"`
	// Objects are the tenant's objects in that batch (at most a few).
	Objects []string `json:"objects"`
	// Error is Slurm's answer, short.
	Error string `json:"error"`
}

func (f Failure) String() string {
	who := "tenant " + f.Tenant
	if f.Tenant == "" {
		who = "shared objects"
	}
	return fmt.Sprintf("%s: %s (%s): %s", who, f.Step, strings.Join(f.Objects, ", "), f.Error)
}

// Outcome is what an apply did besides the plan's changes.
type Outcome struct {
	// Failed are the tenants whose changes Slurm refused, one entry each
	// (the first refusal); their later changes were held back, everything
	// else was applied. The next plan shows what is left.
	Failed []Failure `json:"failed,omitempty"`
	// HeldBack is the delete policy's refusal when it refused the plan's
	// deletions: they were not applied, everything else was.
	HeldBack *MassDelete `json:"heldBack,omitempty"`
}

// FailedTenant reports whether a tenant's changes failed or were held back.
func (o Outcome) FailedTenant(name string) bool {
	return slices.ContainsFunc(o.Failed, func(f Failure) bool { return f.Tenant == name })
}

// Err is nil, or ErrPartial listing the failures (a few of them), or
// ErrMassDelete when deletions were held back, or both.
func (o Outcome) Err() error {
	var held error
	if m := o.HeldBack; m != nil {
		held = fmt.Errorf("%w (%s): %s; those %d change(s) were held back, everything else was applied. %s", ErrMassDelete, m.Reason, m.Message, m.HeldBack, m.Hint)
	}
	if len(o.Failed) == 0 {
		return held
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tenant(s) could not be changed; everything else was applied, and the next apply retries:", len(o.Failed))
	for i, f := range o.Failed {
		if i == maxReported {
			fmt.Fprintf(&b, "\n  - and %d more", len(o.Failed)-i)
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(f.String())
	}
	partial := fmt.Errorf("%w: %s", ErrPartial, b.String())
	if held != nil {
		return errors.Join(held, partial)
	}
	return partial
}

const maxReported = 10

// Apply makes the plan's changes (ApplyOutcome) and returns its error:
// nil, a failure to reach Slurm, or ErrPartial.
func Apply(ctx context.Context, w Writer, p *Plan) error {
	o, err := ApplyOutcome(ctx, w, p)
	if err != nil {
		return err
	}
	return o.Err()
}

// ApplyOutcome makes the plan's changes in dependency order, one batch
// per kind of change; each batch is sent as soon as the batches it needs
// are done, so independent ones are sent at once:
//
//   - QOS, accounts with their cluster associations, and user records
//     depend on nothing and start together;
//   - user associations need the QOS and the accounts (Slurm needs no user
//     record for one), not the users: they start when those two are done;
//     with an AssocLoader, new users come with their new associations
//     (forLoad);
//   - default accounts need the users and the associations; then
//     coordinators are added, then removed;
//   - removals: user associations (a user's in one request when the user
//     loses them all; with an AccountDropper, those of deleted accounts go
//     with the accounts), then accounts, then QOS;
//   - last, descriptions and organizations of existing accounts (nothing
//     depends on them).
//
// A batch Slurm refuses (a Refusal: nothing of it was written) is split by
// tenant and sent again until the refused tenants are found; their
// changes, in that batch and in the batches that need it, are held back
// and reported in Outcome.Failed, and everything else is applied. A plan
// whose deletions the delete policy refused is applied without them
// (Outcome.HeldBack). Any
// other failure (slurmrestd unreachable, a timeout) is returned and no
// batch that needs the failed one starts (independent ones finish); what was done stays done, and the next
// plan shows what is left. A plan with conflicts is refused whole.
func ApplyOutcome(ctx context.Context, w Writer, p *Plan) (Outcome, error) {
	var out Outcome
	if len(p.Conflicts) > 0 {
		return out, p.Err()
	}
	if p.Refused() {
		out.HeldBack = p.MassDelete
	}
	nodes := batches(w, p)
	fails, errs := runBatches(ctx, nodes, ancestorsOf(nodes))
	var fatal []error
	for i := range nodes { // in the batches' order, whatever finished first
		out.Failed = append(out.Failed, fails[i]...)
		if errs[i] != nil {
			fatal = append(fatal, errs[i])
		}
	}
	if len(fatal) > 0 {
		return out, errors.Join(fatal...)
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.Failed = firstPerTenant(out.Failed)
	return out, nil
}

// batchNode is one batch of writes and the batches it must wait for
// (indexes into the batches, each after the batches it waits for).
type batchNode struct {
	s     step
	after []int
}

// batchWrites are the user and association writes as the writer takes
// them: with an AssocLoader, new associations (and their users) go in one
// load; with an AccountDropper, the associations of deleted accounts go
// with the accounts.
type batchWrites struct {
	createUsers  []tenant.User
	putAssocs    []tenant.Assoc
	loadAssocs   []NewAssoc
	loadWrite    func(context.Context, []NewAssoc) error
	deleteAssocs []AssocKey
}

// writesFor shapes the plan's user and association writes for w.
func writesFor(w Writer, x *writes) batchWrites {
	b := batchWrites{
		createUsers: x.createUsers, putAssocs: x.putAssocs,
		loadWrite:    func(context.Context, []NewAssoc) error { return errors.New("no AssocLoader") },
		deleteAssocs: x.deleteAssocs,
	}
	if l, ok := w.(AssocLoader); ok {
		b.createUsers, b.putAssocs, b.loadAssocs = forLoad(x)
		b.loadWrite = l.LoadAssocs
	}
	if d, ok := w.(AccountDropper); ok && len(x.deleteAccts) > 0 && d.DropsUserAssocs(len(x.deleteAccts)) {
		gone := map[string]bool{}
		for _, a := range x.deleteAccts {
			gone[a] = true
		}
		b.deleteAssocs = slices.DeleteFunc(slices.Clone(b.deleteAssocs), func(k AssocKey) bool { return gone[k.Account] })
	}
	return b
}

// batches are the plan's writes as batches, in their order, each with the
// batches it waits for.
func batches(w Writer, p *Plan) []batchNode {
	qosOwnerOf := func(name string) string {
		if name == p.naming.OnDemandQOS {
			return ""
		}
		return qosOwner(p.naming, name)
	}
	x := &p.w
	b := writesFor(w, x)
	return []batchNode{
		/* 0 */ {mkStep("create or modify QOS", x.qos, func(q QOSWrite) (string, string) { return qosOwnerOf(q.Name), q.Name }, w.PutQOS), nil},
		/* 1 */ {mkStep("create accounts", x.createAccts, func(a tenant.Account) (string, string) { return a.Name, a.Name }, w.CreateAccounts), nil},
		/* 2 */ {mkStep("create users", b.createUsers, func(u tenant.User) (string, string) { return u.DefaultAccount, u.Name }, w.CreateUsers), nil},
		/* 3 */ {mkStep("create or modify user associations", b.putAssocs, func(a tenant.Assoc) (string, string) { return a.Account, a.User }, w.PutAssocs), []int{0, 1}},
		/* 4 */ {mkStep("create user associations and users", b.loadAssocs, func(a NewAssoc) (string, string) { return a.Account, a.User }, b.loadWrite), []int{0, 1}},
		/* 5 */ {mkStep("change default accounts", x.setDefaults, func(u tenant.User) (string, string) { return u.DefaultAccount, u.Name }, w.SetDefaultAccounts), []int{2, 3, 4}},
		/* 6 */ {mkStep("add coordinators", x.addCoords, func(c tenant.Coord) (string, string) { return c.Account, c.User }, w.AddCoordinators), []int{5}},
		/* 7 */ {mkStep("remove coordinators", x.removeCoords, func(c tenant.Coord) (string, string) { return c.Account, c.User }, w.RemoveCoordinators), []int{6}},
		/* 8 */ {mkStep("delete user associations", b.deleteAssocs, func(k AssocKey) (string, string) { return k.Account, k.String() }, w.DeleteAssocs), []int{7}},
		/* 9 */ {mkStep("delete accounts", x.deleteAccts, func(n string) (string, string) { return n, n }, w.DeleteAccounts), []int{8}},
		/* 10 */ {mkStep("delete QOS", x.deleteQOS, func(n string) (string, string) { return qosOwnerOf(n), n }, w.DeleteQOS), []int{9}},
		// Last: nothing depends on descriptions, and a client that cannot
		// change them must not hold back the rest.
		/* 11 */ {mkStep("modify accounts", x.modifyAccts, func(a tenant.Account) (string, string) { return a.Name, a.Name }, w.ModifyAccounts), []int{10}},
		// The QOS of tenant accounts' own associations (what anything under
		// them inherits), once the QOS and the accounts exist.
		/* 12 */ {mkStep("set accounts' QOS", x.acctQOS, func(a tenant.Assoc) (string, string) { return a.Account, a.Account }, w.PutAssocs), []int{0, 1}},
	}
}

// ancestorsOf returns, for each batch, every batch it waits for, directly
// or not; a batch holds back the tenants that failed in those (and only
// those: which other batches finished first does not matter).
func ancestorsOf(nodes []batchNode) [][]int {
	ancestors := make([][]int, len(nodes))
	for i, n := range nodes {
		seen := map[int]bool{}
		for _, d := range n.after {
			for _, a := range append(slices.Clone(ancestors[d]), d) {
				if !seen[a] {
					seen[a] = true
					ancestors[i] = append(ancestors[i], a)
				}
			}
		}
	}
	return ancestors
}

// runBatches runs every batch once the batches it waits for are done,
// independent ones at the same time, and returns each batch's refused
// tenants and error. A batch is skipped when the context ended or a batch
// it needs failed, and leaves out the tenants refused in those.
func runBatches(ctx context.Context, nodes []batchNode, ancestors [][]int) ([][]Failure, []error) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	fails := make([][]Failure, len(nodes))
	errs := make([]error, len(nodes))
	done := make([]chan struct{}, len(nodes))
	for i := range nodes {
		done[i] = make(chan struct{})
	}
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			for _, d := range n.after {
				<-done[d]
			}
			mu.Lock()
			blocked := map[string]bool{}
			stop := ctx.Err() != nil
			for _, a := range ancestors[i] {
				for _, f := range fails[a] {
					blocked[f.Tenant] = true
				}
				stop = stop || errs[a] != nil
			}
			mu.Unlock()
			idx := n.s.pending(blocked)
			if stop || len(idx) == 0 {
				return
			}
			f, err := n.s.run(ctx, idx)
			mu.Lock()
			defer mu.Unlock()
			fails[i] = f
			if err != nil {
				errs[i] = fmt.Errorf("apply: %s (%d): %w", n.s.what, len(idx), err)
			}
		}()
	}
	wg.Wait()
	return fails, errs
}

// forLoad splits the plan's user writes for an AssocLoader: the new
// associations of new accounts, and every new association of a new user
// whose default account's association is among them (with that user's
// record), are loaded, a user's next to each other; the rest (changes,
// and new associations of existing users under existing accounts) go to
// PutAssocs and CreateUsers as without a loader.
func forLoad(x *writes) (users []tenant.User, put []tenant.Assoc, load []NewAssoc) {
	newAcct := map[string]bool{}
	for _, a := range x.createAccts {
		newAcct[a.Name] = true
	}
	newUser := map[string]string{} // user -> default account
	for _, u := range x.createUsers {
		newUser[u.Name] = u.DefaultAccount
	}
	withDefault := map[string]bool{}
	for _, a := range x.putAssocs {
		if d, ok := newUser[a.User]; ok && a.Account == d {
			withDefault[a.User] = true
		}
	}
	for _, a := range x.putAssocs {
		d, isNew := newUser[a.User]
		switch {
		case isNew && withDefault[a.User]:
			load = append(load, NewAssoc{Assoc: a, DefaultAccount: d})
		case !isNew && newAcct[a.Account]:
			load = append(load, NewAssoc{Assoc: a})
		default:
			put = append(put, a)
		}
	}
	for _, u := range x.createUsers {
		if !withDefault[u.Name] {
			users = append(users, u)
		}
	}
	slices.SortStableFunc(load, func(a, b NewAssoc) int { return strings.Compare(a.User, b.User) })
	return users, put, load
}

// firstPerTenant keeps each tenant's first failure, tenants sorted.
func firstPerTenant(fs []Failure) []Failure {
	var out []Failure
	for _, f := range fs {
		if !slices.ContainsFunc(out, func(g Failure) bool { return g.Tenant == f.Tenant }) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Failure) int { return strings.Compare(a.Tenant, b.Tenant) })
	return out
}

// step is one batch: n objects, each with the tenant it belongs to and
// the name a Writer's errors use for it.
type step struct {
	what  string
	n     int
	owner func(i int) string
	name  func(i int) string
	send  func(ctx context.Context, idx []int) error
}

func mkStep[T any](what string, items []T, id func(T) (owner, name string), write func(context.Context, []T) error) step {
	return step{
		what:  what,
		n:     len(items),
		owner: func(i int) string { o, _ := id(items[i]); return o },
		name:  func(i int) string { _, n := id(items[i]); return n },
		send: func(ctx context.Context, idx []int) error {
			batch := make([]T, len(idx))
			for j, i := range idx {
				batch[j] = items[i]
			}
			return write(ctx, batch)
		},
	}
}

// pending are the objects whose tenant is not blocked.
func (s step) pending(blocked map[string]bool) []int {
	var idx []int
	for i := range s.n {
		if !blocked[s.owner(i)] {
			idx = append(idx, i)
		}
	}
	return idx
}

// run writes the objects at idx. A Refusal is narrowed down by tenant
// (isolate); a PartlyWritten names what failed; any other error is
// returned (the apply stops).
func (s step) run(ctx context.Context, idx []int) ([]Failure, error) {
	err := s.send(ctx, idx)
	if err == nil {
		return nil, nil
	}
	var pw PartlyWritten
	if errors.As(err, &pw) {
		return s.notWritten(idx, pw), nil
	}
	var ref Refusal
	if !errors.As(err, &ref) || !ref.Refused() {
		return nil, err
	}
	return s.isolate(ctx, idx, ref)
}

// notWritten turns a PartlyWritten into failures of the objects' tenants.
func (s step) notWritten(idx []int, pw PartlyWritten) []Failure {
	failed := map[string]bool{}
	for _, n := range pw.NotWritten() {
		failed[n] = true
	}
	byOwner := map[string][]string{}
	var owners []string
	for _, i := range idx {
		if n := s.name(i); failed[n] {
			o := s.owner(i)
			if _, ok := byOwner[o]; !ok {
				owners = append(owners, o)
			}
			byOwner[o] = append(byOwner[o], n)
		}
	}
	var out []Failure
	for _, o := range owners {
		out = append(out, Failure{Tenant: o, Step: s.what, Objects: firstNames(byOwner[o]), Error: short(pw.Error())})
	}
	if len(out) == 0 { // names that match nothing: every tenant of the batch is in doubt
		for _, o := range s.owners(idx) {
			out = append(out, Failure{Tenant: o, Step: s.what, Objects: firstNames(s.namesOf(idx, o)), Error: short(pw.Error())})
		}
	}
	return out
}

// isolate finds the tenants whose objects Slurm refuses in a batch that
// was refused whole: it sends the batch again split by tenant, the
// tenants Slurm's errors mention apart from the others, else in halves,
// until each refused part is one tenant's. Each retry is one request;
// a batch with one refused tenant among n takes about 2 log2(n) of them.
func (s step) isolate(ctx context.Context, idx []int, ref Refusal) ([]Failure, error) {
	owners := s.owners(idx)
	if len(owners) == 1 {
		return []Failure{{Tenant: owners[0], Step: s.what, Objects: firstNames(s.namesOf(idx, owners[0])), Error: short(ref.Error())}}, nil
	}
	hint := map[string]bool{}
	for _, n := range ref.Concerning() {
		hint[n] = true
	}
	suspect := map[string]bool{}
	for _, i := range idx {
		if hint[s.name(i)] {
			suspect[s.owner(i)] = true
		}
	}
	var parts [][]string
	if len(suspect) > 0 && len(suspect) < len(owners) {
		var a, b []string
		for _, o := range owners {
			if suspect[o] {
				a = append(a, o)
			} else {
				b = append(b, o)
			}
		}
		parts = [][]string{a, b}
	} else {
		parts = [][]string{owners[:len(owners)/2], owners[len(owners)/2:]}
	}
	var out []Failure
	for _, part := range parts {
		in := map[string]bool{}
		for _, o := range part {
			in[o] = true
		}
		var sub []int
		for _, i := range idx {
			if in[s.owner(i)] {
				sub = append(sub, i)
			}
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		fails, err := s.run(ctx, sub)
		out = append(out, fails...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// owners are the distinct tenants of the objects at idx, sorted.
func (s step) owners(idx []int) []string {
	var out []string
	for _, i := range idx {
		if o := s.owner(i); !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

func (s step) namesOf(idx []int, owner string) []string {
	var out []string
	for _, i := range idx {
		if s.owner(i) == owner {
			out = append(out, s.name(i))
		}
	}
	return out
}

func firstNames(ns []string) []string {
	if len(ns) <= 3 {
		return ns
	}
	return append(slices.Clone(ns[:3]), fmt.Sprintf("and %d more", len(ns)-3))
}

func short(s string) string {
	if len(s) > 500 {
		return s[:500] + "..."
	}
	return s
}
