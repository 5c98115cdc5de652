package reconcile

import (
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
func plan(in Input, p *Plan) []string {
	consulted := map[string]bool{}
	acctJobs := map[string]jobTally{}
	assocJobs := map[AssocKey]jobTally{}
	for _, j := range in.Jobs {
		t := acctJobs[j.Account]
		t.running += j.Running
		t.pending += j.Pending
		acctJobs[j.Account] = t
		k := AssocKey{j.Account, j.User}
		u := assocJobs[k]
		u.running += j.Running
		u.pending += j.Pending
		assocJobs[k] = u
	}
	// canRemove reports whether the account (or one user's part of it)
	// has no unfinished job, recording a wait otherwise.
	canRemove := func(kind, name, account string, tally jobTally, reason string) bool {
		consulted[account] = true
		if !in.JobsRead {
			p.Waiting = append(p.Waiting, Wait{Kind: kind, Name: name, Reason: reason + " (job counts not read)"})
			return false
		}
		if tally.any() {
			p.Waiting = append(p.Waiting, Wait{Kind: kind, Name: name, Running: tally.running, Pending: tally.pending, Reason: reason})
			return false
		}
		return true
	}

	// Tenants being deleted go once their account has no unfinished job.
	var keep, released []tenant.Tenant
	adopted := map[string]bool{}
	waitingAccounts := map[string]bool{}
	for _, t := range in.Tenants {
		if t.Adopted { // owned through the store, deleting or not
			adopted[t.Name] = true
			adopted[KindQOS+"/"+in.Naming.QOSName(t.Name)] = true
		}
		if t.Releases() {
			// Released once no job of gpubridge's objects is unfinished:
			// jobs of the users it added, and jobs of the QOS it adds to
			// the associations (see holdsRelease); the site's own users'
			// jobs in the site's own QOS go on.
			var tally jobTally
			for _, j := range in.Jobs {
				if j.Account == t.Name && holdsRelease(t, in.Naming, j) {
					tally.running += j.Running
					tally.pending += j.Pending
				}
			}
			if !canRemove(KindAccount, t.Name, t.Name, tally, "tenant is being released (the site's account and its original users stay); new submissions are blocked; waiting for the jobs of the users and QOS gpubridge added") {
				keep = append(keep, t)
				waitingAccounts[t.Name] = true
				continue
			}
			released = append(released, t)
			p.Removed = append(p.Removed, t.Name)
			p.Released = append(p.Released, t.Name)
			continue
		}
		if t.IsDeleting() {
			if !canRemove(KindAccount, t.Name, t.Name, acctJobs[t.Name], "tenant is being deleted; new submissions are blocked") {
				keep = append(keep, t)
				waitingAccounts[t.Name] = true
				continue
			}
			p.Removed = append(p.Removed, t.Name)
			continue
		}
		keep = append(keep, t)
	}
	want := tenant.Project(keep, in.Naming)
	for _, t := range released {
		releaseObjects(&want, t, in.Naming, in.State)
	}

	// QOS.
	liveQOS := map[string]tenant.QOS{}
	p.liveTRES = map[string]tenant.TRES{}
	for _, q := range in.State.QOS {
		liveQOS[q.Name] = q
		p.liveTRES[q.Name] = q.GrpTRES
	}
	wantQOS := map[string]bool{}
	for _, q := range want.QOS {
		wantQOS[q.Name] = true
		live, ok := liveQOS[q.Name]
		if !ok {
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
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindQOS, Name: q.Name, Detail: detail})
			p.w.qos = append(p.w.qos, QOSWrite{QOS: q, Create: true})
			continue
		}
		if q.Shared {
			continue // used as it is; the burst controller owns its limits
		}
		if !tenant.IsMarked(live.Description) && !adopted[KindQOS+"/"+q.Name] {
			p.Conflicts = append(p.Conflicts, Conflict{KindQOS, q.Name, "exists in Slurm and was not created by gpubridge; " + adoptHint(qosOwner(in.Naming, q.Name))})
			continue
		}
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

	// Accounts.
	liveAcct := map[string]Account{}
	for _, a := range in.State.Accounts {
		liveAcct[a.Name] = a
	}
	ours := map[string]bool{} // accounts gpubridge manages (existing or to be created)
	wantAcct := map[string]bool{}
	for _, a := range want.Accounts {
		wantAcct[a.Name] = true
		live, ok := liveAcct[a.Name]
		if !ok {
			detail := "parent=root Description=" + show(a.Description) + " Organization=" + show(a.Organization)
			if a.QOS != nil {
				detail += " QOS=" + strings.Join(a.QOS, ",") + " DefaultQOS=" + a.DefaultQOS
				p.w.acctQOS = append(p.w.acctQOS, acctAssoc(a))
			}
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindAccount, Name: a.Name, Detail: detail})
			p.w.createAccts = append(p.w.createAccts, a)
			ours[a.Name] = true
			continue
		}
		if !tenant.IsMarked(live.Description) && !adopted[a.Name] {
			p.Conflicts = append(p.Conflicts, Conflict{KindAccount, a.Name, "exists in Slurm and was not created by gpubridge; " + adoptHint(a.Name)})
			continue
		}
		ours[a.Name] = true
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
		planAccountQOS(p, a, live)
	}
	// What the delete policy counts: tenants with objects in Slurm, and
	// the ones this plan deletes.
	del := deletions{live: map[string]bool{}, gone: map[string]bool{}}
	for _, a := range in.State.Accounts {
		if (tenant.IsMarked(a.Description) || adopted[a.Name]) && (in.Scope == nil || in.Scope(a.Name)) {
			del.live[a.Name] = true
		}
	}
	for _, q := range in.State.QOS {
		if (!tenant.IsMarked(q.Description) && !adopted[KindQOS+"/"+q.Name]) || q.Name == in.Naming.OnDemandQOS {
			continue
		}
		owner, ok := in.Naming.QOSOwner(q.Name)
		if in.Scope == nil || ok && in.Scope(owner) {
			del.live[qosOwner(in.Naming, q.Name)] = true
		}
	}

	// gpubridge's accounts that no tenant wants any more.
	var goneAccts []string
	removingAcct := map[string]bool{}
	for _, a := range in.State.Accounts {
		if wantAcct[a.Name] || !tenant.IsMarked(a.Description) && !adopted[a.Name] || (in.Scope != nil && !in.Scope(a.Name)) {
			continue
		}
		if !canRemove(KindAccount, a.Name, a.Name, acctJobs[a.Name], "no tenant wants this gpubridge account") {
			waitingAccounts[a.Name] = true
			continue
		}
		goneAccts = append(goneAccts, a.Name)
		removingAcct[a.Name] = true
	}
	slices.Sort(goneAccts)
	// Sub-accounts under a tenant's account go too (after their jobs).
	strays := subAccounts(in.State.Accounts, ours, adopted)
	for _, sa := range strays {
		if removingAcct[sa.name] || waitingAccounts[sa.name] {
			continue // a gpubridge-marked account no tenant wants: above
		}
		if !canRemove(KindAccount, sa.name, sa.name, acctJobs[sa.name], "sub-account of tenant "+sa.tenant+"; new jobs in it are refused by the guard") {
			waitingAccounts[sa.name] = true
			continue
		}
		goneAccts = append(goneAccts, sa.name)
		removingAcct[sa.name] = true
	}
	strayOf := map[string]string{}
	for _, sa := range strays {
		if !tenant.IsMarked(accountDescription(in.State.Accounts, sa.name)) {
			strayOf[sa.name] = sa.tenant
		}
	}
	p.SubAccounts = strayOf

	// Coordinators of gpubridge's accounts.
	wantCoord := map[tenant.Coord]bool{}
	for _, c := range want.Coords {
		if !ours[c.Account] {
			continue
		}
		wantCoord[c] = true
		if !slices.Contains(liveAcct[c.Account].Coordinators, c.User) {
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindCoordinator, Name: c.Key()})
			p.w.addCoords = append(p.w.addCoords, c)
		}
	}
	for _, a := range in.State.Accounts {
		if !ours[a.Name] {
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

	// User associations and user records.
	owners := map[int]deletionOwner{} // the deletions (and changes made for them) by change
	liveAssoc := map[AssocKey]Assoc{}
	userAssocs := map[string][]Assoc{} // every live association per user
	for _, a := range in.State.Assocs {
		liveAssoc[AssocKey{a.Account, a.User}] = a
		userAssocs[a.User] = append(userAssocs[a.User], a)
	}
	wantAssoc := map[AssocKey]bool{}
	newUsers := map[string]bool{}
	created := map[string][]string{} // user -> accounts gaining an association
	for _, a := range want.Assocs {
		if !ours[a.Account] {
			continue
		}
		k := AssocKey{a.Account, a.User}
		wantAssoc[k] = true
		live, ok := liveAssoc[k]
		if !ok {
			p.Changes = append(p.Changes, Change{Action: Create, Kind: KindUser, Name: a.Key(), Detail: "QOS=" + strings.Join(a.QOS, ",") + " DefaultQOS=" + a.DefaultQOS})
			p.w.putAssocs = append(p.w.putAssocs, a)
			created[a.User] = append(created[a.User], a.Account)
			if len(userAssocs[a.User]) == 0 {
				newUsers[a.User] = true
			}
			continue
		}
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
	for _, u := range want.Users {
		if newUsers[u.Name] {
			p.w.createUsers = append(p.w.createUsers, u)
		}
	}
	// Associations under gpubridge's accounts that no tenant wants.
	removedAssoc := map[AssocKey]bool{}
	for _, a := range in.State.Assocs {
		k := AssocKey{a.Account, a.User}
		managed := ours[a.Account] || removingAcct[a.Account]
		if !managed || wantAssoc[k] || waitingAccounts[a.Account] {
			continue
		}
		if !removingAcct[a.Account] && !canRemove(KindUser, k.String(), a.Account, assocJobs[k], "user leaves the tenant; the guard refuses their new jobs") {
			continue
		}
		removedAssoc[k] = true
		if _, stray := strayOf[a.Account]; !stray {
			owners[len(p.Changes)] = deletionOwner{a.Account, !removingAcct[a.Account]}
		}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindUser, Name: k.String()})
		// Also the associations of accounts being removed: deleted first,
		// in few requests, so that a user who loses all of them loses them
		// in one (Slurm refuses to remove a user's default association
		// while others remain, error 7009, which removing the accounts one
		// by one would do).
		p.w.deleteAssocs = append(p.w.deleteAssocs, k)
		if !removingAcct[a.Account] {
			del.assocs++
		}
	}
	for _, a := range in.State.Assocs {
		if ours[a.Account] && !removingAcct[a.Account] {
			del.assocsAll++
		}
	}
	// A user losing their default account gets another of their
	// associations as default (Slurm refuses to remove a default
	// association while others remain).
	defaultOf := map[string]string{}
	var defaultOwners []deletionOwner // of p.w.setDefaults
	for _, u := range want.Users {
		defaultOf[u.Name] = u.DefaultAccount
	}
	for _, user := range slices.Sorted(maps.Keys(userAssocs)) {
		var lostDefault string
		remaining := slices.Clone(created[user])
		for _, a := range userAssocs[user] {
			if removedAssoc[AssocKey{a.Account, a.User}] {
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
		o := deletionOwner{lostDefault, !removingAcct[lostDefault]}
		owners[len(p.Changes)] = o
		p.Changes = append(p.Changes, Change{Action: Modify, Kind: KindUser, Name: user, Field: "DefaultAccount", Old: lostDefault, New: next})
		p.w.setDefaults = append(p.w.setDefaults, tenant.User{Name: user, DefaultAccount: next})
		defaultOwners = append(defaultOwners, o)
	}
	// A user's default association is deleted last: Slurm refuses it while
	// the user has others.
	slices.SortStableFunc(p.w.deleteAssocs, func(x, y AssocKey) int {
		dx, dy := liveAssoc[x].IsDefault, liveAssoc[y].IsDefault
		switch {
		case dx == dy:
			return 0
		case dy:
			return -1
		}
		return 1
	})
	for _, n := range goneAccts {
		if t, ok := strayOf[n]; ok {
			// Not a tenant's deletion: the policy does not count it.
			p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindAccount, Name: n, Detail: "sub-account of tenant " + t + ": tenants have none (its jobs would escape the tenant's users and quota)"})
			p.w.deleteAccts = append(p.w.deleteAccts, n)
			continue
		}
		owners[len(p.Changes)] = deletionOwner{owner: n}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindAccount, Name: n})
		p.w.deleteAccts = append(p.w.deleteAccts, n)
		del.gone[n] = true
	}

	// gpubridge's QOS that no tenant wants (a tenant QOS waits for its
	// account's jobs).
	for _, q := range in.State.QOS {
		if wantQOS[q.Name] || !tenant.IsMarked(q.Description) && !adopted[KindQOS+"/"+q.Name] || q.Name == in.Naming.OnDemandQOS {
			continue
		}
		owner, ok := in.Naming.QOSOwner(q.Name)
		if ok && waitingAccounts[owner] || in.Scope != nil && (!ok || !in.Scope(owner)) {
			continue
		}
		owners[len(p.Changes)] = deletionOwner{owner: qosOwner(in.Naming, q.Name)}
		p.Changes = append(p.Changes, Change{Action: Delete, Kind: KindQOS, Name: q.Name})
		p.w.deleteQOS = append(p.w.deleteQOS, q.Name)
		del.gone[qosOwner(in.Naming, q.Name)] = true
	}
	slices.Sort(p.Removed)
	slices.Sort(p.Released)
	if in.Deletes != nil {
		p.MassDelete = in.Deletes.check(del, in.Tenants)
	}
	switch {
	case len(p.Conflicts) > 0:
		p.w = writes{} // a plan with conflicts is not applied
	case p.Refused():
		holdBack(p, owners, defaultOwners)
	}
	return slices.Sorted(maps.Keys(consulted))
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
