package slurmadapter

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
)

func keys(s string) []reconcile.AssocKey {
	var out []reconcile.AssocKey
	for _, f := range strings.Fields(s) {
		a, u, _ := strings.Cut(f, "/")
		out = append(out, reconcile.AssocKey{Account: a, User: u})
	}
	return out
}

func live(s string) *liveAssocs {
	l := newLiveAssocs()
	for _, k := range keys(s) {
		l.add(k)
	}
	return l
}

// removes is what the batch's filter (accounts x users) removes among the
// live associations.
func removes(l *liveAssocs, b assocBatch) []string {
	var out []string
	for _, a := range b.accounts {
		for _, u := range b.users {
			if l.pairs[reconcile.AssocKey{Account: a, User: u}] {
				out = append(out, a+"/"+u)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestAssocBatches: every batch's filter removes exactly its keys (never
// an association that stays), a user who loses all associations loses
// them in one batch (Slurm's 7009 otherwise), and whole tenants go in few
// batches.
func TestAssocBatches(t *testing.T) {
	cases := map[string]struct {
		live, del string
		batches   int // at most
	}{
		// Two tenants share sam, who has no other association: deleting both
		// tenants must take sam's two associations in one request.
		"shared user, both tenants deleted": {
			live: "a/sam a/u1 b/sam b/u2 c/u3", del: "a/sam a/u1 b/sam b/u2", batches: 1,
		},
		// sam stays in c: a and b go, c/sam stays.
		"shared user keeps another": {
			live: "a/sam a/u1 b/sam b/u2 c/sam", del: "a/sam a/u1 b/sam b/u2", batches: 2,
		},
		// One user leaves a tenant whose other users stay.
		"one user leaves": {
			live: "a/u1 a/u2 a/u3", del: "a/u2", batches: 1,
		},
		// A cross product would take x/u1, which stays.
		"cross product would over-delete": {
			live: "a/u1 b/u2 b/u1x a/u2x x/u1", del: "a/u1 b/u2", batches: 2,
		},
		"many tenants": {
			live: func() string {
				var b strings.Builder
				for i := range 300 {
					fmt.Fprintf(&b, "t%03d/t%03da t%03d/t%03db ", i, i, i, i)
				}
				return b.String()
			}(),
			del: func() string {
				var b strings.Builder
				for i := range 300 {
					fmt.Fprintf(&b, "t%03d/t%03da t%03d/t%03db ", i, i, i, i)
				}
				return b.String()
			}(),
			batches: 2, // 900 names, 800 a request
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l := live(c.live)
			del := keys(c.del)
			bs := l.batches(del, maxBatchNames)
			if len(bs) > c.batches {
				t.Errorf("%d batches; want at most %d", len(bs), c.batches)
			}
			var all []string
			userBatch := map[string]int{}
			for i, b := range bs {
				var want []string
				for _, k := range b.keys {
					want = append(want, k.Account+"/"+k.User)
				}
				slices.Sort(want)
				if got := removes(l, b); !slices.Equal(got, want) {
					t.Errorf("batch %d (accounts %v x users %v) removes %v; want exactly %v", i, b.accounts, b.users, got, want)
				}
				all = append(all, want...)
				for _, k := range b.keys {
					if j, ok := userBatch[k.User]; ok && j != i && losesAll(l, k.User, del) {
						t.Errorf("user %s loses all associations over batches %d and %d", k.User, j, i)
					}
					userBatch[k.User] = i
				}
			}
			var want []string
			for _, k := range del {
				want = append(want, k.Account+"/"+k.User)
			}
			slices.Sort(all)
			slices.Sort(want)
			if !slices.Equal(all, want) {
				t.Errorf("batches remove %v; want %v", all, want)
			}
		})
	}
}

func losesAll(l *liveAssocs, user string, del []reconcile.AssocKey) bool {
	for _, a := range l.byUser[user] {
		if !slices.Contains(del, reconcile.AssocKey{Account: a, User: user}) {
			return false
		}
	}
	return true
}
