package reconciletest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Cluster is the fake. The zero value is an empty cluster.
type Cluster struct {
	mu     sync.Mutex
	qos    map[string]tenant.QOS
	accts  map[string]*reconcile.Account
	assocs map[reconcile.AssocKey]tenant.Assoc
	users  map[string]string // user -> default account
	// Jobs are returned by ActiveJobs (filtered by account).
	Jobs []reconcile.JobCount
	// FailOn makes the named Writer method fail as an unreachable
	// slurmrestd would (error injection: not a Refusal, the apply stops).
	FailOn string
	// Refuse makes any batch holding one of these objects (named as
	// reconcile names them: a QOS, account or user name, "user (account)"
	// for an association to delete) be refused whole, as Slurm refuses a
	// request, with the value as Slurm's message.
	Refuse map[string]string

	Reads, Writes int
}

var _ reconcile.Cluster = (*Cluster)(nil)

func (c *Cluster) init() {
	if c.qos == nil {
		c.qos = map[string]tenant.QOS{"normal": {Name: "normal", Description: "Normal QOS default", GrpTRES: tenant.TRES{}}}
		c.accts = map[string]*reconcile.Account{}
		c.assocs = map[reconcile.AssocKey]tenant.Assoc{}
		c.users = map[string]string{}
	}
}

// Seed adds objects as a site admin would (unmarked unless the description says so).
func (c *Cluster) Seed(qos []tenant.QOS, accts []reconcile.Account, assocs []tenant.Assoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	for _, q := range qos {
		if q.GrpTRES == nil {
			q.GrpTRES = tenant.TRES{}
		}
		c.qos[q.Name] = q
	}
	for _, a := range accts {
		a := a
		c.accts[a.Name] = &a
	}
	for _, a := range assocs {
		c.assocs[reconcile.AssocKey{Account: a.Account, User: a.User}] = a
		if _, ok := c.users[a.User]; !ok {
			c.users[a.User] = a.Account
		}
	}
}

// SetGrpTRES changes a QOS behind gpubridge's back (drift).
func (c *Cluster) SetGrpTRES(qos string, t tenant.TRES) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, ok := c.qos[qos]
	if !ok {
		return
	}
	q.GrpTRES = maps.Clone(t)
	c.qos[qos] = q
}

// SetRequiresReservation sets or clears a QOS's REQUIRED_RESERVATION flag
// behind gpubridge's back (drift).
func (c *Cluster) SetRequiresReservation(qos string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.qos[qos]; ok {
		q.RequiresReservation = on
		c.qos[qos] = q
	}
}

// ReadState implements reconcile.Reader: three reads.
func (c *Cluster) ReadState(ctx context.Context) (reconcile.State, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.Reads += 3
	var st reconcile.State
	for _, n := range slices.Sorted(maps.Keys(c.qos)) {
		q := c.qos[n]
		q.GrpTRES = maps.Clone(q.GrpTRES)
		q.Shared = false
		st.QOS = append(st.QOS, q)
	}
	for _, n := range slices.Sorted(maps.Keys(c.accts)) {
		a := *c.accts[n]
		a.Coordinators = slices.Clone(a.Coordinators)
		slices.Sort(a.Coordinators)
		if own, ok := c.assocs[reconcile.AssocKey{Account: n}]; ok { // the account's own association
			a.QOS, a.DefaultQOS = slices.Sorted(slices.Values(own.QOS)), own.DefaultQOS
		}
		if a.Parent == "" && a.Clustered {
			a.Parent = "root"
		}
		st.Accounts = append(st.Accounts, a)
	}
	keys := slices.SortedFunc(maps.Keys(c.assocs), func(a, b reconcile.AssocKey) int {
		return strings.Compare(a.Account+"/"+a.User, b.Account+"/"+b.User)
	})
	for _, k := range keys {
		a := c.assocs[k]
		if k.User == "" {
			continue // an account's own association (above)
		}
		a.QOS = slices.Clone(a.QOS)
		st.Assocs = append(st.Assocs, reconcile.Assoc{Assoc: a, IsDefault: c.users[a.User] == a.Account})
	}
	return st, nil
}

