package reconcile_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/reconciletest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

var resvNaming = tenant.Naming{QOSPrefix: "q-", OnDemandQOS: "ondemand", ReservationQOSSuffix: "-resv", ReservationPrefix: "gpubridge-"}

func planWith(t *testing.T, c *reconciletest.Cluster, ts []tenant.Tenant, n tenant.Naming, d *reconcile.DeletePolicy) *reconcile.Plan {
	t.Helper()
	p, err := reconcile.ComputeWith(context.Background(), c, ts, n, reconcile.Options{Deletes: d})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func applyWith(t *testing.T, c *reconciletest.Cluster, ts []tenant.Tenant, n tenant.Naming) *reconcile.Plan {
	t.Helper()
	p := planWith(t, c, ts, n, &reconcile.DeletePolicy{MaxShare: 0.5})
	if err := reconcile.Apply(context.Background(), c, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReservationQOS: each tenant gets its reservation QOS, flagged
// REQUIRED_RESERVATION, on its users' associations; the flag and the
// limits are repaired when changed out of band (and the flag removed from
// a tenant QOS); a tenant's deletion removes both of its QOS, counted as
// one tenant by the delete policy, once its jobs have ended.
func TestReservationQOS(t *testing.T) {
	c := &reconciletest.Cluster{}
	ts := []tenant.Tenant{acme(), team("globex"), team("hooli")}
	p := applyWith(t, c, ts, resvNaming)
	got := lines(p)
	for _, want := range []string{
		"+ qos q-acme-resv  GrpTRES=(none) Flags=REQUIRED_RESERVATION",
		"+ user alice (acme)  QOS=ondemand,q-acme,q-acme-resv DefaultQOS=q-acme",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("plan lacks %q:\n%v", want, got)
		}
	}
	if p := planWith(t, c, ts, resvNaming, nil); !p.Empty() {
		t.Fatalf("not converged: %v", lines(p))
	}

	// Drift: the flag dropped, a limit added; the flag set on the tenant QOS.
	c.SetRequiresReservation("q-acme-resv", false)
	c.SetGrpTRES("q-acme-resv", tenant.TRES{"gres/gpu:h100": 1})
	c.SetRequiresReservation("q-globex", true)
	p = applyWith(t, c, ts, resvNaming)
	if diff := cmp.Diff([]string{
		"~ qos q-acme-resv  GrpTRES gres/gpu:h100=1 -> (none)",
		"~ qos q-acme-resv  Flags (none) -> REQUIRED_RESERVATION",
		"~ qos q-globex  Flags REQUIRED_RESERVATION -> (none)",
	}, lines(p)); diff != "" {
		t.Errorf("drift repair (-want +got):\n%s", diff)
	}
	if p := planWith(t, c, ts, resvNaming, nil); !p.Empty() {
		t.Fatalf("not repaired: %v", lines(p))
	}

	// Deletion waits for the account's jobs, then takes both QOS; the
	// policy counts one tenant of three.
	c.Jobs = []reconcile.JobCount{{Account: "hooli", User: "hooliu1", Running: 1}}
	p = applyWith(t, c, deleting(ts, "hooli"), resvNaming)
	for _, l := range lines(p) {
		if l == "- qos q-hooli-resv" || l == "- qos q-hooli" {
			t.Errorf("deleted while a job runs: %v", lines(p))
		}
	}
	c.Jobs = nil
	p = planWith(t, c, deleting(ts, "hooli"), resvNaming, &reconcile.DeletePolicy{MaxShare: 0.4})
	if p.MassDelete != nil {
		t.Fatalf("delete policy counts the reservation QOS as a tenant of its own: %+v", p.MassDelete)
	}
	got = lines(p)
	for _, want := range []string{"- qos q-hooli", "- qos q-hooli-resv", "- account hooli"} {
		if !slices.Contains(got, want) {
			t.Errorf("deletion lacks %q:\n%v", want, got)
		}
	}
	if diff := cmp.Diff([]string{"hooli"}, p.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	// A scratch scope that holds the tenant removes its reservation QOS too.
	scoped, err := reconcile.ComputeWith(context.Background(), c, deleting(ts, "hooli"), resvNaming,
		reconcile.Options{Scope: func(n string) bool { return n == "hooli" }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(lines(scoped), "- qos q-hooli-resv") {
		t.Errorf("scoped deletion keeps the reservation QOS: %v", lines(scoped))
	}
}
