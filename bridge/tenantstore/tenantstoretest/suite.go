package tenantstoretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Store is what the suite exercises.
type Store interface {
	List(ctx context.Context) ([]tenant.Tenant, error)
	ListStored(ctx context.Context) ([]tenant.Stored, error)
	Get(ctx context.Context, name string) (tenant.Tenant, error)
	GetStored(ctx context.Context, name string) (tenant.Stored, error)
	Names(ctx context.Context) ([]string, error)
	Put(ctx context.Context, actor string, ts []tenant.Tenant) ([]tenantstore.Change, error)
	Commit(ctx context.Context, actor string, e tenant.Edit) error
	MarkDeleting(ctx context.Context, actor string, names []string) ([]tenantstore.Change, error)
	Remove(ctx context.Context, actor string, names []string) error
	RemovedNames(ctx context.Context) ([]string, error)
	Audit(ctx context.Context, f tenantstore.AuditFilter) ([]sqldb.AuditEntry, error)
}

var (
	_ Store = (*tenantstore.Store)(nil)
	_ Store = (*tenantstore.Memory)(nil)
)

// Run runs every test of the suite, each on a new empty store from open.
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := map[string]func(t *testing.T, s Store){
		"RoundTripAndAudit":       testRoundTripAndAudit,
		"Versions":                testVersions,
		"CommitIsAllOrNothing":    testCommitAllOrNothing,
		"CommitDelete":            testCommitDelete,
		"MarkDeletingAndRemove":   testMarkDeletingAndRemove,
		"RemoveMany":              testRemoveMany,
		"CaseCollision":           testCaseCollision,
		"NotFound":                testNotFound,
		"EmptyEditChangesNothing": testEmptyEdit,
		"BookingPolicy":           testBookingPolicy,
		"RemovedNamesKept":        testRemovedNames,
		"OriginAndRelease":        testOriginAndRelease,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) { fn(t, open(t)) })
	}
}

func acme() tenant.Tenant {
	cpus, mem, budget := int64(64), tenant.Megabyte(512*1024), money.MustParse("2500.00")
	return tenant.Tenant{Name: "acme", Description: "Acme ML", Organization: "acme-corp", CostCenter: "CC-4711", Users: []string{"bob", "alice"}, Admins: []string{"alice"},
		GPUs: tenant.Quota{"h100": 16, "1g.10gb": 14}, CPUs: &cpus, Memory: &mem,
		Burst: tenant.Burst{Enabled: true, MaxOnDemandGPUs: 8, MonthlyBudget: &budget}, State: tenant.Active}
}

func globex() tenant.Tenant {
	return tenant.Tenant{Name: "globex", Users: []string{"carol"}, State: tenant.Active}
}

func normalized(ts ...tenant.Tenant) []tenant.Tenant {
	out := make([]tenant.Tenant, len(ts))
	for i, t := range ts {
		out[i] = t.Clone()
		out[i].Normalize()
	}
	return out
}

