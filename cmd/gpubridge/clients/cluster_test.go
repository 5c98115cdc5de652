package clients_test

import (
	"context"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients/clientstest"
)

// The cluster handle's name is cluster: when configured (nothing
// connects); unset, it is the one slurmrestd reports, resolved at the
// first need: while slurmrestd cannot be used (here: it refuses the token) Name fails, and once it is back
// the name is resolved and then kept for the Set, with the sacctmgr runner
// made for it.
func TestClusterName(t *testing.T) {
	srv := clientstest.NewSlurm("served", "t")
	defer srv.Close()
	c := testConfig(t, srv, "")
	c.SlurmRest.Token = "t"
	c.Cluster = "served"
	ctx := context.Background()
	s := clients.New(c, fakeOptions(&clientstest.DB{}))
	defer s.Close()
	if n, err := s.Cluster().Name(ctx); n != "served" || err != nil || len(s.Built()) != 0 {
		t.Fatalf("configured: Name = %q, %v (built %v); want served without connecting", n, err, s.Built())
	}
	if !clients.NamesCluster(c) {
		t.Fatal("NamesCluster with cluster: set is false")
	}

	c.Cluster = ""
	c.Reconcile.Sacctmgr = "sacctmgr"
	if clients.NamesCluster(c) {
		t.Fatal("NamesCluster with cluster: unset is true")
	}
	srv.SetToken("revoked")
	u := clients.New(c, fakeOptions(&clientstest.DB{}))
	defer u.Close()
	if n, err := u.Cluster().Name(ctx); err == nil {
		t.Fatalf("unset, slurmrestd refusing: Name = %q; want an error", n)
	}
	if u.Sacctmgr() != nil {
		t.Fatal("the sacctmgr runner exists before the name is known")
	}
	srv.SetToken("t")
	if n, err := u.Cluster().Name(ctx); n != "served" || err != nil {
		t.Fatalf("unset, slurmrestd usable again: Name = %q, %v; want served", n, err)
	}
	r, err := u.Cluster().Sacctmgr(ctx)
	if err != nil || r == nil || r.Cluster != "served" || u.Sacctmgr() != r {
		t.Fatalf("Sacctmgr = %v, %v; want the runner for cluster served", r, err)
	}
	if u.Cluster().PoolPartition() != c.Tenants.PoolPartition {
		t.Fatalf("PoolPartition = %q", u.Cluster().PoolPartition())
	}
}
