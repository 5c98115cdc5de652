package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Client is what the adapter needs from *slurmrest.Client.
type Client interface {
	Cluster() string
	ListQOS(ctx context.Context) ([]slurmrest.QOS, error)
	ListAccounts(ctx context.Context) ([]slurmrest.Account, error)
	ListAssociations(ctx context.Context, f slurmrest.AssociationFilter) ([]slurmrest.Association, error)
	ListJobs(ctx context.Context, f slurmrest.JobFilter) ([]slurmrest.Job, error)
	ListTRES(ctx context.Context) ([]slurmrest.TRES, error)
	SetQOS(ctx context.Context, specs []slurmrest.QOSSpec) error
	CreateAccounts(ctx context.Context, specs []slurmrest.AccountSpec) error
	CreateUsers(ctx context.Context, specs []slurmrest.UserSpec) error
	SetAssociationsKnown(ctx context.Context, specs []slurmrest.AssociationSpec, clustered func(string) bool) error
	DeleteAssociations(ctx context.Context, f slurmrest.AssociationFilter) ([]string, error)
	DeleteAccounts(ctx context.Context, names []string) error
	DeleteQOSNames(ctx context.Context, names []string) error
	AddCoordinators(ctx context.Context, account string, users []string) error
	RemoveCoordinators(ctx context.Context, account string, users []string) error
}

// accountSetter is an optional batch write: POST accounts/ with whole
// account records (description, organization and the full coordinator
// list) in one request. When the client offers it, account modifications
// and coordinator changes of accounts read by ReadState are one request
// per apply instead of a read and a write per account. *slurmrest.Client
// has it (asserted below); test fakes may leave it out.
type accountSetter interface {
	SetAccounts(ctx context.Context, accounts []slurmrest.Account) error
}

var (
	_ Client        = (*slurmrest.Client)(nil)
	_ accountSetter = (*slurmrest.Client)(nil)
)

// ErrUnsupported: the slurmrest client cannot make this change.
var ErrUnsupported = errors.New("not supported by the slurmrest client")

// Adapter is reconcile.Cluster over slurmrestd. Its writes may be called
// concurrently (reconcile.Apply runs independent batches at once).
type Adapter struct {
	c Client
	// assocs, when set, reads the associations instead of GET
	// associations/ (ReadAssociationsFrom).
	assocs   AssocReader
	fallback func(err error) bool
	// typesOnNodes: GPUTypes keeps the types the cluster's nodes have.
	typesOnNodes bool

	mu sync.Mutex
	// coordinators read by the last ReadState, per account (needed to
	// write whole coordinator lists with SetAccounts).
	lastAccounts map[string]slurmrest.Account
	// clustered: accounts with their cluster association, from the last
	// ReadState and the accounts created since (PutAssocs need not check
	// them again).
	clustered map[string]bool
	// live: the user associations (account, user) the last ReadState
	// found, partitioned ones included (DeleteAssocs batches with them).
	live *liveAssocs
}

var _ reconcile.Cluster = (*Adapter)(nil)

// New returns an adapter over c.
func New(c Client) *Adapter { return &Adapter{c: c} }

// AssocReader reads a cluster's associations with each one's own QOS list
// and default QOS (AssocDB).
type AssocReader interface {
	Associations(ctx context.Context, cluster string, qosName map[int]string) ([]slurmrest.Association, error)
}

// ReadAssociationsFrom makes ReadState read the associations from r
// (slurmdbd's database) instead of slurmrestd, and the QOS too when r is
// also a QOSReader (AssocDB is). When r fails and fallback
// is set and returns true for the error (after logging it, say), the read
// goes to slurmrestd instead; otherwise ReadState fails.
func (a *Adapter) ReadAssociationsFrom(r AssocReader, fallback func(err error) bool) *Adapter {
	a.assocs, a.fallback = r, fallback
	return a
}

