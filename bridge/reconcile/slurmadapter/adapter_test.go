package slurmadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// client records the calls the adapter makes (the acceptance runs on the
// testbed; this checks the mapping).
type client struct {
	qos    []slurmrest.QOS
	accts  []slurmrest.Account
	assocs []slurmrest.Association
	jobs   []slurmrest.Job
	tres   []slurmrest.TRES
	calls  []string
	specs  []slurmrest.QOSSpec
}

func (c *client) Cluster() string { return "testbed" }
func (c *client) ListQOS(context.Context) ([]slurmrest.QOS, error) {
	c.calls = append(c.calls, "ListQOS")
	return c.qos, nil
}
func (c *client) ListAccounts(context.Context) ([]slurmrest.Account, error) {
	c.calls = append(c.calls, "ListAccounts")
	return c.accts, nil
}
func (c *client) ListAssociations(_ context.Context, f slurmrest.AssociationFilter) ([]slurmrest.Association, error) {
	c.calls = append(c.calls, fmt.Sprintf("ListAssociations %v own=%v", f.Clusters, f.Own))
	return c.assocs, nil
}
func (c *client) ListJobs(_ context.Context, f slurmrest.JobFilter) ([]slurmrest.Job, error) {
	c.calls = append(c.calls, fmt.Sprintf("ListJobs %v", f.Accounts))
	return c.jobs, nil
}
func (c *client) ListTRES(context.Context) ([]slurmrest.TRES, error) { return c.tres, nil }
func (c *client) SetQOS(_ context.Context, s []slurmrest.QOSSpec) error {
	c.calls = append(c.calls, fmt.Sprintf("SetQOS %d", len(s)))
	c.specs = s
	return nil
}
func (c *client) CreateAccounts(_ context.Context, s []slurmrest.AccountSpec) error {
	c.calls = append(c.calls, fmt.Sprintf("CreateAccounts %v", s))
	return nil
}
func (c *client) CreateUsers(_ context.Context, s []slurmrest.UserSpec) error {
	c.calls = append(c.calls, fmt.Sprintf("CreateUsers %v", s))
	return nil
}
func (c *client) SetAssociationsKnown(_ context.Context, s []slurmrest.AssociationSpec, clustered func(string) bool) error {
	var unknown []string
	for _, x := range s {
		if !clustered(x.Account) && !slices.Contains(unknown, x.Account) {
			unknown = append(unknown, x.Account)
		}
	}
	c.calls = append(c.calls, fmt.Sprintf("SetAssociations %v unchecked=%v", s, unknown))
	return nil
}
func (c *client) DeleteAssociations(_ context.Context, f slurmrest.AssociationFilter) ([]string, error) {
	c.calls = append(c.calls, fmt.Sprintf("DeleteAssociations %v %v %v", f.Clusters, f.Accounts, f.Users))
	return nil, nil
}
func (c *client) DeleteAccounts(_ context.Context, n []string) error {
	c.calls = append(c.calls, fmt.Sprintf("DeleteAccounts %v", n))
	return nil
}
func (c *client) DeleteQOSNames(_ context.Context, n []string) error {
	c.calls = append(c.calls, fmt.Sprintf("DeleteQOSNames %v", n))
	return nil
}
func (c *client) AddCoordinators(_ context.Context, a string, u []string) error {
	c.calls = append(c.calls, fmt.Sprintf("AddCoordinators %s %v", a, u))
	return nil
}
func (c *client) RemoveCoordinators(_ context.Context, a string, u []string) error {
	c.calls = append(c.calls, fmt.Sprintf("RemoveCoordinators %s %v", a, u))
	return nil
}

// setter also offers the batch account write.
type setter struct {
	client
	set [][]slurmrest.Account
}

func (s *setter) SetAccounts(_ context.Context, a []slurmrest.Account) error {
	s.set = append(s.set, a)
	return nil
}

