//go:build integration

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// adoptSite makes a site's own account (its description, organization, a
// user association with its own QOS setting), imports it and applies with
// a quota and a user gpubridge adds; it returns after checking that apply
// changed the site's association.
func adoptSite(t *testing.T, h *tenantIT, acct, siteUser, addedUser string) {
	t.Helper()
	ctx := context.Background()
	try := func(args ...string) { h.env.Run(ctx, "", nil, args...) }
	cleanup := func() {
		try("sacctmgr", "-i", "delete", "account", acct)
		try("sacctmgr", "-i", "delete", "qos", acct, acct+"-resv")
	}
	cleanup()
	t.Cleanup(cleanup)
	h.sacctmgr("-i", "add", "account", acct, "description=Site physics", "organization=site")
	h.sacctmgr("-i", "add", "user", siteUser, "account="+acct, "qos=normal", "defaultqos=normal")

	h.ok("-i", "import", acct)
	h.ok("-i", "modify", "tenant", acct, "set", "gpus=h100:1")
	h.ok("-i", "add", "user", addedUser, "tenant="+acct, "admin=yes")
	h.apply()
	if got := h.sacctmgr("-n", "-P", "show", "assoc", "account="+acct, "user="+siteUser, "format=qos,defaultqos"); !strings.Contains(got, acct) {
		t.Fatalf("apply did not give the site's association the tenant QOS: %q", got)
	}
	if got := h.sacctmgr("-n", "-P", "show", "qos", acct, "format=name"); strings.TrimSpace(got) != acct {
		t.Fatalf("apply did not create QOS %s: %q", acct, got)
	}
}

// assocs lists the account's user associations as user|qos|defaultqos.
func (h *tenantIT) assocs(acct string) []string {
	h.t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "assoc", "account="+acct, "format=user,qos,defaultqos")), "\n") {
		if l != "" && !strings.HasPrefix(l, "|") { // the account's own association has no user
			out = append(out, l)
		}
	}
	return out
}

// TestTenantDeleteAdoptedReleases: deleting an adopted tenant releases the
// site's account: gpubridge's QOS, the user it added and that user's
// coordinator role go; the account keeps its description and organization,
// and the site's association gets back its QOS setting; the tenant is
// dropped from the store. The plan and show tenants say "release".
func TestTenantDeleteAdoptedReleases(t *testing.T) {
	const acct = "adopt14xr"
	h := newTenantIT(t, acct)
	adoptSite(t, h, acct, "frank", "grace")

	out := h.ok("-i", "delete", "tenant", acct)
	if !strings.Contains(out, "Released, not deleted: "+acct) {
		t.Errorf("delete tenant output:\n%s", out)
	}
	var ts []tenant.Tenant
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "tenant", acct)), &ts); err != nil || len(ts) != 1 || ts[0].State != tenant.Releasing {
		t.Fatalf("show tenant after delete: %v %+v", err, ts)
	}
	if plan := h.ok("plan"); !strings.Contains(plan, "- tenant "+acct+"  (release finished: dropped from the store; the site's account and its original users stay)") ||
		strings.Contains(plan, "- account "+acct) {
		t.Errorf("plan of a release:\n%s", plan)
	}
	if _, errs, code := h.cliDeleting("-i", "apply"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}

	if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "account", acct, "format=account,description,organization")); got != acct+"|site physics|site" {
		t.Errorf("site account after release: %q", got)
	}
	if got := h.assocs(acct); strings.Join(got, ";") != "frank|normal|normal" {
		t.Errorf("associations after release: %q, want only the site's frank|normal|normal", got)
	}
	if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "account", acct, "withcoord", "format=coordinators")); got != "" {
		t.Errorf("coordinators after release: %q", got)
	}
	if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "qos", acct+","+acct+"-resv", "format=name")); got != "" {
		t.Errorf("gpubridge's QOS after release: %q", got)
	}
	if _, _, code := h.cli("", "show", "tenant", acct); code == 0 {
		t.Error("the released tenant is still stored")
	}
}

// TestTenantDeleteAdoptedPurge: with --purge an adopted tenant is deleted
// whole, the site's account and association included.
func TestTenantDeleteAdoptedPurge(t *testing.T) {
	const acct = "adopt14xp"
	h := newTenantIT(t, acct)
	adoptSite(t, h, acct, "frank", "grace")

	out := h.ok("-i", "delete", "tenant", acct, "--purge")
	if strings.Contains(out, "Released") {
		t.Errorf("delete --purge output:\n%s", out)
	}
	var ts []tenant.Tenant
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "tenant", acct)), &ts); err != nil || len(ts) != 1 || ts[0].State != tenant.Deleting {
		t.Fatalf("show tenant after delete --purge: %v %+v", err, ts)
	}
	if _, errs, code := h.cliDeleting("-i", "apply"); code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}
	if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "account", acct, "format=account")); got != "" {
		t.Errorf("account after purge: %q", got)
	}
	if got := h.assocs(acct); len(got) != 0 {
		t.Errorf("associations after purge: %q", got)
	}
	if got := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "qos", acct+","+acct+"-resv", "format=name")); got != "" {
		t.Errorf("QOS after purge: %q", got)
	}
	if _, _, code := h.cli("", "show", "tenant", acct); code == 0 {
		t.Error("the purged tenant is still stored")
	}
}
