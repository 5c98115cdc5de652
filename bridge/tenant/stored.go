package tenant

import "errors"

// ErrNotFound: no tenant of that name.
var ErrNotFound = errors.New("no such tenant")

// ErrChanged: the tenant changed (or was created or removed) since it was
// read; the write that expected the old version was refused, so nothing
// is lost. Read it again and retry.
var ErrChanged = errors.New("changed since you read it")

// Stored is a tenant as the store holds it, with the version of its
// record: 1 when created, one more with every change. A write names the
// version it was computed from, and the store refuses it (ErrChanged)
// when the record has moved on.
type Stored struct {
	Tenant
	Version int64 `json:"-"`
}

// Edit is one change of the store, written in one transaction or not at
// all (see bridge/tenantstore Commit).
type Edit struct {
	// Put creates (Version 0: the tenant must not exist yet) or replaces
	// (Version n: the stored record must still be at version n) tenants.
	Put []Stored
	// Delete marks tenants as being deleted; a Version other than 0 must
	// still be the stored one. Each one's State says how: Releasing
	// releases an adopted tenant whose origin is recorded (the site's
	// account stays), anything else (Deleting, "") deletes it whole; a
	// tenant already in the state asked for is left alone.
	Delete []Stored
}

// Empty reports whether e changes nothing.
func (e Edit) Empty() bool { return len(e.Put) == 0 && len(e.Delete) == 0 }