func TestReadState(t *testing.T) {
	c := &client{
		qos: []slurmrest.QOS{
			{Name: "acme", Description: "gpubridge: quota of tenant acme", GrpTRES: []slurmrest.TRES{slurmrest.GPU("h100", 2), {Type: "cpu", Count: 8}}, MaxSubmitPerUser: slurmrest.LimitOf(0)},
			{Name: "normal", Description: "Normal QOS default", MaxSubmitPerUser: slurmrest.Unlimited()},
		},
		accts: []slurmrest.Account{
			{Name: "root", Description: "default root account"},
			{Name: "acme", Description: "gpubridge: tenant", Organization: "gpubridge", Coordinators: []string{"bob", "alice"}},
			{Name: "old", Deleted: true},
			{Name: "lonely", Description: "no association"},
		},
		assocs: []slurmrest.Association{
			{Account: "root"},
			{Account: "acme"},
			{Account: "acme", User: "alice", QOS: []string{"ondemand", "acme"}, DefaultQOS: "acme", IsDefault: true},
			{Account: "acme", User: "alice", Partition: "pool", QOS: []string{"normal"}},
		},
	}
	st, err := New(c).ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.State{
		QOS: []tenant.QOS{
			{Name: "acme", Description: "gpubridge: quota of tenant acme", GrpTRES: tenant.TRES{"gres/gpu:h100": 2, "cpu": 8}, SubmitBlocked: true},
			{Name: "normal", Description: "Normal QOS default", GrpTRES: tenant.TRES{}},
		},
		Accounts: []reconcile.Account{
			{Account: tenant.Account{Name: "acme", Description: "gpubridge: tenant", Organization: "gpubridge"}, Clustered: true, Coordinators: []string{"alice", "bob"}},
			{Account: tenant.Account{Name: "lonely", Description: "no association"}},
		},
		Assocs: []reconcile.Assoc{{Assoc: tenant.Assoc{Account: "acme", User: "alice", QOS: []string{"acme", "ondemand"}, DefaultQOS: "acme"}, IsDefault: true}},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ListQOS", "ListAccounts", "ListAssociations [testbed] own=true"}, c.calls); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestPutQOSBlocking(t *testing.T) {
	c := &client{}
	err := New(c).PutQOS(context.Background(), []reconcile.QOSWrite{
		{QOS: tenant.QOS{Name: "new", GrpTRES: tenant.TRES{"gres/gpu:h100": 2}}, Create: true},
		{QOS: tenant.QOS{Name: "gone", SubmitBlocked: true}},
		{QOS: tenant.QOS{Name: "back", GrpTRES: tenant.TRES{"cpu": 4}}, ClearTRES: []string{"gres/gpu:h100"}},
		{QOS: tenant.QOS{Name: "ondemand", Shared: true}, Create: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []slurmrest.QOSSpec{
		{Name: "new", GrpTRES: []slurmrest.TRES{slurmrest.GPU("h100", 2)}, New: true},
		{Name: "gone", MaxSubmitPerUser: slurmrest.LimitOf(0)},
		{Name: "back", GrpTRES: []slurmrest.TRES{{Type: "cpu", Count: 4}}, ClearGrpTRES: []string{"gres/gpu:h100"}, MaxSubmitPerUser: slurmrest.Unlimited()},
		{Name: "ondemand", New: true},
	}
	if diff := cmp.Diff(want, c.specs); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
}

func TestActiveJobs(t *testing.T) {
	c := &client{jobs: []slurmrest.Job{
		{Account: "acme", User: "alice", State: []string{"RUNNING"}},
		{Account: "acme", User: "alice", State: []string{"PENDING"}},
		{Account: "ACME", User: "bob", State: []string{"COMPLETED", "COMPLETING"}},
		{Account: "acme", User: "bob", State: []string{"CANCELLED"}},
		{Account: "acme", User: "bob", State: []string{"SUSPENDED"}},
	}}
	got, err := New(c).ActiveJobs(context.Background(), []string{"acme"})
	if err != nil {
		t.Fatal(err)
	}
	want := []reconcile.JobCount{{Account: "acme", User: "alice", Running: 1, Pending: 1}, {Account: "acme", User: "bob", Running: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWritesMapping(t *testing.T) {
	ctx := context.Background()
	c := &client{}
	a := New(c)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.DeleteAssocs(ctx, []reconcile.AssocKey{{Account: "acme", User: "bob"}, {Account: "acme", User: "carol"}, {Account: "globex", User: "dave"}, {Account: "acme", User: "alice"}}))
	must(a.AddCoordinators(ctx, []tenant.Coord{{Account: "acme", User: "alice"}, {Account: "acme", User: "bob"}, {Account: "globex", User: "carol"}}))
	must(a.DeleteAccounts(ctx, []string{"x", "y"}))
	must(a.SetDefaultAccounts(ctx, []tenant.User{{Name: "alice", DefaultAccount: "globex"}}))
	want := []string{
		"DeleteAssociations [testbed] [acme] [bob carol]",
		"DeleteAssociations [testbed] [globex] [dave]",
		"DeleteAssociations [testbed] [acme] [alice]",
		"AddCoordinators acme [alice bob]",
		"AddCoordinators globex [carol]",
		"DeleteAccounts [x y]",
		"CreateUsers [{alice globex}]",
	}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if err := a.ModifyAccounts(ctx, []tenant.Account{{Name: "acme"}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ModifyAccounts without SetAccounts: %v", err)
	}
}

// TestSetAccountsWhenOffered: with the batch write, coordinator changes and
// account modifications are one request with whole records.
func TestSetAccountsWhenOffered(t *testing.T) {
	ctx := context.Background()
	s := &setter{client: client{accts: []slurmrest.Account{{Name: "acme", Description: "gpubridge: tenant", Organization: "gpubridge", Coordinators: []string{"alice"}}}}}
	a := New(s)
	if _, err := a.ReadState(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.AddCoordinators(ctx, []tenant.Coord{{Account: "acme", User: "bob"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.ModifyAccounts(ctx, []tenant.Account{{Name: "acme", Description: "gpubridge: Acme", Organization: "acme-corp"}}); err != nil {
		t.Fatal(err)
	}
	want := [][]slurmrest.Account{
		{{Name: "acme", Description: "gpubridge: tenant", Organization: "gpubridge", Coordinators: []string{"alice", "bob"}}},
		{{Name: "acme", Description: "gpubridge: Acme", Organization: "acme-corp", Coordinators: []string{"alice", "bob"}}},
	}
	if diff := cmp.Diff(want, s.set); diff != "" {
		t.Errorf("SetAccounts (-want +got):\n%s", diff)
	}
}

func TestGPUTypes(t *testing.T) {
	c := &client{tres: []slurmrest.TRES{{Type: "cpu"}, {Type: "gres", Name: "gpu"}, {Type: "gres", Name: "gpu:h100"}, {Type: "gres", Name: "gpu:1g.10gb"}, {Type: "gres", Name: "gpumem"}}}
	got, err := New(c).GPUTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1g.10gb", "h100"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// nodeClient is client with nodes: the slurmrestd of one of several
// clusters of a slurmdbd.
type nodeClient struct {
	*client
	nodes []slurmrest.Node
}

func (c nodeClient) ListNodes(context.Context) ([]slurmrest.Node, error) { return c.nodes, nil }

// With TypesOnNodes, GPUTypes keeps the TRES types that a node of the
// cluster has: slurmdbd's TRES are every cluster's, and 3g.40gb here is
// only another cluster's. Without a node read it refuses.
func TestGPUTypesOnNodes(t *testing.T) {
	tres := []slurmrest.TRES{{Type: "gres", Name: "gpu:h100"}, {Type: "gres", Name: "gpu:1g.10gb"}, {Type: "gres", Name: "gpu:3g.40gb"}, {Type: "gres", Name: "gpu:a100"}}
	c := nodeClient{client: &client{tres: tres}, nodes: []slurmrest.Node{
		{Name: "n1", GRES: []slurmrest.GRES{{Name: "gpu", Type: "h100", Count: 8}}},
		{Name: "n2", GRES: []slurmrest.GRES{{Name: "gpu", Type: "1g.10gb", Count: 7}, {Name: "gpu", Type: "a100", Count: 0}}},
		{Name: "cpu1"},
	}}
	got, err := New(c).TypesOnNodes().GPUTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1g.10gb", "a100", "h100"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if all, _ := New(c).GPUTypes(context.Background()); len(all) != 4 {
		t.Errorf("without TypesOnNodes: %q; want all four TRES types", all)
	}
	if _, err := New(&client{tres: tres}).TypesOnNodes().GPUTypes(context.Background()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("TypesOnNodes on a client without ListNodes: %v; want ErrUnsupported", err)
	}
}

// TestReservationQOSFlags: a reservation QOS is read from and written with
// REQUIRED_RESERVATION on every write (an update without flags clears
// them); a flag to clear is sent as REMOVE.
func TestReservationQOSFlags(t *testing.T) {
	c := &client{qos: []slurmrest.QOS{{Name: "acme-resv", Description: "gpubridge: bookings of tenant acme", Flags: []string{"REQUIRED_RESERVATION"}, MaxSubmitPerUser: slurmrest.Unlimited()}}}
	st, err := New(c).ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.QOS) != 1 || !st.QOS[0].RequiresReservation {
		t.Errorf("read %+v; want RequiresReservation", st.QOS)
	}
	err = New(c).PutQOS(context.Background(), []reconcile.QOSWrite{
		{QOS: tenant.QOS{Name: "acme-resv", GrpTRES: tenant.TRES{}, RequiresReservation: true}, Create: true},
		{QOS: tenant.QOS{Name: "globex-resv", GrpTRES: tenant.TRES{}, RequiresReservation: true, SubmitBlocked: true}},
		{QOS: tenant.QOS{Name: "globex", GrpTRES: tenant.TRES{}}, ClearFlags: []string{"REQUIRED_RESERVATION"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []slurmrest.QOSSpec{
		{Name: "acme-resv", Flags: []string{"REQUIRED_RESERVATION"}, New: true},
		{Name: "globex-resv", Flags: []string{"REQUIRED_RESERVATION"}, MaxSubmitPerUser: slurmrest.LimitOf(0)},
		{Name: "globex", Flags: []string{"REMOVE", "REQUIRED_RESERVATION"}, MaxSubmitPerUser: slurmrest.Unlimited()},
	}
	if diff := cmp.Diff(want, c.specs); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
}
