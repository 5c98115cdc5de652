package reconciletest

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
	// FailOn makes the named Writer method fail (error injection).
	FailOn string

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
		st.Accounts = append(st.Accounts, a)
	}
	keys := slices.SortedFunc(maps.Keys(c.assocs), func(a, b reconcile.AssocKey) int {
		return strings.Compare(a.Account+"/"+a.User, b.Account+"/"+b.User)
	})
	for _, k := range keys {
		a := c.assocs[k]
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

func (c *Cluster) write(method string) error {
	c.init()
	c.Writes++
	if c.FailOn == method {
		return fmt.Errorf("fake: %s failed (injected)", method)
	}
	return nil
}

// PutQOS implements reconcile.Writer.
func (c *Cluster) PutQOS(ctx context.Context, qs []reconcile.QOSWrite) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("PutQOS"); err != nil {
		return err
	}
	for _, w := range qs {
		for _, v := range w.GrpTRES {
			if v < 0 {
				return errors.New("fake: negative TRES count")
			}
		}
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
	if err := c.write("CreateAccounts"); err != nil {
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
	if err := c.write("ModifyAccounts"); err != nil {
		return err
	}
	for _, a := range as {
		old, ok := c.accts[a.Name]
		if !ok {
			return fmt.Errorf("fake: account %s does not exist", a.Name)
		}
		old.Description, old.Organization = a.Description, a.Organization
	}
	return nil
}

// CreateUsers implements reconcile.Writer.
func (c *Cluster) CreateUsers(ctx context.Context, us []tenant.User) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("CreateUsers"); err != nil {
		return err
	}
	for _, u := range us {
		c.users[u.Name] = u.DefaultAccount
	}
	return nil
}

// SetDefaultAccounts implements reconcile.Writer.
func (c *Cluster) SetDefaultAccounts(ctx context.Context, us []tenant.User) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("SetDefaultAccounts"); err != nil {
		return err
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
	if err := c.write("PutAssocs"); err != nil {
		return err
	}
	for _, a := range as {
		acct, ok := c.accts[a.Account]
		if !ok || !acct.Clustered {
			return fmt.Errorf("fake: account %s has no cluster association", a.Account)
		}
		if _, ok := c.users[a.User]; !ok {
			return fmt.Errorf("fake: user %s does not exist", a.User)
		}
		for _, q := range a.QOS {
			if _, ok := c.qos[q]; !ok {
				return fmt.Errorf("fake: QOS %s does not exist", q)
			}
		}
		a.QOS = slices.Clone(a.QOS)
		c.assocs[reconcile.AssocKey{Account: a.Account, User: a.User}] = a
	}
	return nil
}

// AddCoordinators implements reconcile.Writer.
func (c *Cluster) AddCoordinators(ctx context.Context, cs []tenant.Coord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("AddCoordinators"); err != nil {
		return err
	}
	for _, co := range cs {
		a, ok := c.accts[co.Account]
		if !ok {
			return fmt.Errorf("fake: account %s does not exist", co.Account)
		}
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
	if err := c.write("RemoveCoordinators"); err != nil {
		return err
	}
	for _, co := range cs {
		if a, ok := c.accts[co.Account]; ok {
			a.Coordinators = slices.DeleteFunc(a.Coordinators, func(u string) bool { return u == co.User })
		}
	}
	return nil
}

// DeleteAssocs implements reconcile.Writer.
func (c *Cluster) DeleteAssocs(ctx context.Context, ks []reconcile.AssocKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("DeleteAssocs"); err != nil {
		return err
	}
	for _, k := range ks {
		if c.hasJobs(k.Account, k.User) {
			return fmt.Errorf("fake: association %s has active jobs", k)
		}
		if c.users[k.User] == k.Account && c.otherAssocs(k) {
			return fmt.Errorf("fake: %s is the default account of %s", k.Account, k.User)
		}
		delete(c.assocs, k)
	}
	return nil
}

// DeleteAccounts implements reconcile.Writer.
func (c *Cluster) DeleteAccounts(ctx context.Context, names []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("DeleteAccounts"); err != nil {
		return err
	}
	for _, n := range names {
		if c.hasJobs(n, "") {
			return fmt.Errorf("fake: account %s has active jobs", n)
		}
		delete(c.accts, n)
		for k := range c.assocs {
			if k.Account == n {
				delete(c.assocs, k)
			}
		}
	}
	return nil
}

// DeleteQOS implements reconcile.Writer.
func (c *Cluster) DeleteQOS(ctx context.Context, names []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write("DeleteQOS"); err != nil {
		return err
	}
	for _, n := range names {
		for _, a := range c.assocs {
			if slices.Contains(a.QOS, n) {
				return fmt.Errorf("fake: QOS %s is used by association %s", n, a.Key())
			}
		}
		delete(c.qos, n)
	}
	return nil
}

func (c *Cluster) hasJobs(account, user string) bool {
	for _, j := range c.Jobs {
		if j.Account == account && (user == "" || j.User == user) && j.Running+j.Pending > 0 {
			return true
		}
	}
	return false
}

func (c *Cluster) otherAssocs(k reconcile.AssocKey) bool {
	for o := range c.assocs {
		if o.User == k.User && o.Account != k.Account {
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
