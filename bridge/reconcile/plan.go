package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Action is what a change does.
type Action string

// Actions, printed as the first character of a plan line.
const (
	Create Action = "+"
	Modify Action = "~"
	Delete Action = "-"
)

// Kinds of Slurm objects in a plan.
const (
	KindQOS         = "qos"
	KindAccount     = "account"
	KindUser        = "user" // a user association: "alice (acme)", or a user record: "alice"
	KindCoordinator = "coordinator"
)

// Change is one line of a plan: an object created or deleted, or one field
// of an object modified (Old -> New).
type Change struct {
	Action Action `json:"action"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Field  string `json:"field,omitempty"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
	// Detail describes a created object: "GrpTRES=gres/gpu:h100=2".
	Detail string `json:"detail,omitempty"`
	// HeldBack: the delete policy refused the plan's deletions, and this
	// one (or the default account change made for one) is not applied.
	HeldBack bool `json:"heldBack,omitempty"`
}

func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", c.Action, c.Kind, c.Name)
	switch {
	case c.Action == Modify:
		fmt.Fprintf(&b, "  %s %s -> %s", c.Field, show(c.Old), show(c.New))
	case c.Detail != "":
		fmt.Fprintf(&b, "  %s", c.Detail)
	}
	if c.HeldBack {
		b.WriteString("  (held back: mass deletion refused)")
	}
	return b.String()
}

func show(s string) string {
	switch {
	case s == "":
		return "(none)"
	case strings.ContainsAny(s, " \t"):
		return fmt.Sprintf("%q", s)
	}
	return s
}

// Wait is a removal deferred until jobs end.
type Wait struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Running int    `json:"running"`
	Pending int    `json:"pending"`
	Reason  string `json:"reason"`
}

func (w Wait) String() string {
	return fmt.Sprintf("! %s %s  waiting for %d running and %d pending job(s) to end: %s", w.Kind, w.Name, w.Running, w.Pending, w.Reason)
}

// Conflict is a Slurm object in gpubridge's way that it does not own.
type Conflict struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Msg  string `json:"message"`
}

func (c Conflict) String() string { return fmt.Sprintf("%s %s: %s", c.Kind, c.Name, c.Msg) }

