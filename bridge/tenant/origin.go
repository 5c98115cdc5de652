package tenant

import "slices"

// Origin is what existed in Slurm before `gpubridge import` adopted a
// tenant's account: what releasing the tenant (`delete tenant` without
// --purge) leaves in place and puts back. It holds only what apply
// changes on adopted objects: the account's description and organization,
// the QOS list and default QOS of the user associations that existed, the
// coordinators, and the tenant QOS's description and limits when that QOS
// existed. A tenant gpubridge created has none (nil): deleting it removes
// everything.
type Origin struct {
	// Description and Organization are the account's, as they were.
	Description  string `json:"description"`
	Organization string `json:"organization"`
	// Assocs are the user associations that existed under the account,
	// sorted by user.
	Assocs []OriginAssoc `json:"assocs,omitempty"`
	// Coordinators are the account's coordinators as they were, sorted.
	Coordinators []string `json:"coordinators,omitempty"`
	// QOS is the tenant QOS (named like the tenant's) as it was; nil when
	// it did not exist (gpubridge created it, and release removes it).
	QOS *OriginQOS `json:"qos,omitempty"`
}

// OriginAssoc is a user association as it was before the adoption: its
// own QOS list (empty when it inherited its parent's) and default QOS.
type OriginAssoc struct {
	User       string   `json:"user"`
	QOS        []string `json:"qos,omitempty"`
	DefaultQOS string   `json:"defaultQOS,omitempty"`
}

// OriginQOS is a QOS as it was before the adoption.
type OriginQOS struct {
	Description string `json:"description"`
	GrpTRES     TRES   `json:"grpTRES,omitempty"`
}

// Users are the users whose associations existed, sorted.
func (o *Origin) Users() []string {
	if o == nil {
		return nil
	}
	out := make([]string, 0, len(o.Assocs))
	for _, a := range o.Assocs {
		out = append(out, a.User)
	}
	slices.Sort(out)
	return out
}

// Assoc returns the recorded association of user, if it existed.
func (o *Origin) Assoc(user string) (OriginAssoc, bool) {
	if o == nil {
		return OriginAssoc{}, false
	}
	i := slices.IndexFunc(o.Assocs, func(a OriginAssoc) bool { return a.User == user })
	if i < 0 {
		return OriginAssoc{}, false
	}
	return o.Assocs[i], true
}

// Clone returns a deep copy of o (nil stays nil).
func (o *Origin) Clone() *Origin {
	if o == nil {
		return nil
	}
	c := *o
	c.Assocs = make([]OriginAssoc, len(o.Assocs))
	for i, a := range o.Assocs {
		a.QOS = slices.Clone(a.QOS)
		c.Assocs[i] = a
	}
	if len(o.Assocs) == 0 {
		c.Assocs = nil
	}
	c.Coordinators = slices.Clone(o.Coordinators)
	if o.QOS != nil {
		q := *o.QOS
		if o.QOS.GrpTRES != nil {
			q.GrpTRES = TRES{}
			for k, v := range o.QOS.GrpTRES {
				q.GrpTRES[k] = v
			}
		}
		c.QOS = &q
	}
	return &c
}

// normalize sorts o's lists so that equal origins compare equal.
func (o *Origin) normalize() {
	if o == nil {
		return
	}
	slices.SortFunc(o.Assocs, func(a, b OriginAssoc) int {
		switch {
		case a.User < b.User:
			return -1
		case a.User > b.User:
			return 1
		}
		return 0
	})
	for i := range o.Assocs {
		o.Assocs[i].QOS = sortedUnique(o.Assocs[i].QOS)
	}
	if len(o.Assocs) == 0 {
		o.Assocs = nil
	}
	o.Coordinators = sortedUnique(o.Coordinators)
	if o.QOS != nil && len(o.QOS.GrpTRES) == 0 {
		o.QOS.GrpTRES = nil
	}
}

// Releases reports whether deleting t releases the site's account (t
// was adopted with its origin recorded, and its deletion is a release,
// not a purge).
func (t Tenant) Releases() bool { return t.State == Releasing && t.Origin != nil }

// DeletionState is the state `delete tenant` gives t: Releasing for a
// tenant adopted with its origin recorded unless purge, Deleting
// otherwise (a tenant gpubridge created is deleted whole either way).
func DeletionState(t Tenant, purge bool) State {
	if t.Adopted && t.Origin != nil && !purge {
		return Releasing
	}
	return Deleting
}