// ActiveJobs implements reconcile.Reader: one read.
func (c *Cluster) ActiveJobs(ctx context.Context, accounts []string) ([]reconcile.JobCount, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Reads++
	var out []reconcile.JobCount
	for _, j := range c.Jobs {
		if slices.Contains(accounts, j.Account) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (c *Cluster) write(method string, names ...string) error {
	c.init()
	c.Writes++
	if c.FailOn == method {
		return fmt.Errorf("fake: %s failed (injected)", method)
	}
	for _, n := range names {
		if msg, ok := c.Refuse[n]; ok {
			return Refusal{Msg: fmt.Sprintf("fake: %s refused: %s", method, msg), Objects: []string{n}}
		}
	}
	return nil
}

// Refusal is the fake's reconcile.Refusal: Slurm refused a batch whole.
type Refusal struct {
	Msg     string
	Objects []string
}

func (r Refusal) Error() string        { return r.Msg }
func (r Refusal) Refused() bool        { return true }
func (r Refusal) Concerning() []string { return r.Objects }
func refuse(objects []string, format string, a ...any) error {
	return Refusal{Msg: "fake: " + fmt.Sprintf(format, a...), Objects: objects}
}

// Partial is the fake's reconcile.PartlyWritten: a pipelined delete of
// which some requests failed.
type Partial struct {
	Msgs   []string
	Failed []string
}

func (p Partial) Error() string        { return strings.Join(p.Msgs, "; ") }
func (p Partial) NotWritten() []string { return p.Failed }

func (p *Partial) add(name, format string, a ...any) {
	p.Failed = append(p.Failed, name)
	p.Msgs = append(p.Msgs, "fake: "+fmt.Sprintf(format, a...))
}

func (p *Partial) err() error {
	if len(p.Failed) == 0 {
		return nil
	}
	return *p
}

// PutQOS implements reconcile.Writer.
func (c *Cluster) PutQOS(ctx context.Context, qs []reconcile.QOSWrite) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, w := range qs {
		names = append(names, w.Name)
	}
	if err := c.write("PutQOS", names...); err != nil {
		return err
	}
	for _, w := range qs {
		for _, v := range w.GrpTRES {
			if v < 0 {
				return refuse([]string{w.Name}, "negative TRES count")
			}
		}
	}
	for _, w := range qs {
		q, ok := c.qos[w.Name]
		if !ok {
			q = tenant.QOS{Name: w.Name, GrpTRES: tenant.TRES{}}
		}
		q.Description = w.Description
		maps.Copy(q.GrpTRES, w.GrpTRES) // Slurm merges TRES limits
		for _, k := range w.ClearTRES {
			delete(q.GrpTRES, k)
		}
		q.SubmitBlocked = w.SubmitBlocked
		q.RequiresReservation = w.RequiresReservation // Slurm replaces a QOS's flags on every write
		c.qos[w.Name] = q
	}
	return nil
}

// CreateAccounts implements reconcile.Writer.
func (c *Cluster) CreateAccounts(ctx context.Context, as []tenant.Account) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	if err := c.write("CreateAccounts", names...); err != nil {
		return err
	}
	for _, a := range as {
		if old, ok := c.accts[a.Name]; ok {
			old.Clustered = true // existing records are not changed
			continue
		}
		c.accts[a.Name] = &reconcile.Account{Account: a, Clustered: true}
	}
	return nil
}

// ModifyAccounts implements reconcile.Writer.
func (c *Cluster) ModifyAccounts(ctx context.Context, as []tenant.Account) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	if err := c.write("ModifyAccounts", names...); err != nil {
		return err
	}
	for _, a := range as {
		if _, ok := c.accts[a.Name]; !ok {
			return refuse([]string{a.Name}, "account %s does not exist", a.Name)
		}
	}
	for _, a := range as {
		old := c.accts[a.Name]
		old.Description, old.Organization = a.Description, a.Organization
	}
	return nil
}

// CreateUsers implements reconcile.Writer.
func (c *Cluster) CreateUsers(ctx context.Context, us []tenant.User) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, u := range us {
		names = append(names, u.Name)
	}
	if err := c.write("CreateUsers", names...); err != nil {
		return err
	}
	for _, u := range us {
		if _, ok := c.users[u.Name]; !ok {
			c.users[u.Name] = u.DefaultAccount
		}
	}
	return nil
}