// Plan is the difference between the tenants and the cluster.
type Plan struct {
	Changes   []Change   `json:"changes"`
	Waiting   []Wait     `json:"waiting,omitempty"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// Removed are tenants being deleted whose Slurm objects this plan
	// removes (or that are already gone): once applied, drop them from
	// the store.
	Removed []string `json:"removedTenants,omitempty"`
	// Released are the tenants of Removed that are released, not
	// deleted: adopted tenants whose site account and original user
	// associations stay, with what they had before the adoption.
	Released []string `json:"releasedTenants,omitempty"`
	// SubAccounts are the accounts found under a tenant's account (see
	// subAccounts), by name, with their tenant: the plan deletes them once
	// their jobs end, and the guard refuses new jobs in them meanwhile.
	SubAccounts map[string]string `json:"subAccounts,omitempty"`
	// MassDelete is set when the plan deletes more than the delete policy
	// allows (see DeletePolicy): refused unless Allowed.
	MassDelete *MassDelete `json:"massDelete,omitempty"`

	w      writes
	naming tenant.Naming
	// liveTRES is the GrpTRES of each QOS in Slurm when the plan was made.
	liveTRES map[string]tenant.TRES
}

// Empty reports whether applying the plan would change nothing in Slurm.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Refused reports whether the delete policy refused the plan.
func (p *Plan) Refused() bool { return p.MassDelete != nil && !p.MassDelete.Allowed }

// Err returns an error listing the conflicts (nothing of the plan is
// applied), or the delete policy's refusal (the deletions are held back,
// the rest is applied), or nil.
func (p *Plan) Err() error {
	if len(p.Conflicts) == 0 {
		if p.Refused() {
			return fmt.Errorf("%w (%s): %s; those deletions were held back (everything else is applied). %s", ErrMassDelete, p.MassDelete.Reason, p.MassDelete.Message, p.MassDelete.Hint)
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d Slurm object(s) are in the way and not managed by gpubridge; nothing was changed:", len(p.Conflicts))
	for _, c := range p.Conflicts {
		b.WriteString("\n  - ")
		b.WriteString(c.String())
	}
	return fmt.Errorf("%w: %s", ErrConflict, b.String())
}

// writes are the batches Apply sends, in order.
type writes struct {
	qos          []QOSWrite
	createAccts  []tenant.Account
	modifyAccts  []tenant.Account
	acctQOS      []tenant.Assoc // the QOS of accounts' own associations (User empty)
	createUsers  []tenant.User
	putAssocs    []tenant.Assoc
	setDefaults  []tenant.User
	addCoords    []tenant.Coord
	removeCoords []tenant.Coord
	deleteAssocs []AssocKey
	deleteAccts  []string
	deleteQOS    []string
}

// Input is what Diff compares.
type Input struct {
	// Tenants are every tenant in the store (active and deleting).
	Tenants []tenant.Tenant
	Naming  tenant.Naming
	State   State
	// Jobs are the unfinished jobs of the accounts NeedJobs named; JobsRead
	// says whether they were read (when not, nothing is removed).
	Jobs     []JobCount
	JobsRead bool
	// Scope, when set, limits which gpubridge-marked accounts and QOS
	// (by tenant name) this plan may remove: a scratch store (a benchmark,
	// a test) must not remove the tenants of the real one. Nil: all.
	Scope func(tenant string) bool
	// Deletes, when set, is the delete policy the plan is checked
	// against (every front end sets it; nil only in tests of the diff).
	Deletes *DeletePolicy
}

type jobTally struct{ running, pending int }

func (j jobTally) any() bool { return j.running+j.pending > 0 }

// NeedJobs returns the accounts whose jobs Diff must know before removing
// anything: accounts of tenants being deleted, gpubridge accounts no tenant
// wants any more, and accounts losing users. Empty means no read of jobs
// is needed (the steady state).
func NeedJobs(in Input) []string {
	// With no jobs at all, every removal goes ahead: the accounts consulted
	// on the way are the ones whose jobs matter.
	in.Jobs, in.JobsRead = nil, true
	var p Plan
	return plan(in, &p)
}

// Diff compares the tenants with the cluster. It is pure.
func Diff(in Input) *Plan {
	p := Plan{Changes: []Change{}, naming: in.Naming}
	plan(in, &p)
	return &p
}

// plan fills p and returns the accounts whose job counts it consulted.
// Its steps run in the order of the plan's lines: QOS, accounts,
// coordinators, user associations, then the removals.
func plan(in Input, p *Plan) []string {
	pl := newPlanner(in, p)
	keep, released := pl.tenants()
	pl.want = tenant.Project(keep, in.Naming)
	for _, t := range released {
		releaseObjects(&pl.want, t, in.Naming, in.State)
	}
	pl.qos()
	pl.accounts()
	pl.countLive()
	pl.goneAccounts()
	pl.subAccounts()
	pl.coordinators()
	pl.assocs()
	pl.goneAssocs()
	pl.defaultAccounts()
	pl.orderAssocDeletes()
	pl.deleteAccounts()
	pl.deleteQOS()
	pl.finish()
	return slices.Sorted(maps.Keys(pl.consulted))
}

// planner is one run of plan: its input, the plan it fills, and what each
// step learns for the steps after it.
type planner struct {
	in   Input
	p    *Plan
	want tenant.Objects // the Slurm objects the tenants want

	consulted map[string]bool       // accounts whose job counts were consulted
	acctJobs  map[string]jobTally   // unfinished jobs per account
	assocJobs map[AssocKey]jobTally // unfinished jobs per user association

	adopted         map[string]bool // adopted tenants' accounts, and "qos/NAME" of their QOS
	waitingAccounts map[string]bool // accounts whose removal waits for their jobs
	wantQOS         map[string]bool
	wantAcct        map[string]bool
	liveAcct        map[string]Account
	ours            map[string]bool // accounts gpubridge manages (existing or to be created)

	del          deletions       // what the delete policy counts
	goneAccts    []string        // accounts this plan deletes
	removingAcct map[string]bool // the same, as a set
	strayOf      map[string]string

	liveAssoc    map[AssocKey]Assoc
	userAssocs   map[string][]Assoc  // every live association per user
	created      map[string][]string // user -> accounts gaining an association
	removedAssoc map[AssocKey]bool

	owners        map[int]deletionOwner // the deletions (and changes made for them) by change
	defaultOwners []deletionOwner       // of p.w.setDefaults
}

// newPlanner tallies the unfinished jobs per account and per user
// association, and sets up the planner's maps.
func newPlanner(in Input, p *Plan) *planner {
	pl := &planner{
		in: in, p: p,
		consulted:       map[string]bool{},
		acctJobs:        map[string]jobTally{},
		assocJobs:       map[AssocKey]jobTally{},
		adopted:         map[string]bool{},
		waitingAccounts: map[string]bool{},
		owners:          map[int]deletionOwner{},
	}
	for _, j := range in.Jobs {
		t := pl.acctJobs[j.Account]
		t.running += j.Running
		t.pending += j.Pending
		pl.acctJobs[j.Account] = t
		k := AssocKey{j.Account, j.User}
		u := pl.assocJobs[k]
		u.running += j.Running
		u.pending += j.Pending
		pl.assocJobs[k] = u
	}
	return pl
}

// canRemove reports whether the account (or one user's part of it) has no
// unfinished job, recording a wait otherwise.
func (pl *planner) canRemove(kind, name, account string, tally jobTally, reason string) bool {
	pl.consulted[account] = true
	if !pl.in.JobsRead {
		pl.p.Waiting = append(pl.p.Waiting, Wait{Kind: kind, Name: name, Reason: reason + " (job counts not read)"})
		return false
	}
	if tally.any() {
		pl.p.Waiting = append(pl.p.Waiting, Wait{Kind: kind, Name: name, Running: tally.running, Pending: tally.pending, Reason: reason})
		return false
	}
	return true
}

// tenants sorts the tenants: the ones whose objects are wanted (keep), and
// the released ones; tenants being deleted or released go once their
// account has no unfinished job.
func (pl *planner) tenants() (keep, released []tenant.Tenant) {
	in, p := pl.in, pl.p
	for _, t := range in.Tenants {
		if t.Adopted { // owned through the store, deleting or not
			pl.adopted[t.Name] = true
			pl.adopted[KindQOS+"/"+in.Naming.QOSName(t.Name)] = true
		}
		if t.Releases() {
			if !pl.canRemove(KindAccount, t.Name, t.Name, pl.releaseJobs(t), "tenant is being released (the site's account and its original users stay); new submissions are blocked; waiting for the jobs of the users and QOS gpubridge added") {
				keep = append(keep, t)
				pl.waitingAccounts[t.Name] = true
				continue
			}
			released = append(released, t)
			p.Removed = append(p.Removed, t.Name)
			p.Released = append(p.Released, t.Name)
			continue
		}
		if t.IsDeleting() {
			if !pl.canRemove(KindAccount, t.Name, t.Name, pl.acctJobs[t.Name], "tenant is being deleted; new submissions are blocked") {
				keep = append(keep, t)
				pl.waitingAccounts[t.Name] = true
				continue
			}
			p.Removed = append(p.Removed, t.Name)
			continue
		}
		keep = append(keep, t)
	}
	return keep, released
}

// releaseJobs counts the jobs that hold a release back: a tenant is
// released once no job of gpubridge's objects is unfinished: jobs of the
// users it added, and jobs of the QOS it adds to the associations (see
// holdsRelease); the site's own users' jobs in the site's own QOS go on.
func (pl *planner) releaseJobs(t tenant.Tenant) jobTally {
	var tally jobTally
	for _, j := range pl.in.Jobs {
		if j.Account == t.Name && holdsRelease(t, pl.in.Naming, j) {
			tally.running += j.Running
			tally.pending += j.Pending
		}
	}
	return tally
}

// qos plans the QOS the tenants want: created when missing, modified when
// they differ; a QOS in the way that gpubridge does not own is a conflict.
func (pl *planner) qos() {
	p := pl.p
	liveQOS := map[string]tenant.QOS{}
	p.liveTRES = map[string]tenant.TRES{}
	for _, q := range pl.in.State.QOS {
		liveQOS[q.Name] = q
		p.liveTRES[q.Name] = q.GrpTRES
	}
	pl.wantQOS = map[string]bool{}
	for _, q := range pl.want.QOS {
		pl.wantQOS[q.Name] = true
		live, ok := liveQOS[q.Name]
		if !ok {
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindQOS, Name: q.Name, Detail: qosDetail(q)})
			p.w.qos = append(p.w.qos, QOSWrite{QOS: q, Create: true})
			continue
		}
		if q.Shared {
			continue // used as it is; the burst controller owns its limits
		}
		if !tenant.IsMarked(live.Description) && !pl.adopted[KindQOS+"/"+q.Name] {
			p.Conflicts = append(p.Conflicts, Conflict{KindQOS, q.Name, "exists in Slurm and was not created by gpubridge; " + adoptHint(qosOwner(pl.in.Naming, q.Name))})
			continue
		}
		planQOSFields(p, q, live)
	}
}

// qosDetail describes a QOS to create.
func qosDetail(q tenant.QOS) string {
	detail := "GrpTRES=" + show(q.GrpTRES.String())
	if q.Shared {
		detail = "shared on-demand QOS"
	}
	if q.SubmitBlocked {
		detail += " MaxSubmitJobsPerUser=0"
	}
	if q.RequiresReservation {
		detail += " Flags=REQUIRED_RESERVATION"
	}
	return detail
}

// planQOSFields modifies the fields of an existing QOS that differ from
// what it wants, clearing the limits and flags it no longer has.
func planQOSFields(p *Plan, q, live tenant.QOS) {
	var changed bool
	if live.Description != q.Description {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindQOS, Name: q.Name, Field: "Description", Old: live.Description, New: q.Description})
		changed = true
	}
	var clear []string
	if !live.GrpTRES.Equal(q.GrpTRES) {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindQOS, Name: q.Name, Field: "GrpTRES", Old: live.GrpTRES.String(), New: q.GrpTRES.String()})
		for k := range live.GrpTRES {
			if _, kept := q.GrpTRES[k]; !kept {
				clear = append(clear, k)
			}
		}
		slices.Sort(clear)
		changed = true
	}
	if live.SubmitBlocked != q.SubmitBlocked {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindQOS, Name: q.Name, Field: "MaxSubmitJobsPerUser", Old: blocked(live.SubmitBlocked), New: blocked(q.SubmitBlocked)})
		changed = true
	}
	var clearFlags []string
	if live.RequiresReservation != q.RequiresReservation {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindQOS, Name: q.Name, Field: "Flags", Old: requiresResv(live.RequiresReservation), New: requiresResv(q.RequiresReservation)})
		if !q.RequiresReservation {
			clearFlags = []string{FlagRequiredReservation}
		}
		changed = true
	}
	if changed {
		p.w.qos = append(p.w.qos, QOSWrite{QOS: q, ClearTRES: clear, ClearFlags: clearFlags})
	}
}

// accounts plans the tenants' accounts: created when missing (or missing
// on the cluster), modified when they differ; an account in the way that
// gpubridge does not own is a conflict. It records which accounts are
// gpubridge's (ours).
func (pl *planner) accounts() {
	p := pl.p
	pl.liveAcct = map[string]Account{}
	for _, a := range pl.in.State.Accounts {
		pl.liveAcct[a.Name] = a
	}
	pl.ours = map[string]bool{}
	pl.wantAcct = map[string]bool{}
	for _, a := range pl.want.Accounts {
		pl.wantAcct[a.Name] = true
		live, ok := pl.liveAcct[a.Name]
		if !ok {
			detail := "parent=root Description=" + show(a.Description) + " Organization=" + show(a.Organization)
			if a.QOS != nil {
				detail += " QOS=" + strings.Join(a.QOS, ",") + " DefaultQOS=" + a.DefaultQOS
				p.w.acctQOS = append(p.w.acctQOS, acctAssoc(a))
			}
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindAccount, Name: a.Name, Detail: detail})
			p.w.createAccts = append(p.w.createAccts, a)
			pl.ours[a.Name] = true
			continue
		}
		if !tenant.IsMarked(live.Description) && !pl.adopted[a.Name] {
			p.Conflicts = append(p.Conflicts, Conflict{KindAccount, a.Name, "exists in Slurm and was not created by gpubridge; " + adoptHint(a.Name)})
			continue
		}
		pl.ours[a.Name] = true
		planAccountFields(p, a, live)
		planAccountQOS(p, a, live)
	}
}

// planAccountFields adds an existing account's missing association on the
// cluster, and modifies its description and organization when they differ.
func planAccountFields(p *Plan, a tenant.Account, live Account) {
	if !live.Clustered {
		p.Changes = append(p.Changes, Change{Action: Create, Kind: KindAccount, Name: a.Name, Detail: "association on the cluster (parent=root)"})
		p.w.createAccts = append(p.w.createAccts, a)
	}
	var changed bool
	if live.Description != a.Description {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindAccount, Name: a.Name, Field: "Description", Old: live.Description, New: a.Description})
		changed = true
	}
	if live.Organization != a.Organization {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindAccount, Name: a.Name, Field: "Organization", Old: live.Organization, New: a.Organization})
		changed = true
	}
	if changed {
		p.w.modifyAccts = append(p.w.modifyAccts, a)
	}
}

// countLive records what the delete policy counts as living: tenants (in
// scope) with an account or a QOS in Slurm.
func (pl *planner) countLive() {
	in := pl.in
	pl.del = deletions{live: map[string]bool{}, gone: map[string]bool{}}
	for _, a := range in.State.Accounts {
		if (tenant.IsMarked(a.Description) || pl.adopted[a.Name]) && (in.Scope == nil || in.Scope(a.Name)) {
			pl.del.live[a.Name] = true
		}
	}
	for _, q := range in.State.QOS {
		if (!tenant.IsMarked(q.Description) && !pl.adopted[KindQOS+"/"+q.Name]) || q.Name == in.Naming.OnDemandQOS {
			continue
		}
		owner, ok := in.Naming.QOSOwner(q.Name)
		if in.Scope == nil || ok && in.Scope(owner) {
			pl.del.live[qosOwner(in.Naming, q.Name)] = true
		}
	}
}

// goneAccounts finds gpubridge's accounts that no tenant wants any more:
// removed once they have no unfinished job.
func (pl *planner) goneAccounts() {
	in := pl.in
	pl.removingAcct = map[string]bool{}
	for _, a := range in.State.Accounts {
		if pl.wantAcct[a.Name] || !tenant.IsMarked(a.Description) && !pl.adopted[a.Name] || (in.Scope != nil && !in.Scope(a.Name)) {
			continue
		}
		if !pl.canRemove(KindAccount, a.Name, a.Name, pl.acctJobs[a.Name], "no tenant wants this gpubridge account") {
			pl.waitingAccounts[a.Name] = true
			continue
		}
		pl.goneAccts = append(pl.goneAccts, a.Name)
		pl.removingAcct[a.Name] = true
	}
	slices.Sort(pl.goneAccts)
}

// subAccounts removes the sub-accounts under a tenant's account too (after
// their jobs), and records the ones gpubridge did not mark in
// p.SubAccounts.
func (pl *planner) subAccounts() {
	strays := subAccounts(pl.in.State.Accounts, pl.ours, pl.adopted)
	for _, sa := range strays {
		if pl.removingAcct[sa.name] || pl.waitingAccounts[sa.name] {
			continue // a gpubridge-marked account no tenant wants: above
		}
		if !pl.canRemove(KindAccount, sa.name, sa.name, pl.acctJobs[sa.name], "sub-account of tenant "+sa.tenant+"; new jobs in it are refused by the guard") {
			pl.waitingAccounts[sa.name] = true
			continue
		}
		pl.goneAccts = append(pl.goneAccts, sa.name)
		pl.removingAcct[sa.name] = true
	}
	pl.strayOf = map[string]string{}
	for _, sa := range strays {
		if !tenant.IsMarked(accountDescription(pl.in.State.Accounts, sa.name)) {
			pl.strayOf[sa.name] = sa.tenant
		}
	}
	pl.p.SubAccounts = pl.strayOf
}

// coordinators adds the coordinators the tenants want to gpubridge's
// accounts, and removes the others.
func (pl *planner) coordinators() {
	p := pl.p
	wantCoord := map[tenant.Coord]bool{}
	for _, c := range pl.want.Coords {
		if !pl.ours[c.Account] {
			continue
		}
		wantCoord[c] = true
		if !slices.Contains(pl.liveAcct[c.Account].Coordinators, c.User) {
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindCoordinator, Name: c.Key()})
			p.w.addCoords = append(p.w.addCoords, c)
		}
	}
	for _, a := range pl.in.State.Accounts {
		if !pl.ours[a.Name] {
			continue
		}
		for _, u := range a.Coordinators {
			c := tenant.Coord{Account: a.Name, User: u}
			if !wantCoord[c] {
				p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindCoordinator, Name: c.Key()})
				p.w.removeCoords = append(p.w.removeCoords, c)
			}
		}
	}
}

// assocs plans the user associations the tenants want under gpubridge's
// accounts (created, or their QOS modified), and the user records of
// users new to Slurm.
func (pl *planner) assocs() {
	p := pl.p
	pl.liveAssoc = map[AssocKey]Assoc{}
	pl.userAssocs = map[string][]Assoc{}
	for _, a := range pl.in.State.Assocs {
		pl.liveAssoc[AssocKey{a.Account, a.User}] = a
		pl.userAssocs[a.User] = append(pl.userAssocs[a.User], a)
	}
	newUsers := map[string]bool{}
	pl.created = map[string][]string{}
	for _, a := range pl.want.Assocs {
		if !pl.ours[a.Account] {
			continue
		}
		live, ok := pl.liveAssoc[AssocKey{a.Account, a.User}]
		if !ok {
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindUser, Name: a.Key(), Detail: "QOS=" + strings.Join(a.QOS, ",") + " DefaultQOS=" + a.DefaultQOS})
			p.w.putAssocs = append(p.w.putAssocs, a)
			pl.created[a.User] = append(pl.created[a.User], a.Account)
			if len(pl.userAssocs[a.User]) == 0 {
				newUsers[a.User] = true
			}
			continue
		}
		planAssocQOS(p, a, live)
	}
	for _, u := range pl.want.Users {
		if newUsers[u.Name] {
			p.w.createUsers = append(p.w.createUsers, u)
		}
	}
}

// planAssocQOS sets the QOS list and default QOS of an existing user
// association when they differ from what it wants.
func planAssocQOS(p *Plan, a tenant.Assoc, live Assoc) {
	var changed bool
	if !slices.Equal(sortedCopy(live.QOS), a.QOS) {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindUser, Name: a.Key(), Field: "QOS", Old: strings.Join(sortedCopy(live.QOS), ","), New: strings.Join(a.QOS, ",")})
		changed = true
	}
	if live.DefaultQOS != a.DefaultQOS {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindUser, Name: a.Key(), Field: "DefaultQOS", Old: live.DefaultQOS, New: a.DefaultQOS})
		changed = true
	}
	if changed {
		p.w.putAssocs = append(p.w.putAssocs, a)
	}
}

// goneAssocs deletes the associations under gpubridge's accounts that no
// tenant wants (a user leaving waits for their jobs), and those of the
// accounts being removed, and counts them for the delete policy.
func (pl *planner) goneAssocs() {
	p := pl.p
	wantAssoc := map[AssocKey]bool{}
	for _, a := range pl.want.Assocs {
		if pl.ours[a.Account] {
			wantAssoc[AssocKey{a.Account, a.User}] = true
		}
	}
	pl.removedAssoc = map[AssocKey]bool{}
	// By account, then user: the live state comes in the order of its
	// source (slurmrestd, or slurmdbd's database), which may change from
	// read to read, and the plan must not.
	live := slices.Clone(pl.in.State.Assocs)
	slices.SortFunc(live, func(x, y Assoc) int {
		return cmp.Or(strings.Compare(x.Account, y.Account), strings.Compare(x.User, y.User))
	})
	for _, a := range live {
		k := AssocKey{a.Account, a.User}
		managed := pl.ours[a.Account] || pl.removingAcct[a.Account]
		if !managed || wantAssoc[k] || pl.waitingAccounts[a.Account] {
			continue
		}
		if !pl.removingAcct[a.Account] && !pl.canRemove(KindUser, k.String(), a.Account, pl.assocJobs[k], "user leaves the tenant; the guard refuses their new jobs") {
			continue
		}
		pl.removedAssoc[k] = true
		if _, stray := pl.strayOf[a.Account]; !stray {
			pl.owners[len(p.Changes)] = deletionOwner{a.Account, !pl.removingAcct[a.Account]}
		}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindUser, Name: k.String()})
		// Also the associations of accounts being removed: deleted first,
		// in few requests, so that a user who loses all of them loses them
		// in one (Slurm refuses to remove a user's default association
		// while others remain, error 7009, which removing the accounts one
		// by one would do).
		p.w.deleteAssocs = append(p.w.deleteAssocs, k)
		if !pl.removingAcct[a.Account] {
			pl.del.assocs++
		}
	}
	for _, a := range pl.in.State.Assocs {
		if pl.ours[a.Account] && !pl.removingAcct[a.Account] {
			pl.del.assocsAll++
		}
	}
}

// defaultAccounts gives a user losing their default account another of
// their associations as default (Slurm refuses to remove a default
// association while others remain): the one the tenants name, or else the
// first by name.
func (pl *planner) defaultAccounts() {
	p := pl.p
	defaultOf := map[string]string{}
	for _, u := range pl.want.Users {
		defaultOf[u.Name] = u.DefaultAccount
	}
	for _, user := range slices.Sorted(maps.Keys(pl.userAssocs)) {
		var lostDefault string
		remaining := slices.Clone(pl.created[user])
		for _, a := range pl.userAssocs[user] {
			if pl.removedAssoc[AssocKey{a.Account, a.User}] {
				if a.IsDefault {
					lostDefault = a.Account
				}
				continue
			}
			remaining = append(remaining, a.Account)
		}
		if lostDefault == "" || len(remaining) == 0 {
			continue
		}
		slices.Sort(remaining)
		next := remaining[0]
		if d := defaultOf[user]; d != "" && slices.Contains(remaining, d) {
			next = d
		}
		o := deletionOwner{lostDefault, !pl.removingAcct[lostDefault]}
		pl.owners[len(p.Changes)] = o
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindUser, Name: user, Field: "DefaultAccount", Old: lostDefault, New: next})
		p.w.setDefaults = append(p.w.setDefaults, tenant.User{Name: user, DefaultAccount: next})
		pl.defaultOwners = append(pl.defaultOwners, o)
	}
}

// orderAssocDeletes puts a user's default association last among the
// deletions: Slurm refuses it while the user has others.
func (pl *planner) orderAssocDeletes() {
	slices.SortStableFunc(pl.p.w.deleteAssocs, func(x, y AssocKey) int {
		dx, dy := pl.liveAssoc[x].IsDefault, pl.liveAssoc[y].IsDefault
		switch {
		case dx == dy:
			return 0
		case dy:
			return -1
		}
		return 1
	})
}

// deleteAccounts deletes the accounts found gone; a sub-account's deletion
// is not a tenant's, and the delete policy does not count it.
func (pl *planner) deleteAccounts() {
	p := pl.p
	for _, n := range pl.goneAccts {
		if t, ok := pl.strayOf[n]; ok {
			p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindAccount, Name: n, Detail: "sub-account of tenant " + t + ": tenants have none (its jobs would escape the tenant's users and quota)"})
			p.w.deleteAccts = append(p.w.deleteAccts, n)
			continue
		}
		pl.owners[len(p.Changes)] = deletionOwner{owner: n}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindAccount, Name: n})
		p.w.deleteAccts = append(p.w.deleteAccts, n)
		pl.del.gone[n] = true
	}
}

// deleteQOS deletes gpubridge's QOS that no tenant wants (a tenant QOS
// waits for its account's jobs).
func (pl *planner) deleteQOS() {
	in, p := pl.in, pl.p
	for _, q := range in.State.QOS {
		if pl.wantQOS[q.Name] || !tenant.IsMarked(q.Description) && !pl.adopted[KindQOS+"/"+q.Name] || q.Name == in.Naming.OnDemandQOS {
			continue
		}
		owner, ok := in.Naming.QOSOwner(q.Name)
		if ok && pl.waitingAccounts[owner] || in.Scope != nil && (!ok || !in.Scope(owner)) {
			continue
		}
		pl.owners[len(p.Changes)] = deletionOwner{owner: qosOwner(in.Naming, q.Name)}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindQOS, Name: q.Name})
		p.w.deleteQOS = append(p.w.deleteQOS, q.Name)
		pl.del.gone[qosOwner(in.Naming, q.Name)] = true
	}
}

// finish sorts the removed tenants and checks the plan against the delete
// policy: a plan with conflicts writes nothing, a refused one holds its
// deletions back.
func (pl *planner) finish() {
	p := pl.p
	slices.Sort(p.Removed)
	slices.Sort(p.Released)
	if pl.in.Deletes != nil {
		p.MassDelete = pl.in.Deletes.check(pl.del, pl.in.Tenants)
	}
	switch {
	case len(p.Conflicts) > 0:
		p.w = writes{} // a plan with conflicts is not applied
	case p.Refused():
		holdBack(p, pl.owners, pl.defaultOwners)
	}
}

// planAccountQOS sets the QOS list and default QOS of a tenant account's
// own association when they differ from what it wants (nothing under the
// account may fall back to the cluster's QOS: issue 25).
func planAccountQOS(p *Plan, a tenant.Account, live Account) {
	if a.QOS == nil {
		return // an adopted tenant's account keeps the site's
	}
	var changed bool
	if have := sortedCopy(live.QOS); !slices.Equal(have, a.QOS) {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindAccount, Name: a.Name, Field: "QOS", Old: strings.Join(have, ","), New: strings.Join(a.QOS, ",")})
		changed = true
	}
	if live.DefaultQOS != a.DefaultQOS {
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindAccount, Name: a.Name, Field: "DefaultQOS", Old: live.DefaultQOS, New: a.DefaultQOS})
		changed = true
	}
	if changed || !live.Clustered {
		p.w.acctQOS = append(p.w.acctQOS, acctAssoc(a))
	}
}

// acctAssoc is the account's own association as PutAssocs writes it.
func acctAssoc(a tenant.Account) tenant.Assoc {
	return tenant.Assoc{Account: a.Name, QOS: slices.Clone(a.QOS), DefaultQOS: a.DefaultQOS}
}

// accountDescription returns the description of the live account name.
func accountDescription(accts []Account, name string) string {
	for _, a := range accts {
		if a.Name == name {
			return a.Description
		}
	}
	return ""
}

// subAccount is an account under a tenant's account.
type subAccount struct{ name, tenant string }

// subAccounts returns the accounts whose parent chain reaches the
// account of a tenant gpubridge created (ours, not adopted: an adopted
// site account keeps its own hierarchy), deepest first. gpubridge makes
// none: one is what a Slurm coordinator of the tenant (or a site admin)
// added, and its jobs would run outside the tenant's users (and, before
// the account's association carried the tenant QOS, outside its quota).
func subAccounts(accts []Account, ours, adopted map[string]bool) []subAccount {
	parent := map[string]string{}
	for _, a := range accts {
		parent[a.Name] = a.Parent
	}
	var out []subAccount
	depth := map[string]int{}
	for _, a := range accts {
		if ours[a.Name] {
			continue
		}
		up := a.Parent
		for d := 1; up != "" && up != "root" && d <= len(accts); d++ {
			if ours[up] {
				if !adopted[up] {
					out = append(out, subAccount{a.Name, up})
					depth[a.Name] = d
				}
				break
			}
			up = parent[up]
		}
	}
	slices.SortFunc(out, func(x, y subAccount) int {
		if c := depth[y.name] - depth[x.name]; c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	return out
}

// deletionOwner is the tenant whose objects a deletion removes (an
// account's name, or a QOS's owner); staying: a user association of a
// tenant that stays.
type deletionOwner struct {
	owner   string
	staying bool
}

// holdBack takes out of p's writes the deletions the delete policy
// refused (and the default account changes made for them) and marks their
// changes; the rest of the plan, other tenants' deletions included, is
// applied.
func holdBack(p *Plan, owners map[int]deletionOwner, defaultOwners []deletionOwner) {
	m := p.MassDelete
	held := func(o deletionOwner) bool { return m.holds(o.owner, o.staying) }
	assocOwner := func(k AssocKey) deletionOwner {
		return deletionOwner{k.Account, !slices.Contains(p.w.deleteAccts, k.Account)}
	}
	p.w.deleteAssocs = slices.DeleteFunc(p.w.deleteAssocs, func(k AssocKey) bool { return held(assocOwner(k)) })
	var defaults []tenant.User
	for i, u := range p.w.setDefaults {
		if !held(defaultOwners[i]) {
			defaults = append(defaults, u)
		}
	}
	p.w.setDefaults = defaults
	p.w.deleteAccts = slices.DeleteFunc(p.w.deleteAccts, func(n string) bool { return held(deletionOwner{owner: n}) })
	p.w.deleteQOS = slices.DeleteFunc(p.w.deleteQOS, func(n string) bool { return held(deletionOwner{owner: qosOwner(p.naming, n)}) })
	// A tenant whose objects stay is not finished.
	p.Removed = slices.DeleteFunc(p.Removed, func(n string) bool { return slices.Contains(m.Held, n) })
	p.Released = slices.DeleteFunc(p.Released, func(n string) bool { return slices.Contains(m.Held, n) })
	for i := range p.Changes {
		if o, ok := owners[i]; ok && held(o) {
			p.Changes[i].HeldBack = true
			m.HeldBack++
		}
	}
}

// FlagRequiredReservation is Slurm's QOS flag of a reservation QOS
// (REQUIRED_RESERVATION; sacctmgr shows RequiresReservation).
const FlagRequiredReservation = "REQUIRED_RESERVATION"

func requiresResv(b bool) string {
	if b {
		return FlagRequiredReservation
	}
	return ""
}

// adoptHint says how to get out of a conflict: the store holds tenant
// name (that is why it is planned), so `import` alone would answer
// "already a tenant"; deleting the tenant first drops it from the store
// without touching the site's objects (they are not gpubridge's), and
// import then adopts them.
func adoptHint(name string) string {
	return fmt.Sprintf("to make the site's objects tenant %s, run `gpubridge delete tenant %s`, `gpubridge apply` (drops it from the store and leaves the site's objects alone), then `gpubridge import %s`; or rename the tenant in the store", name, name, name)
}

func blocked(b bool) string {
	if b {
		return "0"
	}
	return ""
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
