//go:build integration

package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// adoptSite makes a site's own account (its description, organization, a
// user association with its own QOS setting), imports it and applies with
// a quota and a user gpubridge adds; it returns after checking that apply
// changed the site's association.
func adoptSite(t *testing.T, h *tenantIT, acct, siteUser, addedUser string, beforeImport ...func()) {
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
	for _, f := range beforeImport {
		f()
	}

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
// site's account: gpubridge's QOS and the user it added go (admins are no
// coordinators since issue 25); the account keeps its description and organization,
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
	// The plan restores the site's association and deletes only
	// gpubridge's objects (it exits 1: the release deletes the QOS of the
	// only tenant, which the delete policy counts).
	plan, _, _ := h.cli("", "plan")
	for _, want := range []string{
		"~ user frank (" + acct + ")  QOS " + acct + "," + acct + "-resv,ondemand -> normal",
		"~ user frank (" + acct + ")  DefaultQOS " + acct + " -> normal",
		"- user grace (" + acct + ")", "- qos " + acct, // admins are not coordinators (issue 25)
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan of a release lacks %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "- account "+acct) || strings.Contains(plan, "- user frank") {
		t.Errorf("plan of a release deletes the site's objects:\n%s", plan)
	}
	out, errs, code := h.cliDeleting("-i", "apply")
	if code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "- tenant "+acct+"  (release finished: dropped from the store; the site's account and its original users stay)") {
		t.Errorf("apply of a release:\n%s", out)
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

// TestTenantReleaseWaitsOnlyForGpubridgeJobs: a release waits for the
// jobs of the user gpubridge added, not for the site's user's job in the
// site's own QOS, which runs on through the release.
func TestTenantReleaseWaitsOnlyForGpubridgeJobs(t *testing.T) {
	const acct = "adopt14xj"
	h := newTenantIT(t, acct)
	var siteJob int64
	adoptSite(t, h, acct, "frank", "grace", func() {
		siteJob = h.mustSbatch("frank", "-A", acct, "-p", "cpu", "--qos=normal", "--wrap", "sleep 300")
		// Running before the adoption (apply takes normal off frank's
		// QOS list: a pending job of normal would become InvalidQOS).
		h.waitCount([]int64{siteJob}, map[string]int{"RUNNING": 1}, 60*time.Second)
	})
	t.Cleanup(func() { h.env.Run(context.Background(), "", nil, "scancel", strconv.FormatInt(siteJob, 10)) })
	ours := h.mustSbatch("grace", "-A", acct, "-p", "cpu", "--wrap", "sleep 300")
	h.waitCount([]int64{siteJob, ours}, map[string]int{"RUNNING": 2}, 60*time.Second)

	h.ok("-i", "delete", "tenant", acct)
	r := h.apply()
	if len(r.Waiting) != 1 || r.Waiting[0].Name != acct || r.Waiting[0].Running != 1 || !strings.Contains(r.Waiting[0].Reason, "released") {
		t.Errorf("apply after delete: waiting %+v; want %s with 1 running job (grace's, not the site's)", r.Waiting, acct)
	}
	if got := mine(r.Changes, acct); strings.Join(got, ";") != "~ qos "+acct+"  MaxSubmitJobsPerUser (none) -> 0" {
		t.Errorf("apply after delete (release waiting): changes %v", got)
	}

	h.env.Exec(t, "", "scancel", strconv.FormatInt(ours, 10))
	h.waitCount([]int64{ours}, map[string]int{"RUNNING": 0}, 60*time.Second)
	var removed []string
	for deadline := time.Now().Add(30 * time.Second); len(removed) == 0 && time.Now().Before(deadline); time.Sleep(time.Second) {
		out, errs, code := h.cliDeleting("-i", "--json", "apply")
		if code != 0 {
			t.Fatalf("apply: exit %d: %s", code, errs)
		}
		var r applyJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("apply --json: %v\n%s", err, out)
		}
		removed = r.Removed
	}
	if strings.Join(removed, ",") != acct {
		t.Fatalf("release did not finish once gpubridge's job ended: removed %v", removed)
	}
	if st := h.states(siteJob); !strings.HasPrefix(st[siteJob], "RUNNING") {
		t.Errorf("the site's job after the release: %v", st)
	}
	if got := h.assocs(acct); strings.Join(got, ";") != "frank|normal|normal" {
		t.Errorf("associations after release: %q", got)
	}
}
