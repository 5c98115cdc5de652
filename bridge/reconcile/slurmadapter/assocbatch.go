package slurmadapter

import (
	"slices"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
)

// liveAssocs are the user associations on the cluster, as pairs (account,
// user): what a DELETE associations/ filter (accounts x users) would
// remove besides the ones meant.
type liveAssocs struct {
	pairs  map[reconcile.AssocKey]bool
	byUser map[string][]string // user -> accounts
	byAcct map[string][]string // account -> users
}

func newLiveAssocs() *liveAssocs {
	return &liveAssocs{pairs: map[reconcile.AssocKey]bool{}, byUser: map[string][]string{}, byAcct: map[string][]string{}}
}

func (l *liveAssocs) add(k reconcile.AssocKey) {
	if l.pairs[k] {
		return
	}
	l.pairs[k] = true
	l.byUser[k.User] = append(l.byUser[k.User], k.Account)
	l.byAcct[k.Account] = append(l.byAcct[k.Account], k.User)
}

func (l *liveAssocs) remove(k reconcile.AssocKey) {
	if !l.pairs[k] {
		return
	}
	delete(l.pairs, k)
	l.byUser[k.User] = slices.DeleteFunc(l.byUser[k.User], func(a string) bool { return a == k.Account })
	l.byAcct[k.Account] = slices.DeleteFunc(l.byAcct[k.Account], func(u string) bool { return u == k.User })
}

// assocBatch is one DELETE associations/ request: accounts x users, which
// removes exactly keys among the live associations.
type assocBatch struct {
	accounts, users []string
	keys            []reconcile.AssocKey
}

func (b *assocBatch) names() int { return len(b.accounts) + len(b.users) }

// byAccountRuns is one batch per run of keys of the same account, in the
// order given.
func byAccountRuns(ks []reconcile.AssocKey) []assocBatch {
	var out []assocBatch
	for i := 0; i < len(ks); {
		j := i
		b := assocBatch{accounts: []string{ks[i].Account}}
		for j < len(ks) && ks[j].Account == ks[i].Account {
			b.users = append(b.users, ks[j].User)
			b.keys = append(b.keys, ks[j])
			j++
		}
		out = append(out, b)
		i = j
	}
	return out
}

// batches groups ks (the user associations to delete) into as few
// requests as keep every other live association, with at most maxNames
// names in each (a group that must stay whole may exceed it):
//   - the keys of one account form a group;
//   - a user who loses every live association has all of them in one
//     group (Slurm refuses to remove a default association otherwise), so
//     the groups of that user's accounts are joined;
//   - groups are merged while the cross product of their accounts and
//     users removes nothing that is to stay.
//
// A joined group whose cross product would remove an association that is
// to stay is split into one batch per user who loses everything (that
// user's associations: always exact) and one per account for the rest.
func (l *liveAssocs) batches(ks []reconcile.AssocKey, maxNames int) []assocBatch {
	keys, del := uniqueKeys(ks)
	sets := unionFind{}
	var order []string // accounts in first-seen order
	for _, k := range keys {
		if !sets.has(k.Account) {
			order = append(order, k.Account)
			sets.find(k.Account)
		}
	}
	losesAll := l.joinLosers(keys, del, sets)
	return l.merge(groupKeys(keys, order, sets), del, losesAll, maxNames)
}

// uniqueKeys returns ks without repeats, in first-seen order, and as a set.
func uniqueKeys(ks []reconcile.AssocKey) ([]reconcile.AssocKey, map[reconcile.AssocKey]bool) {
	del := map[reconcile.AssocKey]bool{}
	var keys []reconcile.AssocKey
	for _, k := range ks {
		if !del[k] {
			del[k] = true
			keys = append(keys, k)
		}
	}
	return keys, del
}

// unionFind joins accounts into sets: each account's parent, up to the
// set's root.
type unionFind map[string]string

// has reports whether a is in one of the sets.
func (u unionFind) has(a string) bool { _, ok := u[a]; return ok }

// find returns the root of a's set, adding a alone when new.
func (u unionFind) find(a string) string {
	if p, ok := u[a]; ok && p != a {
		r := u.find(p)
		u[a] = r
		return r
	}
	u[a] = a
	return a
}

// union joins the sets of a and b.
func (u unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		u[rb] = ra
	}
}

