package reconcile

import (
	"errors"
	"fmt"
	"maps"
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
//  0. The deletion of a tenant a person recorded (`delete tenant`, or a
//     tenants file's delete: the store holds it as deleting or releasing)
//     is theirs, not a mass deletion: it is applied (the store's removal
//     is audited), and counted apart from the rules below. A site of three
//     tenants deletes one, and then the last, without the flag.
//  1. Deleting gpubridge objects of a tenant the store has no record of
//     (not even as being deleted) is refused (ReasonUnrecorded).
//     gpubridge-marked objects unknown to the store are what an empty,
//     foreign or stale database looks like, so such a store can never
//     delete anything. Only those tenants' deletions are held back: the
//     plan's other deletions (a user who left a recorded tenant, a stray
//     association under a tenant's account) are still judged by rule 3.
//  2. Removing the objects of every other tenant, or of more than
//     MaxShare of them, when nobody recorded their deletion, is refused
//     (ReasonAll, ReasonShare); those deletions are held back.
//  3. Removing more user associations of the remaining tenants than
//     MaxShare of those is refused (ReasonShare); those removals are held
//     back. One tenant and one association always fit.
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
	// Requested are those of Tenants whose deletion a person recorded
	// (rule 0): applied, never held back.
	Requested []string `json:"requested,omitempty"`
	// Held are the tenants whose deletions are held back; HeldAssocs: the
	// user associations removed from tenants that stay are held back too.
	Held       []string `json:"held,omitempty"`
	HeldAssocs bool     `json:"heldAssocs,omitempty"`
}

// holds reports whether the refusal holds back a deletion of owner's
// objects (staying: a user association of a tenant that stays).
func (m *MassDelete) holds(owner string, staying bool) bool {
	if m == nil || m.Allowed {
		return false
	}
	if staying {
		return m.HeldAssocs
	}
	return slices.Contains(m.Held, owner)
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
	m := MassDelete{TenantsInSlurm: len(del.live), Assocs: del.assocs, AssocsInSlurm: del.assocsAll}
	var unasked []string // recorded tenants gone without a person asking
	for _, o := range slices.Sorted(maps.Keys(del.gone)) {
		m.Tenants = append(m.Tenants, o)
		t, ok := recordedTenant(ts, o)
		switch {
		case !ok:
			m.Unrecorded = append(m.Unrecorded, o)
		case t.IsDeleting():
			m.Requested = append(m.Requested, o)
		default:
			unasked = append(unasked, o)
		}
	}
	var refusals []refusal
	if len(m.Unrecorded) > 0 {
		refusals = append(refusals, refusal{ReasonUnrecorded,
			fmt.Sprintf("the plan deletes the Slurm objects of %d tenant(s) that gpubridge's store has no record of (%s)", len(m.Unrecorded), namesOf(m.Unrecorded)),
			"Is the database empty, restored from an old backup, or another site's? Recover them with `gpubridge import --marked`, or delete them with `gpubridge apply --allow-mass-delete`"})
		m.Held = append(m.Held, m.Unrecorded...)
	}
	// Rule 2 counts the tenants nobody asked to delete against those that
	// stay or go unasked.
	base := len(del.live) - len(m.Requested)
	switch {
	case len(unasked) > 0 && len(unasked) >= base:
		refusals = append(refusals, refusal{ReasonAll,
			fmt.Sprintf("the plan deletes the Slurm objects of every tenant (%s), and no one recorded their deletion", namesOf(unasked)),
			"Delete them with `gpubridge delete tenant`, or, if that is what you want, run `gpubridge apply --allow-mass-delete`"})
		m.Held = append(m.Held, unasked...)
	case len(unasked) > d.allowance(base):
		refusals = append(refusals, refusal{ReasonShare,
			fmt.Sprintf("the plan deletes the Slurm objects of %d of %d tenants (%s) that no one recorded a deletion of, more than reconcile.maxDeleteShare=%g allows in one run (%d)",
				len(unasked), base, namesOf(unasked), d.MaxShare, d.allowance(base)),
			"Run `gpubridge apply --allow-mass-delete` to delete them at once"})
		m.Held = append(m.Held, unasked...)
	}
	if del.assocs > d.allowance(del.assocsAll) {
		refusals = append(refusals, refusal{ReasonShare,
			fmt.Sprintf("the plan deletes %d of %d user associations of tenants that stay, more than reconcile.maxDeleteShare=%g allows in one run (%d)",
				del.assocs, del.assocsAll, d.MaxShare, d.allowance(del.assocsAll)),
			"Run `gpubridge apply --allow-mass-delete` to remove those users at once"})
		m.HeldAssocs = true
	}
	if len(refusals) == 0 {
		return nil
	}
	slices.Sort(m.Held)
	m.Reason, m.Hint = refusals[0].reason, refusals[0].hint
	msgs := make([]string, 0, len(refusals))
	for _, r := range refusals {
		msgs = append(msgs, r.message)
	}
	m.Message = strings.Join(msgs, "; and ")
	m.Allowed = d.Allow
	return &m
}

// refusal is one rule's finding.
type refusal struct{ reason, message, hint string }

// recordedTenant returns the store's tenant named owner (Slurm names are
// compared without case).
func recordedTenant(ts []tenant.Tenant, owner string) (tenant.Tenant, bool) {
	i := slices.IndexFunc(ts, func(t tenant.Tenant) bool { return strings.EqualFold(t.Name, owner) })
	if i < 0 {
		return tenant.Tenant{}, false
	}
	return ts[i], true
}

func namesOf(names []string) string {
	if len(names) <= 10 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:10], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
}
