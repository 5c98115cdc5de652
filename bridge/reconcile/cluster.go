package reconcile

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// State is the live cluster as far as tenants are concerned.
type State struct {
	// QOS holds every QOS.
	QOS []tenant.QOS
	// Accounts holds every account except root.
	Accounts []Account
	// Assocs holds every user association on the cluster (not only
	// gpubridge's: a user's other associations decide whether the user
	// record exists and which account is their default).
	Assocs []Assoc
}

// Account is a live account.
type Account struct {
	tenant.Account
	// Clustered reports whether the account has its association on the
	// cluster (an account without one cannot hold user associations).
	Clustered bool
	// Coordinators are the account's coordinators, sorted.
	Coordinators []string
	// Parent is the parent account of the account's cluster association
	// ("root" for a tenant's; "" when not read).
	Parent string
}

// Assoc is a live user association.
type Assoc struct {
	tenant.Assoc
	// IsDefault: this account is the user's default account.
	IsDefault bool
}

// JobCount is the number of a user's unfinished jobs under an account
// (with one QOS, when the reader tells them apart by QOS).
type JobCount struct {
	Account string
	User    string
	// QOS is the jobs' QOS; "" when not known (releasing an adopted
	// tenant then waits for them, as it does for jobs of gpubridge's QOS).
	QOS     string
	Running int
	Pending int
}

// QOSWrite is a QOS to create or modify. ClearTRES lists GrpTRES entries
// to remove (Slurm merges TRES limits on modify, so dropping one has to be
// said).
type QOSWrite struct {
	tenant.QOS
	ClearTRES []string
	// ClearFlags lists flags to remove (FlagRequiredReservation set on a
	// QOS that must not have it).
	ClearFlags []string
	// Create is true when the QOS does not exist yet.
	Create bool
}

// AssocKey names a user association.
type AssocKey struct {
	Account string
	User    string
}

func (k AssocKey) String() string { return k.User + " (" + k.Account + ")" }

// Reader reads what Plan needs.
type Reader interface {
	// ReadState reads QOS, accounts with their coordinators, and
	// associations: three bulk reads.
	ReadState(ctx context.Context) (State, error)
	// ActiveJobs returns the pending and running jobs of the given
	// accounts, per account and user (one bulk read). Plan calls it only
	// when something is to be removed.
	ActiveJobs(ctx context.Context, accounts []string) ([]JobCount, error)
}

// The writers below are split by the kind of Slurm object they change;
// Apply needs them all (Writer), a future caller that changes one kind
// takes only its interface. Each method takes a batch and should send as
// few requests as the API allows; an empty batch sends nothing.

// QOSWriter creates, modifies and deletes QOS.
type QOSWriter interface {
	PutQOS(ctx context.Context, qos []QOSWrite) error
	DeleteQOS(ctx context.Context, names []string) error
}

// AccountWriter creates, modifies and deletes accounts.
type AccountWriter interface {
	// CreateAccounts creates accounts under root with their cluster
	// association (or adds the association to an existing account).
	CreateAccounts(ctx context.Context, accounts []tenant.Account) error
	// ModifyAccounts sets description and organization (the QOS of an
	// account's association are written with PutAssocs, User empty).
	ModifyAccounts(ctx context.Context, accounts []tenant.Account) error
	DeleteAccounts(ctx context.Context, names []string) error
}

// UserWriter creates user records and changes their default account.
type UserWriter interface {
	// CreateUsers creates user records with a default account.
	CreateUsers(ctx context.Context, users []tenant.User) error
	// SetDefaultAccounts changes existing users' default account.
	SetDefaultAccounts(ctx context.Context, users []tenant.User) error
}

// AssocWriter creates, modifies and deletes user associations.
type AssocWriter interface {
	// PutAssocs creates or modifies user associations (QOS list, default QOS).
	PutAssocs(ctx context.Context, assocs []tenant.Assoc) error
	DeleteAssocs(ctx context.Context, assocs []AssocKey) error
}

// CoordinatorWriter adds and removes account coordinators.
type CoordinatorWriter interface {
	AddCoordinators(ctx context.Context, coords []tenant.Coord) error
	RemoveCoordinators(ctx context.Context, coords []tenant.Coord) error
}

// NewAssoc is a user association to create, and the user record with it
// when the user does not exist yet.
type NewAssoc struct {
	tenant.Assoc
	// DefaultAccount is the new user's default account; "" when the user
	// exists (their default stays).
	DefaultAccount string
}

// AssocLoader is an optional Writer extension for a writer that creates
// user associations and new users' records together (sacctmgr load: one
// line makes both). When the Writer has it, Apply sends it the new
// associations of new accounts and of new users (and those users) instead
// of PutAssocs and CreateUsers.
type AssocLoader interface {
	LoadAssocs(ctx context.Context, assocs []NewAssoc) error
}

// AccountDropper is an optional Writer extension for a writer whose
// DeleteAccounts of n accounts removes their user associations with them
// in one write (sacctmgr delete account), when DropsUserAssocs(n) says so.
// Apply then leaves the user associations of the accounts it deletes to
// DeleteAccounts (slurmrestd deletes an account with associations at one
// slurmctld update each, so without this they go first, in bulk).
type AccountDropper interface {
	DropsUserAssocs(accounts int) bool
}

// Writer is every change Apply makes.
type Writer interface {
	QOSWriter
	AccountWriter
	UserWriter
	AssocWriter
	CoordinatorWriter
}

// Cluster is Reader and Writer.
type Cluster interface {
	Reader
	Writer
}