func auditCount(t *testing.T, s Store) int {
	t.Helper()
	es, err := s.Audit(context.Background(), tenantstore.AuditFilter{Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testRoundTripAndAudit(t *testing.T, s Store) {
	ctx := context.Background()
	cs, err := s.Put(ctx, "tester", []tenant.Tenant{acme(), globex()})
	must(t, err)
	if len(cs) != 2 || cs[0].Action != tenantstore.ActionCreate {
		t.Fatalf("changes = %+v", cs)
	}
	got, err := s.List(ctx)
	must(t, err)
	if diff := cmp.Diff(normalized(acme(), globex()), got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	names, err := s.Names(ctx)
	must(t, err)
	if diff := cmp.Diff([]string{"acme", "globex"}, names); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	// An unchanged tenant writes nothing, not even an audit row.
	n := auditCount(t, s)
	if cs, err := s.Put(ctx, "tester", []tenant.Tenant{acme()}); err != nil || len(cs) != 0 {
		t.Errorf("re-put unchanged: %v %v", cs, err)
	}
	if auditCount(t, s) != n {
		t.Error("an unchanged put wrote an audit row")
	}
	// A change is audited with before and after.
	a2 := acme()
	a2.GPUs["h100"] = 24
	_, err = s.Put(ctx, "alice", []tenant.Tenant{a2})
	must(t, err)
	es, err := s.Audit(ctx, tenantstore.AuditFilter{Kind: tenantstore.AuditKind, Name: "acme"})
	must(t, err)
	if len(es) != 2 || es[0].Action != tenantstore.ActionModify || es[0].Actor != "alice" || es[0].Before == nil || es[0].After == nil {
		t.Fatalf("audit = %+v", es)
	}
	if !strings.Contains(*es[0].Before, `"h100":16`) || !strings.Contains(*es[0].After, `"h100":24`) {
		t.Errorf("audit before/after: %s -> %s", *es[0].Before, *es[0].After)
	}
	if es, _ := s.Audit(ctx, tenantstore.AuditFilter{Limit: 1}); len(es) != 1 {
		t.Errorf("audit limit 1: %d rows", len(es))
	}
}

func testVersions(t *testing.T, s Store) {
	ctx := context.Background()
	must(t, s.Commit(ctx, "tester", tenant.Edit{Put: []tenant.Stored{{Tenant: acme()}}}))
	st, err := s.GetStored(ctx, "acme")
	must(t, err)
	if st.Version != 1 {
		t.Fatalf("version after create = %d; want 1", st.Version)
	}
	// A write at the version read succeeds and moves the version on.
	mine := st
	mine.Tenant = st.Clone()
	mine.Description = "mine"
	must(t, s.Commit(ctx, "alice", tenant.Edit{Put: []tenant.Stored{mine}}))
	now, err := s.GetStored(ctx, "acme")
	must(t, err)
	if now.Version != 2 || now.Description != "mine" {
		t.Fatalf("after the write: version %d, description %q", now.Version, now.Description)
	}
	// A second write computed from version 1 is refused, never lost.
	theirs := st
	theirs.Tenant = st.Clone()
	theirs.GPUs["h100"] = 1
	n := auditCount(t, s)
	err = s.Commit(ctx, "bob", tenant.Edit{Put: []tenant.Stored{theirs}})
	if !errors.Is(err, tenant.ErrChanged) || !strings.Contains(err.Error(), "changed since you read it") {
		t.Fatalf("stale write: err = %v; want ErrChanged", err)
	}
	after, _ := s.GetStored(ctx, "acme")
	if after.Description != "mine" || after.GPUs["h100"] != 16 || after.Version != 2 || auditCount(t, s) != n {
		t.Errorf("the refused write changed the store: %+v (audit %d -> %d)", after, n, auditCount(t, s))
	}
	// An unchanged write at the current version changes nothing.
	must(t, s.Commit(ctx, "alice", tenant.Edit{Put: []tenant.Stored{after}}))
	if again, _ := s.GetStored(ctx, "acme"); again.Version != 2 {
		t.Errorf("unchanged write moved the version to %d", again.Version)
	}
	// Creating a tenant that exists, or replacing one that does not, is refused.
	if err := s.Commit(ctx, "x", tenant.Edit{Put: []tenant.Stored{{Tenant: acme()}}}); !errors.Is(err, tenant.ErrChanged) {
		t.Errorf("create over an existing tenant: err = %v", err)
	}
	if err := s.Commit(ctx, "x", tenant.Edit{Put: []tenant.Stored{{Tenant: globex(), Version: 3}}}); !errors.Is(err, tenant.ErrChanged) {
		t.Errorf("replace of a missing tenant: err = %v", err)
	}
	// Put (unconditional) moves the version on too.
	_, err = s.Put(ctx, "x", []tenant.Tenant{globex()})
	must(t, err)
	g := globex()
	g.Users = []string{"dave"}
	_, err = s.Put(ctx, "x", []tenant.Tenant{g})
	must(t, err)
	if gs, _ := s.GetStored(ctx, "globex"); gs.Version != 2 {
		t.Errorf("version after create and modify by Put = %d; want 2", gs.Version)
	}
	ls, err := s.ListStored(ctx)
	must(t, err)
	if len(ls) != 2 || ls[0].Version != 2 || ls[1].Version != 2 {
		t.Errorf("ListStored = %+v", ls)
	}
}

func testCommitAllOrNothing(t *testing.T, s Store) {
	ctx := context.Background()
	_, err := s.Put(ctx, "tester", []tenant.Tenant{acme()})
	must(t, err)
	n := auditCount(t, s)
	stale := tenant.Stored{Tenant: acme(), Version: 7}
	err = s.Commit(ctx, "tester", tenant.Edit{Put: []tenant.Stored{{Tenant: globex()}, stale}})
	if !errors.Is(err, tenant.ErrChanged) {
		t.Fatalf("err = %v; want ErrChanged", err)
	}
	if _, err := s.Get(ctx, "globex"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("the new tenant of a refused edit was stored (err %v)", err)
	}
	if auditCount(t, s) != n {
		t.Error("a refused edit wrote audit rows")
	}
	// A whole file: creates, replaces and deletes together.
	a, _ := s.GetStored(ctx, "acme")
	a.Tenant = a.Clone()
	a.Users = []string{"zed"}
	a.Admins = nil
	must(t, s.Commit(ctx, "tester", tenant.Edit{Put: []tenant.Stored{a, {Tenant: globex()}}}))
	g, _ := s.GetStored(ctx, "globex")
	must(t, s.Commit(ctx, "tester", tenant.Edit{Put: []tenant.Stored{{Tenant: tenant.Tenant{Name: "hooli", State: tenant.Active}}}, Delete: []tenant.Stored{g}}))
	ts, _ := s.List(ctx)
	var got []string
	for _, t := range ts {
		got = append(got, t.Name+"/"+string(t.State)+"/"+strings.Join(t.Users, ","))
	}
	if diff := cmp.Diff([]string{"acme/active/zed", "globex/deleting/carol", "hooli/active/"}, got); diff != "" {
		t.Errorf("after the edits (-want +got):\n%s", diff)
	}
}

func testCommitDelete(t *testing.T, s Store) {
	ctx := context.Background()
	_, err := s.Put(ctx, "tester", []tenant.Tenant{acme(), globex()})
	must(t, err)
	a, _ := s.GetStored(ctx, "acme")
	must(t, s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{a}}))
	after, _ := s.GetStored(ctx, "acme")
	if !after.IsDeleting() || after.Version != a.Version+1 {
		t.Errorf("after delete: state %s version %d", after.State, after.Version)
	}
	// Deleting at an old version (the tenant changed meanwhile) is refused.
	if err := s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{{Tenant: globex(), Version: 9}}}); !errors.Is(err, tenant.ErrChanged) {
		t.Errorf("stale delete: %v", err)
	}
	if err := s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{{Tenant: tenant.Tenant{Name: "nosuch"}}}}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("delete of a missing tenant: %v", err)
	}
	// Version 0: delete whatever the version.
	must(t, s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{{Tenant: globex()}}}))
	if g, _ := s.Get(ctx, "globex"); !g.IsDeleting() {
		t.Errorf("globex state %s", g.State)
	}
}

