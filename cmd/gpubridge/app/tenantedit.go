package app

import (
	"context"
	"errors"
	"strconv"

	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/reserve/view"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The tenant commands' use cases (add/modify/delete/show tenant, add/delete
// user, import, show audit) for a command named what (its command path:
// the writer lock's holder). Each takes the command's options as parsed,
// asks confirm (nil: -i, nothing is asked) with what it will change, and
// returns what the command prints. Input errors of the tenant use cases
// are ErrInput (exit 2).

// ModifyTenantUsage is modify tenant's refusal of anything but one name
// and its changes after `set`.
const ModifyTenantUsage = "usage: gpubridge modify tenant NAME set key=value ... (or where name=NAME set key=value ...)"

// UserUsage is add/delete user's refusal of anything but one user name
// and tenant=NAME.
const UserUsage = "give one user name and tenant=NAME"

// tenantErr marks the tenant use cases' input errors (tenantadmin.ErrInput)
// as ErrInput.
func tenantErr(err error) error {
	if errors.Is(err, tenantadmin.ErrInput) {
		return Input(err)
	}
	return err
}

// asks is confirm with text, or nil when confirm is nil (-i).
func asks(confirm func(string) error, text string) error {
	if confirm == nil {
		return nil
	}
	return confirm(text)
}

// confirmChanges asks confirm before a tenant's fields change.
func confirmChanges(confirm func(string) error) func(string, []tenant.FieldChange) error {
	return func(name string, cs []tenant.FieldChange) error {
		return asks(confirm, tenantview.Changes(" Modifying tenant", name, cs))
	}
}

// AddTenantRequest is add tenant for the command What: the tenant, with
// the problems its options had (reported with the service's own checks);
// Confirm (nil: no question) sees it as it will be stored.
type AddTenantRequest struct {
	What     string
	Tenant   tenant.Tenant
	Problems tenant.Problems
	Confirm  func(string) error
}

// ParseAddTenant reads add tenant NAME's options (tenant.FromArgs).
func ParseAddTenant(name string, where map[string]string) AddTenantRequest {
	t, early := tenant.FromArgs(name, where)
	return AddTenantRequest{Tenant: t, Problems: early}
}

// AddTenant declares the tenant r describes. It returns the name.
func (e *Env) AddTenant(ctx context.Context, r AddTenantRequest) (string, error) {
	t, confirm := r.Tenant, r.Confirm
	svc, err := e.Tenants(r.What, "")
	if err != nil {
		return "", err
	}
	if err := svc.Add(ctx, t, r.Problems, func(t tenant.Tenant) error { return asks(confirm, tenantview.Tenant(" Adding tenant", t)) }); err != nil {
		return "", tenantErr(err)
	}
	return t.Name, nil
}

// TenantModified is what modify tenant changed.
type TenantModified struct {
	Name    string
	Changed bool // false: nothing would change
	Changes []tenant.FieldChange
}

// Text is what modify tenant prints.
func (m TenantModified) Text() string { return tenantview.Modified(m.Name, m.Changed, m.Changes) }

// ModifyTenantRequest is modify tenant for the command What: tenant Name
// changed by Set. Set is the options after `set` as given: the tenant
// service applies them onto the stored tenant (tenant.Update), whose
// values some of them edit. Confirm (nil: no question) sees the field
// changes.
type ModifyTenantRequest struct {
	What, Name string
	Set        map[string]string
	Confirm    func(string) error
}

// ParseModifyTenant reads modify tenant NAME set key=value ...; no change
// is a usage error.
func ParseModifyTenant(name string, set map[string]string) (ModifyTenantRequest, error) {
	if len(set) == 0 {
		return ModifyTenantRequest{}, Inputf("%s", ModifyTenantUsage)
	}
	return ModifyTenantRequest{Name: name, Set: set}, nil
}

// ModifyTenant changes tenant r.Name by r.Set.
func (e *Env) ModifyTenant(ctx context.Context, r ModifyTenantRequest) (TenantModified, error) {
	svc, err := e.Tenants(r.What, "")
	if err != nil {
		return TenantModified{}, err
	}
	m := TenantModified{Name: r.Name}
	ask := confirmChanges(r.Confirm)
	m.Changed, err = svc.Modify(ctx, r.Name, r.Set, func(name string, cs []tenant.FieldChange) error {
		m.Changes = cs
		return ask(name, cs)
	})
	if err != nil {
		return TenantModified{}, tenantErr(err)
	}
	return m, nil
}

// TenantsDeleted is what delete tenant marked: the names given, and
// those of them released (adopted) rather than deleted whole.
type TenantsDeleted struct {
	Names, Released []string
}

// Text is what delete tenant prints.
func (d TenantsDeleted) Text() string { return tenantview.Deleted(d.Names, d.Released) }

// DeleteTenants marks the tenants of names for deletion (adopted ones are
// released unless purge; tenantadmin.Service.DeleteTenants); confirm sees
// the tenants and how each goes.
func (e *Env) DeleteTenants(ctx context.Context, what string, names []string, purge bool, confirm func(string) error) (TenantsDeleted, error) {
	svc, err := e.Tenants(what, "")
	if err != nil {
		return TenantsDeleted{}, err
	}
	d := TenantsDeleted{Names: names}
	if err := svc.DeleteTenants(ctx, names, purge, func(ds []tenantadmin.Deletion) error {
		for _, del := range ds {
			if del.Release {
				d.Released = append(d.Released, del.Name)
			}
		}
		return asks(confirm, tenantview.Deleting(ds))
	}); err != nil {
		return TenantsDeleted{}, tenantErr(err)
	}
	return d, nil
}

// UserRequest is add user or delete user for the command What: User in
// Tenant (Admin: add user also makes them a coordinator of its account);
// Confirm (nil: no question) sees the change. Actor is who the audit log
// names (empty: the invoking user; the portal's tenant admin: "user
// NAME").
type UserRequest struct {
	What, User, Tenant string
	Admin              bool
	Confirm            func(string) error
	Actor              string
}

// userService is the tenant service for r, writing r.Actor to the audit
// log when set.
func (e *Env) userService(r UserRequest) (*tenantadmin.Service, error) {
	svc, err := e.Tenants(r.What, "")
	if err != nil {
		return nil, err
	}
	if r.Actor != "" {
		svc.Actor = r.Actor
	}
	return svc, nil
}

// ParseUser reads add/delete user NAME's options: tenant=, else account=
// (one is required), and admin=yes|no (add user's).
func ParseUser(user string, where map[string]string) (UserRequest, error) {
	r := UserRequest{User: user, Tenant: where["tenant"]}
	if r.Tenant == "" {
		r.Tenant = where["account"]
	}
	if r.Tenant == "" {
		return UserRequest{}, Inputf("%s", UserUsage)
	}
	if v, ok := where["admin"]; ok {
		var msg string
		if r.Admin, msg = tenant.ParseBool(v); msg != "" {
			return UserRequest{}, Inputf("admin: %s", msg)
		}
	}
	return r, nil
}

// UserChange is the user add user or delete user changed in a tenant.
type UserChange struct {
	User, Tenant string
	Changed      bool // add user: false when the user was there already
}

// AddedText is what add user prints.
func (u UserChange) AddedText() string { return tenantview.UserAdded(u.User, u.Tenant, u.Changed) }

// RemovedText is what delete user prints.
func (u UserChange) RemovedText() string { return tenantview.UserRemoved(u.User, u.Tenant) }

// AddUser adds r.User to r.Tenant (r.Admin: as a coordinator of its
// account).
func (e *Env) AddUser(ctx context.Context, r UserRequest) (UserChange, error) {
	svc, err := e.userService(r)
	if err != nil {
		return UserChange{}, err
	}
	changed, err := svc.AddUser(ctx, r.Tenant, r.User, r.Admin, confirmChanges(r.Confirm))
	if err != nil {
		return UserChange{}, tenantErr(err)
	}
	return UserChange{User: r.User, Tenant: r.Tenant, Changed: changed}, nil
}

// RemoveUser removes r.User from r.Tenant.
func (e *Env) RemoveUser(ctx context.Context, r UserRequest) (UserChange, error) {
	svc, err := e.userService(r)
	if err != nil {
		return UserChange{}, err
	}
	if err := svc.RemoveUser(ctx, r.Tenant, r.User, confirmChanges(r.Confirm)); err != nil {
		return UserChange{}, tenantErr(err)
	}
	return UserChange{User: r.User, Tenant: r.Tenant, Changed: true}, nil
}

// ImportTenants adopts the Slurm accounts named (with marked, also every
// account carrying gpubridge's marker that the store does not hold) as
// tenants; confirm sees the tenants and the notes on what cannot be
// carried over. It returns the names imported (none: nothing to import).
func (e *Env) ImportTenants(ctx context.Context, what string, accounts []string, marked bool, confirm func(string) error) ([]string, error) {
	if len(accounts) == 0 && !marked {
		return nil, Inputf("name the accounts to import, or give --marked")
	}
	svc, err := e.Tenants(what, "")
	if err != nil {
		return nil, err
	}
	names, err := svc.Import(ctx, accounts, marked, func(ts []tenant.Tenant, notes []string) error {
		return asks(confirm, tenantview.Importing(ts, notes))
	})
	return names, tenantErr(err)
}

// TenantList is show tenants' tenants.
type TenantList []tenant.Tenant

// Table is show tenants' table: every field's column (format= picks;
// tenantview.Columns by default), the full records for --json.
func (ts TenantList) Table() table.Table { return tenantview.Tenants(ts, tenant.FieldKeys) }

// ShowTenants returns the named tenants, or all when names is empty.
func (e *Env) ShowTenants(ctx context.Context, what string, names []string) (TenantList, error) {
	svc, err := e.Tenants(what, "")
	if err != nil {
		return nil, err
	}
	ts, err := svc.Show(ctx, names)
	if err != nil {
		return nil, tenantErr(err)
	}
	return ts, nil
}

// AuditLog is show audit's rows, newest first.
type AuditLog []sqldb.AuditEntry

// Table is show audit's table, with the entries for --json.
func (es AuditLog) Table() table.Table {
	t := table.Table{
		Header: []string{"ID", "At", "Actor", "Action", "Kind", "Name", "Change"},
		Keys:   []string{"id", "at", "actor", "action", "kind", "name", "change"},
		Raw:    []sqldb.AuditEntry(es),
	}
	if es == nil {
		t.Raw = []sqldb.AuditEntry{}
	}
	for _, e := range es {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format("2006-01-02T15:04:05Z"), e.Actor, e.Action,
			e.ObjectKind, e.ObjectName, auditSummary(e.ObjectKind, e.Before, e.After)})
	}
	return t
}

// auditSummaries say in one line what an audit row of a kind changed
// (show audit); kinds without one show their values (ValueAudit).
var auditSummaries = map[string]func(before, after *string) string{
	tenantstore.AuditKind:  tenantview.TenantAudit,
	store.AuditBooking:     view.BookingAudit,
	store.AuditMaintenance: view.MaintenanceAudit,
}

// auditSummary says in one line what an audit row changed.
func auditSummary(kind string, before, after *string) string {
	if f, ok := auditSummaries[kind]; ok {
		return f(before, after)
	}
	return tenantview.ValueAudit(before, after)
}