// SetDefaultAccounts implements reconcile.Writer.
func (c *Cluster) SetDefaultAccounts(ctx context.Context, us []tenant.User) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, u := range us {
		names = append(names, u.Name)
	}
	if err := c.write("SetDefaultAccounts", names...); err != nil {
		return err
	}
	for _, u := range us {
		if _, ok := c.assocs[reconcile.AssocKey{Account: u.DefaultAccount, User: u.Name}]; !ok {
			return refuse([]string{u.Name}, "user %s has no association with %s to make its default", u.Name, u.DefaultAccount)
		}
	}
	for _, u := range us {
		c.users[u.Name] = u.DefaultAccount
	}
	return nil
}

// PutAssocs implements reconcile.Writer.
func (c *Cluster) PutAssocs(ctx context.Context, as []tenant.Assoc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, a := range as {
		names = append(names, a.User)
	}
	if err := c.write("PutAssocs", names...); err != nil {
		return err
	}
	// All or nothing, as one request. Slurm needs no user record for an
	// association; a user without a default account gets this one.
	for _, a := range as {
		acct, ok := c.accts[a.Account]
		if !ok || !acct.Clustered {
			return fmt.Errorf("fake: account %s has no cluster association", a.Account)
		}
		for _, q := range a.QOS {
			if _, ok := c.qos[q]; !ok {
				return refuse([]string{a.User}, "QOS %s does not exist", q)
			}
		}
	}
	for _, a := range as {
		a.QOS = slices.Clone(a.QOS)
		c.assocs[reconcile.AssocKey{Account: a.Account, User: a.User}] = a
		if d, ok := c.users[a.User]; a.User != "" && (!ok || d == "") {
			c.users[a.User] = a.Account
		}
	}
	return nil
}

// AddCoordinators implements reconcile.Writer.
func (c *Cluster) AddCoordinators(ctx context.Context, cs []tenant.Coord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, co := range cs {
		names = append(names, co.User)
	}
	if err := c.write("AddCoordinators", names...); err != nil {
		return err
	}
	for _, co := range cs {
		if _, ok := c.accts[co.Account]; !ok {
			return refuse([]string{co.User}, "account %s does not exist", co.Account)
		}
		if _, ok := c.users[co.User]; !ok {
			return refuse([]string{co.User}, "user %s does not exist", co.User)
		}
	}
	for _, co := range cs {
		a := c.accts[co.Account]
		if !slices.Contains(a.Coordinators, co.User) {
			a.Coordinators = append(a.Coordinators, co.User)
		}
	}
	return nil
}

// RemoveCoordinators implements reconcile.Writer.
func (c *Cluster) RemoveCoordinators(ctx context.Context, cs []tenant.Coord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, co := range cs {
		names = append(names, co.User)
	}
	if err := c.write("RemoveCoordinators", names...); err != nil {
		return err
	}
	for _, co := range cs {
		if a, ok := c.accts[co.Account]; ok {
			a.Coordinators = slices.DeleteFunc(a.Coordinators, func(u string) bool { return u == co.User })
		}
	}
	return nil
}

// DeleteAssocs implements reconcile.Writer as one request: refused whole
// when an association has active jobs, or when it removes a user's
// default association but not all of the user's associations (Slurm's
// error 7009).
func (c *Cluster) DeleteAssocs(ctx context.Context, ks []reconcile.AssocKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	gone := map[reconcile.AssocKey]bool{}
	for _, k := range ks {
		names = append(names, k.String())
		gone[k] = true
	}
	if err := c.write("DeleteAssocs", names...); err != nil {
		return err
	}
	for _, k := range ks {
		if c.hasJobs(k.Account, k.User) {
			return refuse([]string{k.String()}, "association %s has active jobs", k)
		}
		if c.users[k.User] == k.Account && c.keepsOthers(k.User, gone) {
			return refuse([]string{k.String()}, "You can not remove the default account of a user (%s of %s)", k.Account, k.User)
		}
	}
	for _, k := range ks {
		delete(c.assocs, k)
		if !c.keepsOthers(k.User, nil) {
			c.users[k.User] = "" // a user record without associations
		}
	}
	return nil
}