func testMarkDeletingAndRemove(t *testing.T, s Store) {
	ctx := context.Background()
	_, err := s.Put(ctx, "tester", []tenant.Tenant{acme(), globex()})
	must(t, err)
	_, err = s.MarkDeleting(ctx, "tester", []string{"globex"})
	must(t, err)
	g, _ := s.Get(ctx, "globex")
	if !g.IsDeleting() {
		t.Errorf("globex state = %s", g.State)
	}
	must(t, s.Remove(ctx, "tester", []string{"globex", "acme"}))
	if _, err := s.Get(ctx, "globex"); err == nil {
		t.Error("globex still stored after Remove")
	}
	if _, err := s.Get(ctx, "acme"); err != nil {
		t.Errorf("Remove dropped acme, which is not being deleted: %v", err)
	}
	es, _ := s.Audit(ctx, tenantstore.AuditFilter{Name: "globex"})
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
	}
	if diff := cmp.Diff([]string{"remove", "delete", "create"}, actions); diff != "" {
		t.Errorf("globex audit actions (-want +got):\n%s", diff)
	}
	if _, err := s.MarkDeleting(ctx, "tester", []string{"nosuch"}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("MarkDeleting of a missing tenant: %v", err)
	}
}

// testRemoveMany: removing 1,200 of 1,234 tenants (more than one
// statement's worth) drops exactly the deleting ones, keeps a tombstone
// and a remove audit row for each, and leaves the others alone.
func testRemoveMany(t *testing.T, s Store) {
	ctx := context.Background()
	var ts []tenant.Tenant
	var all, deleting []string
	for i := range 1234 {
		n := fmt.Sprintf("many%04d", i)
		ts = append(ts, tenant.Tenant{Name: n, Users: []string{n + "u"}, GPUs: tenant.Quota{"h100": 1}, State: tenant.Active})
		all = append(all, n)
		if i < 1200 {
			deleting = append(deleting, n)
		}
	}
	_, err := s.Put(ctx, "tester", ts)
	must(t, err)
	_, err = s.MarkDeleting(ctx, "tester", deleting)
	must(t, err)
	must(t, s.Remove(ctx, "tester", all))
	left, err := s.List(ctx)
	must(t, err)
	if len(left) != 34 || left[0].Name != "many1200" {
		t.Errorf("%d tenants left (first %v); want the 34 not being deleted", len(left), left[:min(1, len(left))])
	}
	removed, err := s.RemovedNames(ctx)
	must(t, err)
	if diff := cmp.Diff(deleting, removed); diff != "" {
		t.Errorf("tombstones (-want +got):\n%s", diff)
	}
	for _, n := range []string{"many0000", "many0777", "many1199"} {
		es, _ := s.Audit(ctx, tenantstore.AuditFilter{Name: n})
		if len(es) == 0 || es[0].Action != "remove" || es[0].Before == nil || es[0].After != nil {
			t.Errorf("%s: newest audit row %+v; want a remove with the record before", n, es[:min(1, len(es))])
		}
	}
}

