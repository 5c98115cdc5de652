package slurmadapter

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
)

// Sacctmgr is what Bulk needs of *sacctmgr.Runner: each call returns the
// objects it did not write, with its error.
type Sacctmgr interface {
	LoadAssocs(ctx context.Context, assocs []sacctmgr.Assoc) ([]sacctmgr.Assoc, error)
	DeleteQOS(ctx context.Context, names []string) ([]string, error)
	DeleteAccounts(ctx context.Context, names []string) ([]string, error)
}

var _ Sacctmgr = (*sacctmgr.Runner)(nil)

// Bulk is the Adapter with sacctmgr for the batches that slurmrestd writes
// one object at a time (docs/scale.md): new user associations with their
// new users (reconcile.AssocLoader), and QOS and account deletes, from
// From objects on. Everything else (accounts are created through
// slurmrestd: a load file lowercases descriptions), smaller batches, and
// objects a load file cannot carry exactly go through slurmrestd; so
// does a batch sacctmgr failed on (logged), which then ends as slurmrestd
// ends it (written, or refused with Slurm's errors).
type Bulk struct {
	*Adapter
	s    Sacctmgr
	from int
	log  *slog.Logger
}

var (
	_ reconcile.Cluster        = (*Bulk)(nil)
	_ reconcile.AssocLoader    = (*Bulk)(nil)
	_ reconcile.AccountDropper = (*Bulk)(nil)
)

// DefaultBulkFrom is the smallest batch Bulk sends to sacctmgr: a command
// costs about as much as 20 objects through slurmrestd (docs/scale.md).
const DefaultBulkFrom = 20

// WithSacctmgr returns the adapter with s for batches of from objects or
// more (0: DefaultBulkFrom); log (nil: discarded) gets the failures that
// sent a batch to slurmrestd instead.
func (a *Adapter) WithSacctmgr(s Sacctmgr, from int, log *slog.Logger) *Bulk {
	if from <= 0 {
		from = DefaultBulkFrom
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bulk{Adapter: a, s: s, from: from, log: log}
}

func (b *Bulk) fellBack(what string, n int, err error) {
	b.log.Warn("sacctmgr failed; writing through slurmrestd instead", "batch", what, "objects", n, "error", err)
}

// LoadAssocs implements reconcile.AssocLoader: loads of the associations
// (a new user's line carries its default account), at once.
func (b *Bulk) LoadAssocs(ctx context.Context, as []reconcile.NewAssoc) error {
	if len(as) < b.from {
		return b.rest(ctx, as)
	}
	conv := make([]sacctmgr.Assoc, len(as))
	unloadable := map[string]bool{} // users with one association a file cannot carry: all of theirs go by REST
	for i, a := range as {
		conv[i] = toLoad(a)
		if !sacctmgr.AssocLoadable(conv[i]) {
			unloadable[a.User] = true
		}
	}
	var load []sacctmgr.Assoc
	var rest []reconcile.NewAssoc
	for i, a := range as {
		if unloadable[a.User] {
			rest = append(rest, a)
		} else {
			load = append(load, conv[i])
		}
	}
	failed, err := b.s.LoadAssocs(ctx, load)
	if err != nil {
		b.fellBack("create user associations and users", len(failed), err)
	}
	for _, f := range failed {
		rest = append(rest, reconcile.NewAssoc{Assoc: tenant.Assoc{Account: f.Account, User: f.User, QOS: f.QOS, DefaultQOS: f.DefaultQOS}, DefaultAccount: f.DefaultAccount})
	}
	return b.rest(ctx, rest)
}

func toLoad(a reconcile.NewAssoc) sacctmgr.Assoc {
	return sacctmgr.Assoc{Account: a.Account, User: a.User, QOS: a.QOS, DefaultQOS: a.DefaultQOS, DefaultAccount: a.DefaultAccount}
}

// rest writes new associations through slurmrestd: the new users' records
// and the associations at once (Slurm needs no user record for an
// association).
func (b *Bulk) rest(ctx context.Context, as []reconcile.NewAssoc) error {
	if len(as) == 0 {
		return nil
	}
	var users []tenant.User
	seen := map[string]bool{}
	assocs := make([]tenant.Assoc, 0, len(as))
	for _, a := range as {
		assocs = append(assocs, a.Assoc)
		if a.DefaultAccount != "" && !seen[a.User] {
			seen[a.User] = true
			users = append(users, tenant.User{Name: a.User, DefaultAccount: a.DefaultAccount})
		}
	}
	var wg sync.WaitGroup
	var uerr error
	if len(users) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); uerr = b.Adapter.CreateUsers(ctx, users) }()
	}
	aerr := b.Adapter.PutAssocs(ctx, assocs)
	wg.Wait()
	return errors.Join(uerr, aerr)
}

// DropsUserAssocs implements reconcile.AccountDropper: a batch of
// accounts that goes to sacctmgr takes its user associations with it.
func (b *Bulk) DropsUserAssocs(accounts int) bool { return accounts >= b.from }

// DeleteQOS implements reconcile.Writer: one sacctmgr command for the lot.
func (b *Bulk) DeleteQOS(ctx context.Context, names []string) error {
	return b.deleteNames(ctx, "delete QOS", names, b.s.DeleteQOS, b.Adapter.DeleteQOS)
}

// DeleteAccounts implements reconcile.Writer: one sacctmgr command for the
// lot, which removes their user associations too (DropsUserAssocs).
// Through slurmrestd (a small batch, or sacctmgr failed) each account
// goes with its associations at one slurmctld update each: slower, and
// the same result.
func (b *Bulk) DeleteAccounts(ctx context.Context, names []string) error {
	return b.deleteNames(ctx, "delete accounts", names, b.s.DeleteAccounts, b.Adapter.DeleteAccounts)
}

func (b *Bulk) deleteNames(ctx context.Context, what string, names []string, bulk func(context.Context, []string) ([]string, error), rest func(context.Context, []string) error) error {
	if len(names) < b.from {
		return rest(ctx, names)
	}
	left, err := bulk(ctx, names)
	if err == nil {
		return nil
	}
	b.fellBack(what, len(left), err)
	return rest(ctx, left)
}