// joinLosers finds the users who lose every live association, and joins
// the sets of all their accounts: their associations go in one request.
func (l *liveAssocs) joinLosers(keys []reconcile.AssocKey, del map[reconcile.AssocKey]bool, sets unionFind) map[string]bool {
	losesAll := map[string]bool{}
	for _, k := range keys {
		if losesAll[k.User] {
			continue
		}
		all := true
		for _, a := range l.byUser[k.User] {
			if !del[reconcile.AssocKey{Account: a, User: k.User}] {
				all = false
				break
			}
		}
		if all && len(l.byUser[k.User]) > 0 {
			losesAll[k.User] = true
			first := ""
			for _, a := range l.byUser[k.User] {
				if first == "" {
					first = a
				} else {
					sets.union(first, a)
				}
			}
		}
	}
	return losesAll
}

// groupKeys makes one group per set of accounts, in first-seen order of
// their accounts, holding its accounts, keys and users.
func groupKeys(keys []reconcile.AssocKey, order []string, sets unionFind) []*assocBatch {
	groups := map[string]*assocBatch{}
	var inOrder []*assocBatch
	for _, a := range order {
		r := sets.find(a)
		g := groups[r]
		if g == nil {
			g = &assocBatch{}
			groups[r] = g
			inOrder = append(inOrder, g)
		}
		g.accounts = append(g.accounts, a)
	}
	for _, k := range keys {
		g := groups[sets.find(k.Account)]
		g.keys = append(g.keys, k)
		if !slices.Contains(g.users, k.User) {
			g.users = append(g.users, k.User)
		}
	}
	return inOrder
}

// merge turns the groups into batches: a group whose cross product would
// remove an association that stays is split; the others are merged while
// they fit in maxNames and their cross product stays exact.
func (l *liveAssocs) merge(groups []*assocBatch, del map[reconcile.AssocKey]bool, losesAll map[string]bool, maxNames int) []assocBatch {
	var out []assocBatch
	var cur *assocBatch
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, g := range groups {
		if !l.exact(g.accounts, g.users, del) {
			flush()
			out = append(out, l.split(g, losesAll)...)
			continue
		}
		if cur != nil && cur.names()+g.names() <= maxNames && l.mergeable(cur, g, del) {
			cur.accounts = append(cur.accounts, g.accounts...)
			for _, u := range g.users {
				if !slices.Contains(cur.users, u) {
					cur.users = append(cur.users, u)
				}
			}
			cur.keys = append(cur.keys, g.keys...)
			continue
		}
		flush()
		c := *g
		cur = &c
	}
	flush()
	return out
}

// exact reports whether accounts x users removes only associations in del.
func (l *liveAssocs) exact(accounts, users []string, del map[reconcile.AssocKey]bool) bool {
	in := map[string]bool{}
	for _, u := range users {
		in[u] = true
	}
	for _, a := range accounts {
		for _, u := range l.byAcct[a] {
			if in[u] && !del[reconcile.AssocKey{Account: a, User: u}] {
				return false
			}
		}
	}
	return true
}

// mergeable reports whether b's accounts and users can join a's request:
// the new pairs of the cross product (a's accounts x b's users, b's
// accounts x a's users) remove only associations in del. Both are exact
// on their own.
func (l *liveAssocs) mergeable(a, b *assocBatch, del map[reconcile.AssocKey]bool) bool {
	return l.exactAcross(a.accounts, b.users, del) && l.exactAcross(b.accounts, a.users, del)
}

func (l *liveAssocs) exactAcross(accounts, users []string, del map[reconcile.AssocKey]bool) bool {
	acct := map[string]bool{}
	for _, a := range accounts {
		acct[a] = true
	}
	for _, u := range users {
		for _, a := range l.byUser[u] {
			if acct[a] && !del[reconcile.AssocKey{Account: a, User: u}] {
				return false
			}
		}
	}
	return true
}

// split is a group that cannot be one request: a batch per user who
// loses every association (that user's keys), then a batch per account
// with the others (the keys given, in order: a user's default comes last
// in the plan's order).
func (l *liveAssocs) split(g *assocBatch, losesAll map[string]bool) []assocBatch {
	var out []assocBatch
	done := map[reconcile.AssocKey]bool{}
	for _, u := range g.users {
		if !losesAll[u] {
			continue
		}
		b := assocBatch{users: []string{u}}
		for _, k := range g.keys {
			if k.User == u {
				b.accounts = append(b.accounts, k.Account)
				b.keys = append(b.keys, k)
				done[k] = true
			}
		}
		out = append(out, b)
	}
	var rest []reconcile.AssocKey
	for _, k := range g.keys {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(rest, func(x, y reconcile.AssocKey) int {
		return slices.Index(g.accounts, x.Account) - slices.Index(g.accounts, y.Account)
	})
	return append(out, byAccountRuns(rest)...)
}