// testRemovedNames: a removed tenant's name stays known (the ledger labels
// the usage of the month it was deleted in with it); a tenant only being
// deleted, or not deleted, is no tombstone; removing again, after the name
// was declared and deleted once more, keeps one entry.
func testRemovedNames(t *testing.T, s Store) {
	ctx := context.Background()
	_, err := s.Put(ctx, "tester", []tenant.Tenant{acme(), globex(), {Name: "Initech", State: tenant.Active}})
	must(t, err)
	_, err = s.MarkDeleting(ctx, "tester", []string{"globex", "Initech"})
	must(t, err)
	if got, err := s.RemovedNames(ctx); err != nil || len(got) != 0 {
		t.Fatalf("RemovedNames before any removal = %v, %v; want none", got, err)
	}
	must(t, s.Remove(ctx, "tester", []string{"globex", "acme"}))
	got, err := s.RemovedNames(ctx)
	must(t, err)
	if diff := cmp.Diff([]string{"globex"}, got); diff != "" {
		t.Errorf("RemovedNames (-want +got):\n%s", diff)
	}
	_, err = s.Put(ctx, "tester", []tenant.Tenant{globex()})
	must(t, err)
	_, err = s.MarkDeleting(ctx, "tester", []string{"globex"})
	must(t, err)
	must(t, s.Remove(ctx, "tester", []string{"globex", "Initech"}))
	got, err = s.RemovedNames(ctx)
	must(t, err)
	if diff := cmp.Diff([]string{"globex", "Initech"}, got); diff != "" {
		t.Errorf("RemovedNames after a second removal (-want +got):\n%s", diff)
	}
}

func testCaseCollision(t *testing.T, s Store) {
	ctx := context.Background()
	_, err := s.Put(ctx, "tester", []tenant.Tenant{{Name: "teama", State: tenant.Active}})
	must(t, err)
	n := auditCount(t, s)
	_, err = s.Put(ctx, "tester", []tenant.Tenant{{Name: "okay", State: tenant.Active}, {Name: "TeamA", State: tenant.Active}})
	if err == nil || !strings.Contains(err.Error(), "collides") {
		t.Fatalf("Put TeamA beside teama: err = %v", err)
	}
	err = s.Commit(ctx, "tester", tenant.Edit{Put: []tenant.Stored{{Tenant: tenant.Tenant{Name: "okay", State: tenant.Active}}, {Tenant: tenant.Tenant{Name: "TeamA", State: tenant.Active}}}})
	if err == nil || !strings.Contains(err.Error(), "collides") {
		t.Fatalf("Commit TeamA beside teama: err = %v", err)
	}
	names, _ := s.Names(ctx)
	if diff := cmp.Diff([]string{"teama"}, names); diff != "" {
		t.Errorf("names after the refused batches (-want +got):\n%s", diff)
	}
	if auditCount(t, s) != n {
		t.Error("refused batches wrote audit rows")
	}
}

func testNotFound(t *testing.T, s Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "nosuch"); !errors.Is(err, tenant.ErrNotFound) || !errors.Is(err, tenantstore.ErrNotFound) {
		t.Errorf("Get: %v", err)
	}
	if _, err := s.GetStored(ctx, "nosuch"); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("GetStored: %v", err)
	}
	if ts, err := s.List(ctx); err != nil || len(ts) != 0 {
		t.Errorf("List of an empty store: %v %v", ts, err)
	}
}

func testEmptyEdit(t *testing.T, s Store) {
	must(t, s.Commit(context.Background(), "tester", tenant.Edit{}))
	if n := auditCount(t, s); n != 0 {
		t.Errorf("empty edit wrote %d audit rows", n)
	}
}