// ReadState implements reconcile.Reader: three requests (two, and a
// query of slurmdbd's database, with ReadAssociationsFrom).
func (a *Adapter) ReadState(ctx context.Context) (reconcile.State, error) {
	var st reconcile.State
	qos, err := a.readQOS(ctx)
	if err != nil {
		return st, err
	}
	for _, q := range qos {
		st.QOS = append(st.QOS, qosFromSlurm(q))
	}
	accts, err := a.c.ListAccounts(ctx)
	if err != nil {
		return st, err
	}
	assocs, err := a.readAssocs(ctx, qos)
	if err != nil {
		return st, err
	}
	clustered := map[string]bool{}
	own := map[string]slurmrest.Association{} // accounts' own associations
	live := newLiveAssocs()
	for _, as := range assocs {
		if as.User != "" {
			live.add(reconcile.AssocKey{Account: as.Account, User: as.User})
		}
		if as.Partition != "" {
			continue // gpubridge makes no per-partition associations and leaves the site's alone
		}
		if as.User == "" {
			clustered[as.Account] = true
			own[as.Account] = as
			continue
		}
		st.Assocs = append(st.Assocs, reconcile.Assoc{
			Assoc:     tenant.Assoc{Account: as.Account, User: as.User, QOS: sorted(as.QOS), DefaultQOS: as.DefaultQOS},
			IsDefault: as.IsDefault,
		})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastAccounts = map[string]slurmrest.Account{}
	a.clustered = clustered
	a.live = live
	for _, ac := range accts {
		if ac.Name == "root" || ac.Deleted {
			continue
		}
		a.lastAccounts[ac.Name] = ac
		o := own[ac.Name]
		st.Accounts = append(st.Accounts, reconcile.Account{
			Account: tenant.Account{Name: ac.Name, Description: ac.Description, Organization: ac.Organization,
				QOS: sorted(o.QOS), DefaultQOS: o.DefaultQOS},
			Clustered:    clustered[ac.Name],
			Coordinators: sorted(ac.Coordinators),
			Parent:       o.ParentAccount,
		})
	}
	return st, nil
}

// readAssocs reads the cluster's associations: each association's own
// settings (gpubridge writes its QOS lists and default QOS explicitly, so
// nothing inherited is needed, and slurmdbd then skips a parent lookup per
// account), from the database when one is set.
func (a *Adapter) readAssocs(ctx context.Context, qos []slurmrest.QOS) ([]slurmrest.Association, error) {
	if a.assocs != nil {
		names := make(map[int]string, len(qos))
		for _, q := range qos {
			names[q.ID] = q.Name
		}
		as, err := a.assocs.Associations(ctx, a.c.Cluster(), names)
		if err == nil {
			return as, nil
		}
		if a.fallback == nil || !a.fallback(err) {
			return nil, err
		}
	}
	return a.c.ListAssociations(ctx, slurmrest.AssociationFilter{Clusters: []string{a.c.Cluster()}, Own: true})
}

// QOSReader reads the cluster's QOS with their ids, descriptions,
// GrpTRES and MaxSubmitJobsPerUser (AssocDB).
type QOSReader interface {
	QOS(ctx context.Context) ([]slurmrest.QOS, error)
}

// readQOS reads the QOS from the database when the association reader
// reads QOS too (AssocDB), else from slurmrestd; a failed database read
// falls back as readAssocs does.
func (a *Adapter) readQOS(ctx context.Context) ([]slurmrest.QOS, error) {
	if r, ok := a.assocs.(QOSReader); ok {
		qs, err := r.QOS(ctx)
		if err == nil {
			return qs, nil
		}
		if a.fallback == nil || !a.fallback(err) {
			return nil, err
		}
	}
	return a.c.ListQOS(ctx)
}

func qosFromSlurm(q slurmrest.QOS) tenant.QOS {
	out := tenant.QOS{Name: q.Name, Description: q.Description, GrpTRES: tenant.TRES{}}
	for _, t := range q.GrpTRES {
		if t.Count >= 0 {
			out.GrpTRES[t.Key()] = t.Count
		}
	}
	if n, ok := q.MaxSubmitPerUser.Value(); ok && n == 0 {
		out.SubmitBlocked = true
	}
	out.RequiresReservation = slices.Contains(q.Flags, reconcile.FlagRequiredReservation)
	return out
}

// terminal job states: a job in one of them (and not COMPLETING) holds nothing.
var terminal = []string{"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// ActiveJobs implements reconcile.Reader: one request.
func (a *Adapter) ActiveJobs(ctx context.Context, accounts []string) ([]reconcile.JobCount, error) {
	jobs, err := a.c.ListJobs(ctx, slurmrest.JobFilter{Accounts: accounts})
	if err != nil {
		return nil, err
	}
	// Counted per account, user and QOS (releasing an adopted tenant
	// waits only for the jobs of gpubridge's QOS and users).
	type key struct{ account, user, qos string }
	counts := map[key]*reconcile.JobCount{}
	var order []key
	for _, j := range jobs {
		pending := j.HasState("PENDING")
		running := !pending && (j.HasState("COMPLETING") || !slices.ContainsFunc(j.State, func(s string) bool { return slices.Contains(terminal, s) }))
		if !pending && !running {
			continue
		}
		k := key{strings.ToLower(j.Account), j.User, j.QOS}
		c := counts[k]
		if c == nil {
			c = &reconcile.JobCount{Account: k.account, User: k.user, QOS: k.qos}
			counts[k] = c
			order = append(order, k)
		}
		if pending {
			c.Pending++
		} else {
			c.Running++
		}
	}
	out := make([]reconcile.JobCount, 0, len(order))
	for _, k := range order {
		out = append(out, *counts[k])
	}
	return out, nil
}

// PutQOS implements reconcile.Writer: one request (SetQOS reads the QOS
// first to keep the preempt modes of those it modifies).
func (a *Adapter) PutQOS(ctx context.Context, qs []reconcile.QOSWrite) error {
	specs := make([]slurmrest.QOSSpec, 0, len(qs))
	for _, q := range qs {
		s := slurmrest.QOSSpec{Name: q.Name, Description: q.Description, ClearGrpTRES: q.ClearTRES, New: q.Create}
		for _, k := range sortedKeys(q.GrpTRES) {
			typ, name := slurmstr.ParseTRESKey(k)
			s.GrpTRES = append(s.GrpTRES, slurmrest.TRES{Type: typ, Name: name, Count: q.GrpTRES[k]})
		}
		switch {
		case q.SubmitBlocked:
			// No new submissions; running and pending jobs stay.
			s.MaxSubmitPerUser = slurmrest.LimitOf(0)
		case !q.Create && !q.Shared:
			s.MaxSubmitPerUser = slurmrest.Unlimited()
		}
		// An update without flags clears the QOS's flags (measured on
		// 26.05): a reservation QOS sends its flag with every write.
		switch {
		case q.RequiresReservation:
			s.Flags = []string{reconcile.FlagRequiredReservation}
		case len(q.ClearFlags) > 0:
			s.Flags = append([]string{"REMOVE"}, q.ClearFlags...)
		}
		specs = append(specs, s)
	}
	return a.c.SetQOS(ctx, specs)
}

// CreateAccounts implements reconcile.Writer: with distinct descriptions a
// read and two requests, else one (slurmrest.Client.CreateAccounts).
func (a *Adapter) CreateAccounts(ctx context.Context, accts []tenant.Account) error {
	specs := make([]slurmrest.AccountSpec, 0, len(accts))
	for _, ac := range accts {
		specs = append(specs, slurmrest.AccountSpec{Name: ac.Name, Description: ac.Description, Organization: ac.Organization, Parent: "root"})
	}
	if err := a.c.CreateAccounts(ctx, specs); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clustered == nil {
		a.clustered = map[string]bool{}
	}
	for _, ac := range accts {
		a.clustered[ac.Name] = true
	}
	return nil
}

// ModifyAccounts implements reconcile.Writer; it needs the client's
// SetAccounts (slurmrestd has no other way to change a description).
func (a *Adapter) ModifyAccounts(ctx context.Context, accts []tenant.Account) error {
	set, ok := a.c.(accountSetter)
	if !ok {
		var names []string
		for _, ac := range accts {
			names = append(names, ac.Name)
		}
		return fmt.Errorf("change the description or organization of account(s) %s: %w (it needs SetAccounts, POST accounts/ with whole records); change them with sacctmgr, or delete and re-add the tenant",
			strings.Join(names, ", "), ErrUnsupported)
	}
	// SetAccounts writes the whole coordinator list: take it from the last
	// ReadState (kept current by AddCoordinators/RemoveCoordinators), or
	// read it when an account is not known from there.
	a.mu.Lock()
	defer a.mu.Unlock()
	known := a.lastAccounts
	for _, ac := range accts {
		if _, ok := known[ac.Name]; !ok {
			all, err := a.c.ListAccounts(ctx)
			if err != nil {
				return err
			}
			known = map[string]slurmrest.Account{}
			for _, x := range all {
				known[x.Name] = x
			}
			break
		}
	}
	recs := make([]slurmrest.Account, 0, len(accts))
	for _, ac := range accts {
		recs = append(recs, slurmrest.Account{Name: ac.Name, Description: ac.Description, Organization: ac.Organization, Coordinators: slices.Clone(known[ac.Name].Coordinators)})
	}
	if err := set.SetAccounts(ctx, recs); err != nil {
		return err
	}
	if a.lastAccounts != nil {
		for _, r := range recs {
			a.lastAccounts[r.Name] = r // a later SetAccounts must not revert the description
		}
	}
	return nil
}

// CreateUsers implements reconcile.Writer: one request.
func (a *Adapter) CreateUsers(ctx context.Context, us []tenant.User) error {
	specs := make([]slurmrest.UserSpec, 0, len(us))
	for _, u := range us {
		specs = append(specs, slurmrest.UserSpec{Name: u.Name, DefaultAccount: u.DefaultAccount})
	}
	return a.c.CreateUsers(ctx, specs)
}

// SetDefaultAccounts implements reconcile.Writer: POST users/ on existing
// users changes their default account (one request).
func (a *Adapter) SetDefaultAccounts(ctx context.Context, us []tenant.User) error {
	return a.CreateUsers(ctx, us)
}

// PutAssocs implements reconcile.Writer: one request (plus the client's
// check that the accounts have their cluster association, for accounts
// neither the last ReadState nor CreateAccounts saw with one).
func (a *Adapter) PutAssocs(ctx context.Context, as []tenant.Assoc) error {
	specs := make([]slurmrest.AssociationSpec, 0, len(as))
	for _, x := range as {
		specs = append(specs, slurmrest.AssociationSpec{Account: x.Account, User: x.User, QOS: slices.Clone(x.QOS), DefaultQOS: x.DefaultQOS})
	}
	a.mu.Lock()
	known := maps.Clone(a.clustered)
	a.mu.Unlock()
	return a.c.SetAssociationsKnown(ctx, specs, func(acct string) bool { return known[acct] })
}

// AddCoordinators implements reconcile.Writer.
func (a *Adapter) AddCoordinators(ctx context.Context, cs []tenant.Coord) error {
	return a.coordinators(ctx, cs, true)
}

// RemoveCoordinators implements reconcile.Writer.
func (a *Adapter) RemoveCoordinators(ctx context.Context, cs []tenant.Coord) error {
	return a.coordinators(ctx, cs, false)
}

func (a *Adapter) coordinators(ctx context.Context, cs []tenant.Coord, add bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	byAcct := map[string][]string{}
	var order []string
	for _, c := range cs {
		if _, ok := byAcct[c.Account]; !ok {
			order = append(order, c.Account)
		}
		byAcct[c.Account] = append(byAcct[c.Account], c.User)
	}
	// Accounts read by the last ReadState: one SetAccounts with their whole
	// new coordinator lists. Accounts created by this apply (not read) go
	// through the per-account read-and-write calls.
	rest := order
	if set, ok := a.c.(accountSetter); ok && a.lastAccounts != nil {
		var recs []slurmrest.Account
		rest = nil
		for _, acct := range order {
			cur, known := a.lastAccounts[acct]
			if !known {
				rest = append(rest, acct)
				continue
			}
			next := slices.Clone(cur.Coordinators)
			for _, u := range byAcct[acct] {
				if add && !slices.Contains(next, u) {
					next = append(next, u)
				}
				if !add {
					next = slices.DeleteFunc(next, func(x string) bool { return x == u })
				}
			}
			cur.Coordinators = next
			recs = append(recs, cur)
		}
		if len(recs) > 0 {
			if err := set.SetAccounts(ctx, recs); err != nil {
				return err
			}
			for _, r := range recs {
				a.lastAccounts[r.Name] = r
			}
		}
	}
	for _, acct := range rest {
		var err error
		if add {
			err = a.c.AddCoordinators(ctx, acct, byAcct[acct])
		} else {
			err = a.c.RemoveCoordinators(ctx, acct, byAcct[acct])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteAssocs implements reconcile.Writer with few requests.
// DELETE associations/ takes a filter, accounts x users, and removes every
// association in that cross product; so the keys are grouped into batches
// whose cross product holds no live association that is to stay (checked
// against the last ReadState): deleting whole tenants' users is one
// request. Slurm refuses (error 7009) a request that removes a user's
// default association but not all of the user's associations, so the
// associations of a user who loses all of them go in one batch (a user
// who keeps one has been given another default first: SetDefaultAccounts).
// Without a ReadState it sends one request per account, in the order
// given (a user's default association last).
func (a *Adapter) DeleteAssocs(ctx context.Context, ks []reconcile.AssocKey) error {
	a.mu.Lock()
	live := a.live
	a.mu.Unlock()
	var batches []assocBatch
	if live == nil {
		batches = byAccountRuns(ks)
	} else {
		batches = live.batches(ks, maxBatchNames)
	}
	// A batch Slurm refuses does not stop the others (they are disjoint);
	// its keys are reported as not written (*slurmrest.PipelineError).
	pe := &slurmrest.PipelineError{Op: "delete user associations", Objects: len(ks)}
	for _, b := range batches {
		f := slurmrest.AssociationFilter{Clusters: []string{a.c.Cluster()}, Accounts: b.accounts, Users: b.users}
		if _, err := a.c.DeleteAssociations(ctx, f); err != nil {
			var se *slurmrest.SlurmError
			if !errors.As(err, &se) {
				return err // Slurm's answer never came: stop
			}
			for _, k := range b.keys {
				pe.Failed = append(pe.Failed, k.String())
			}
			pe.Errs = append(pe.Errs, fmt.Errorf("delete the associations of user(s) %s under account(s) %s: %w", list(b.users), list(b.accounts), err))
			continue
		}
		if live != nil {
			a.mu.Lock()
			for _, k := range b.keys {
				live.remove(k)
			}
			a.mu.Unlock()
		}
	}
	if len(pe.Failed) > 0 {
		return pe
	}
	return nil
}

// maxBatchNames bounds the names in one DELETE associations/ query.
const maxBatchNames = 800

func list(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s,... (%d)", strings.Join(names[:4], ","), len(names))
}

// DeleteAccounts implements reconcile.Writer: one request per account
// (the API has no bulk delete), pipelined.
func (a *Adapter) DeleteAccounts(ctx context.Context, names []string) error {
	return a.c.DeleteAccounts(ctx, names)
}

// DeleteQOS implements reconcile.Writer: one request per QOS (the API has
// no bulk delete), pipelined.
func (a *Adapter) DeleteQOS(ctx context.Context, names []string) error {
	return a.c.DeleteQOSNames(ctx, names)
}

// GPUTypes returns the GPU types the cluster tracks: the typed gres/gpu
// TRES (AccountingStorageTRES), which are the only ones GrpTRES can limit;
// after TypesOnNodes, only those of them that a node of the cluster has.
func (a *Adapter) GPUTypes(ctx context.Context) ([]string, error) {
	ts, err := a.c.ListTRES(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the cluster's GPU types: %w", err)
	}
	types := []string{}
	for _, t := range ts {
		if typ, ok := t.GPU(); ok && typ != "" && !slices.Contains(types, typ) {
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	if !a.typesOnNodes {
		return types, nil
	}
	nl, ok := a.c.(nodeLister)
	if !ok {
		return nil, fmt.Errorf("list the cluster's GPU types: %w: its nodes cannot be listed", ErrUnsupported)
	}
	nodes, err := nl.ListNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the cluster's GPU types (its nodes' GRES): %w", err)
	}
	onNodes := map[string]bool{}
	for _, n := range nodes {
		for _, g := range n.GPUs() {
			onNodes[g.Type] = true
		}
	}
	return slices.DeleteFunc(types, func(t string) bool { return !onNodes[t] }), nil
}

// TypesOnNodes makes GPUTypes keep only the types a node of the cluster
// has. slurmdbd's TRES are global: when it records several clusters, a
// type that only another cluster's nodes have is a TRES of this one too
// (test/testbed/multi-cluster-facts.md), and a quota on it would limit
// nothing here.
func (a *Adapter) TypesOnNodes() *Adapter {
	a.typesOnNodes = true
	return a
}

// nodeLister is the optional node read TypesOnNodes needs
// (*slurmrest.Client has it).
type nodeLister interface {
	ListNodes(ctx context.Context) ([]slurmrest.Node, error)
}

var _ nodeLister = (*slurmrest.Client)(nil)

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func sortedKeys(m tenant.TRES) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
