package reconcile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// ErrMassDelete: the plan deletes what only an empty or wrong store would
// delete, and was refused.
var ErrMassDelete = errors.New("mass deletion refused")

// Reasons a plan's deletions are refused (the reason label of
// gpubridge_reconcile_refusals_total).
const (
	// ReasonUnrecorded: the plan deletes gpubridge objects of tenants the
	// store has no record of, not even as being deleted: an empty, foreign
	// or stale database.
	ReasonUnrecorded = "unrecorded"
	// ReasonAll: the plan deletes the objects of every tenant in Slurm.
	ReasonAll = "all"
	// ReasonShare: the plan deletes more than DeletePolicy.MaxShare of the
	// tenants (or of their user associations) in one run.
	ReasonShare = "share"
)

// Reasons lists every refusal reason.
var Reasons = []string{ReasonUnrecorded, ReasonAll, ReasonShare}

// DeletePolicy bounds what one plan may delete (config
// reconcile.maxDeleteShare; apply --allow-mass-delete).
//
// The rule, applied to the tenants whose Slurm objects (account, QOS and
// their user associations) exist now:
//
//  1. A plan that deletes gpubridge objects of a tenant the store has no
//     record of (not even as being deleted) is refused (ReasonUnrecorded).
//     A tenant an admin deleted is recorded: `delete tenant` leaves it in
//     the store, deleting, until its objects are gone. gpubridge-marked
//     objects unknown to the store are what an empty, foreign or stale
//     database looks like, so such a store can never delete anything.
//  2. A plan that removes every tenant's objects is refused (ReasonAll).
//  3. A plan that removes more tenants than MaxShare of them, or more user
//     associations of the remaining tenants than MaxShare of those, is
//     refused (ReasonShare). One tenant and one association always fit:
//     a site of three tenants can delete one of them per run.
//
// Allow (a person's --allow-mass-delete; the daemon never sets it) lets
// the plan through; the plan still reports what the rule found.
type DeletePolicy struct {
	// MaxShare is the largest share (0 to 1) of the tenants, or of their
	// user associations, that one plan may delete.
	MaxShare float64
	// Allow lets a refused plan through.
	Allow bool
}

// DefaultMaxDeleteShare is reconcile.maxDeleteShare's default.
const DefaultMaxDeleteShare = 0.10

// MassDelete is what the delete policy found in a plan that it refused
// (or that Allow let through).
type MassDelete struct {
	Reason string `json:"reason"`
	// Message says what the plan deletes; Hint what to do about it.
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Allowed: --allow-mass-delete let the plan through.
	Allowed bool `json:"allowed,omitempty"`
	// HeldBack counts the plan's changes not applied for the refusal (its
	// deletions, and default account changes made for them).
	HeldBack int `json:"heldBack,omitempty"`
	// Tenants whose Slurm objects this plan deletes, of TenantsInSlurm.
	Tenants        []string `json:"tenants"`
	TenantsInSlurm int      `json:"tenantsInSlurm"`
	// Unrecorded are those of Tenants the store has no record of.
	Unrecorded []string `json:"unrecorded,omitempty"`
	// Assocs are user associations deleted from tenants that stay, of
	// AssocsInSlurm.
	Assocs        int `json:"assocs"`
	AssocsInSlurm int `json:"assocsInSlurm"`
}

func (m MassDelete) String() string {
	if m.Allowed {
		return "allowed by --allow-mass-delete: " + m.Message
	}
	return m.refusal()
}

func (m MassDelete) refusal() string {
	return "refused: " + m.Message + "; those deletions are held back, everything else is applied. " + m.Hint
}

// allowance is how many of n one plan may delete: MaxShare of them, and
// at least one.
func (d DeletePolicy) allowance(n int) int {
	share := d.MaxShare
	if share < 0 || math.IsNaN(share) {
		share = 0
	}
	return max(1, int(math.Floor(share*float64(n)+1e-9)))
}

// deletions is what plan() records for the policy.
type deletions struct {
	live      map[string]bool // tenants (owner names) with objects in Slurm, in scope
	gone      map[string]bool // tenants whose objects this plan deletes
	assocs    int             // associations deleted from tenants that stay
	assocsAll int             // associations of gpubridge's accounts that stay
}

// owner returns the tenant a gpubridge QOS belongs to, or "qos NAME"
// when its name does not carry the QOS prefix (a QOS left by an earlier
// prefix, which no tenant can claim).
func qosOwner(n tenant.Naming, qos string) string {
	if o, ok := n.QOSOwner(qos); ok {
		return o // a tenant QOS or a reservation QOS
	}
	return "qos " + qos
}

// check applies the policy to what the plan deletes; nil when allowed
// without the flag.
func (d DeletePolicy) check(del deletions, ts []tenant.Tenant) *MassDelete {
	if len(del.gone) == 0 && del.assocs == 0 {
		return nil
	}
	recorded := func(owner string) bool {
		return slices.ContainsFunc(ts, func(t tenant.Tenant) bool { return strings.EqualFold(t.Name, owner) })
	}
	m := MassDelete{TenantsInSlurm: len(del.live), Assocs: del.assocs, AssocsInSlurm: del.assocsAll}
	for o := range del.gone {
		m.Tenants = append(m.Tenants, o)
		if !recorded(o) {
			m.Unrecorded = append(m.Unrecorded, o)
		}
	}
	slices.Sort(m.Tenants)
	slices.Sort(m.Unrecorded)
	switch {
	case len(m.Unrecorded) > 0:
		m.Reason = ReasonUnrecorded
		m.Message = fmt.Sprintf("the plan deletes the Slurm objects of %d tenant(s) that gpubridge's store has no record of (%s)", len(m.Unrecorded), namesOf(m.Unrecorded))
		m.Hint = "Is the database empty, restored from an old backup, or another site's? Recover them with `gpubridge import --marked`, or delete them with `gpubridge apply --allow-mass-delete`"
	case len(m.Tenants) > 0 && len(m.Tenants) >= len(del.live):
		m.Reason = ReasonAll
		m.Message = fmt.Sprintf("the plan deletes the Slurm objects of every tenant (%s)", namesOf(m.Tenants))
		m.Hint = "If that is what you want, run `gpubridge apply --allow-mass-delete`"
	case len(m.Tenants) > d.allowance(len(del.live)):
		m.Reason = ReasonShare
		m.Message = fmt.Sprintf("the plan deletes the Slurm objects of %d of %d tenants (%s), more than reconcile.maxDeleteShare=%g allows in one run (%d)",
			len(m.Tenants), len(del.live), namesOf(m.Tenants), d.MaxShare, d.allowance(len(del.live)))
		m.Hint = "Run `gpubridge apply --allow-mass-delete` to delete them at once"
	case del.assocs > d.allowance(del.assocsAll):
		m.Reason = ReasonShare
		m.Message = fmt.Sprintf("the plan deletes %d of %d user associations of tenants that stay, more than reconcile.maxDeleteShare=%g allows in one run (%d)",
			del.assocs, del.assocsAll, d.MaxShare, d.allowance(del.assocsAll))
		m.Hint = "Run `gpubridge apply --allow-mass-delete` to remove those users at once"
	default:
		return nil
	}
	m.Allowed = d.Allow
	return &m
}

func namesOf(names []string) string {
	if len(names) <= 10 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:10], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