// testBookingPolicy: a tenant's booking policy is stored key by key (unset
// keys stay unset, 0 stays 0), changes are audited, and unsetting removes.
func testBookingPolicy(t *testing.T, s Store) {
	ctx := context.Background()
	week, zero, lim := reserve.Span(7*24*time.Hour), reserve.Span(0), money.MustParse("5000.00")
	a := acme()
	a.Bookings = tenant.BookingPolicy{MaxGPUs: map[string]int{"h100": 8, "1g.10gb": 0}, MaxWindow: &week, MaxHorizon: &zero, MonthlySpendLimit: &lim}
	_, err := s.Put(ctx, "tester", []tenant.Tenant{a, globex()})
	must(t, err)
	got, err := s.Get(ctx, "acme")
	must(t, err)
	if diff := cmp.Diff(normalized(a)[0], got); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if g, err := s.Get(ctx, "globex"); err != nil || !g.Bookings.IsZero() {
		t.Errorf("globex's policy: %+v, %v", g.Bookings, err)
	}
	if cs, err := s.Put(ctx, "tester", []tenant.Tenant{a}); err != nil || len(cs) != 0 {
		t.Errorf("re-put unchanged: %v %v", cs, err)
	}
	b := a.Clone()
	b.Bookings.MaxGPUs = map[string]int{"h100": 4}
	b.Bookings.MaxHorizon, b.Bookings.MonthlySpendLimit = nil, nil
	_, err = s.Put(ctx, "alice", []tenant.Tenant{b})
	must(t, err)
	got, err = s.Get(ctx, "acme")
	must(t, err)
	if got.Bookings.String() != "maxgpus=h100:4 maxwindow=7d" {
		t.Errorf("after the change: %q", got.Bookings.String())
	}
	es, err := s.Audit(ctx, tenantstore.AuditFilter{Kind: tenantstore.AuditKind, Name: "acme", Limit: 1})
	must(t, err)
	if len(es) != 1 || es[0].After == nil || !strings.Contains(*es[0].After, `"bookings":{"maxGPUs":{"h100":4},"maxWindow":"7d"}`) {
		t.Errorf("audit after the change: %+v", es)
	}
	b.Bookings = tenant.BookingPolicy{}
	_, err = s.Put(ctx, "alice", []tenant.Tenant{b})
	must(t, err)
	if got, err := s.Get(ctx, "acme"); err != nil || !got.Bookings.IsZero() {
		t.Errorf("after unsetting: %+v, %v", got.Bookings, err)
	}
}

// An adopted tenant's origin (what existed in Slurm) is stored whole; a
// deletion asking for a release marks it releasing, a purge after that
// deleting; a tenant without an origin is deleted whatever is asked.
func testOriginAndRelease(t *testing.T, s Store) {
	ctx := context.Background()
	a := acme()
	a.Adopted = true
	a.Origin = &tenant.Origin{Description: "Acme site", Organization: "acme-site",
		Assocs:       []tenant.OriginAssoc{{User: "bob", QOS: []string{"normal", "long"}, DefaultQOS: "normal"}, {User: "alice"}},
		Coordinators: []string{"bob"},
		QOS:          &tenant.OriginQOS{Description: "site qos", GrpTRES: tenant.TRES{"cpu": 32}}}
	_, err := s.Put(ctx, "tester", []tenant.Tenant{a, globex()})
	must(t, err)
	got, err := s.Get(ctx, "acme")
	must(t, err)
	if diff := cmp.Diff(normalized(a), []tenant.Tenant{got}); diff != "" {
		t.Errorf("origin round trip (-want +got):\n%s", diff)
	}
	st, _ := s.GetStored(ctx, "acme")
	st.State = tenant.Releasing
	g, _ := s.GetStored(ctx, "globex")
	g.State = tenant.Releasing // not adopted: deleted whole
	must(t, s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{st, g}}))
	if got, _ := s.Get(ctx, "acme"); got.State != tenant.Releasing || !got.Releases() {
		t.Errorf("acme after a release: state %s", got.State)
	}
	if got, _ := s.Get(ctx, "globex"); got.State != tenant.Deleting {
		t.Errorf("globex (created by gpubridge) after a release: state %s, want deleting", got.State)
	}
	st, _ = s.GetStored(ctx, "acme")
	st.State = tenant.Deleting
	must(t, s.Commit(ctx, "tester", tenant.Edit{Delete: []tenant.Stored{st}}))
	after, _ := s.GetStored(ctx, "acme")
	if after.State != tenant.Deleting || after.Version != st.Version+1 || after.Origin == nil {
		t.Errorf("acme after a purge: state %s version %d (was %d), origin %v", after.State, after.Version, st.Version, after.Origin)
	}
}