// DeleteAccounts implements reconcile.Writer with one request per
// account, as slurmrestd needs: an account with active jobs, or whose
// removal would take a user's default association while the user keeps
// others (7009), is not deleted; the others are (Partial).
func (c *Cluster) DeleteAccounts(ctx context.Context, names []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("DeleteAccounts", names...); err != nil {
		return err
	}
	var p Partial
	for _, n := range names {
		if c.hasJobs(n, "") {
			p.add(n, "account %s has active jobs", n)
			continue
		}
		gone := map[reconcile.AssocKey]bool{}
		for k := range c.assocs {
			if k.Account == n {
				gone[k] = true
			}
		}
		refused := false
		for k := range gone {
			if c.users[k.User] == n && c.keepsOthers(k.User, gone) {
				p.add(n, "delete account %s: You can not remove the default account of a user (%s)", n, k.User)
				refused = true
				break
			}
		}
		if refused {
			continue
		}
		delete(c.accts, n)
		for k := range gone {
			delete(c.assocs, k)
			if k.User != "" && !c.keepsOthers(k.User, nil) {
				c.users[k.User] = ""
			}
		}
	}
	return p.err()
}

// DeleteQOS implements reconcile.Writer with one request per QOS; a QOS
// that associations still name is not deleted (a check of the plan's
// order: Slurm would drop it from their lists).
func (c *Cluster) DeleteQOS(ctx context.Context, names []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("DeleteQOS", names...); err != nil {
		return err
	}
	var p Partial
outer:
	for _, n := range names {
		for _, a := range c.assocs {
			if slices.Contains(a.QOS, n) {
				p.add(n, "QOS %s is used by association %s", n, a.Key())
				continue outer
			}
		}
		delete(c.qos, n)
	}
	return p.err()
}

// keepsOthers reports whether user has an association not in gone.
func (c *Cluster) keepsOthers(user string, gone map[reconcile.AssocKey]bool) bool {
	for k := range c.assocs {
		if k.User == user && !gone[k] {
			return true
		}
	}
	return false
}

func (c *Cluster) hasJobs(account, user string) bool {
	for _, j := range c.Jobs {
		if j.Account == account && (user == "" || j.User == user) && j.Running+j.Pending > 0 {
			return true
		}
	}
	return false
}

// QOS returns one QOS (tests).
func (c *Cluster) QOS(name string) (tenant.QOS, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	q, ok := c.qos[name]
	return q, ok
}

// DefaultAccount returns a user's default account (tests).
func (c *Cluster) DefaultAccount(user string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.users[user]
}

// ResetCounts zeroes Reads and Writes.
func (c *Cluster) ResetCounts() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Reads, c.Writes = 0, 0
}

// Loading is the fake with an AssocLoader (a writer that creates users
// with their associations, as sacctmgr load does) and an AccountDropper;
// Loads counts its loads and Loaded the associations they carried.
type Loading struct {
	*Cluster
	Loads, Loaded int
}

var _ reconcile.AssocLoader = (*Loading)(nil)

// LoadAssocs implements reconcile.AssocLoader: all or nothing, as one
// load file; a new user must come with its default account, and an
// existing user's default stays.
func (l *Loading) LoadAssocs(ctx context.Context, as []reconcile.NewAssoc) error {
	c := l.Cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, a := range as {
		names = append(names, a.User)
	}
	if err := c.write("LoadAssocs", names...); err != nil {
		return err
	}
	for _, a := range as {
		acct, ok := c.accts[a.Account]
		if !ok || !acct.Clustered {
			return fmt.Errorf("fake: account %s has no cluster association", a.Account)
		}
		if _, exists := c.users[a.User]; exists == (a.DefaultAccount != "") {
			return fmt.Errorf("fake: user %s: DefaultAccount %q given for a user that exists=%v", a.User, a.DefaultAccount, exists)
		}
		for _, q := range a.QOS {
			if _, ok := c.qos[q]; !ok {
				return refuse([]string{a.User}, "QOS %s does not exist", q)
			}
		}
	}
	l.Loads++
	l.Loaded += len(as)
	for _, a := range as {
		c.assocs[reconcile.AssocKey{Account: a.Account, User: a.User}] = tenant.Assoc{Account: a.Account, User: a.User, QOS: slices.Clone(a.QOS), DefaultQOS: a.DefaultQOS}
		if a.DefaultAccount != "" {
			c.users[a.User] = a.DefaultAccount
		}
	}
	return nil
}

// DropsUserAssocs implements reconcile.AccountDropper: the fake's
// DeleteAccounts removes an account's associations with it.
func (l *Loading) DropsUserAssocs(int) bool { return true }
