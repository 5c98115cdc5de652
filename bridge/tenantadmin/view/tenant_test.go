package view

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
)

func TestTenant(t *testing.T) {
	tn := tenant.Tenant{Name: "acme", Description: "Acme ML", GPUs: tenant.Quota{"h100": 2}, Users: []string{"alice", "bob"}, Adopted: true}
	want := ` Adding tenant
  acme
 Settings
  Description  = Acme ML
  GPUs         = h100:2
  Users        = alice,bob
  Burst        = no
  State        = active
`
	if diff := cmp.Diff(want, Tenant(" Adding tenant", tn)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := Inline(tn), "Description=Acme ML GPUs=h100:2 Users=alice,bob State=active Adopted=yes"; got != want {
		t.Errorf("Inline: %q, want %q", got, want)
	}
}

func TestChanges(t *testing.T) {
	got := Changes(" Modifying tenant", "acme", []tenant.FieldChange{{Title: "GPUs", Old: "h100:2", New: "h100:3"}, {Title: "CPUs", Old: "64"}})
	want := ` Modifying tenant
  acme
  GPUs          h100:2 -> h100:3
  CPUs          64 -> (none)
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTenantsTable(t *testing.T) {
	tb := Tenants([]tenant.Tenant{{Name: "acme", GPUs: tenant.Quota{"h100": 2}}}, []string{"name", "gpus"})
	if diff := cmp.Diff([]string{"Name", "GPUs"}, tb.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"acme", "h100:2"}}, tb.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if raw, ok := Tenants(nil, Columns).Raw.([]tenant.Tenant); !ok || raw == nil {
		t.Errorf("no tenants: Raw %#v, want an empty list (--json prints [])", raw)
	}
}

func TestAudit(t *testing.T) {
	s := func(v string) *string { return &v }
	cases := map[string]struct {
		got, want string
	}{
		"tenant created":  {TenantAudit(nil, s(`{"name":"acme","gpus":{"h100":2}}`)), "GPUs=h100:2 State=active"},
		"tenant modified": {TenantAudit(s(`{"name":"acme","cpus":8}`), s(`{"name":"acme"}`)), "CPUs 8 -> (none)"},
		"tenant removed":  {TenantAudit(s(`{"name":"acme"}`), nil), "removed"},
		"value created":   {ValueAudit(nil, s("2")), "2"},
		"value changed":   {ValueAudit(s("1"), s("2")), "1 -> 2"},
		"value removed":   {ValueAudit(s("1"), nil), "was 1"},
		"value none":      {ValueAudit(nil, nil), ""},
	}
	for name, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", name, c.got, c.want)
		}
	}
}

func TestMessages(t *testing.T) {
	cases := map[string]struct {
		got, want string
	}{
		"added":        {Added("acme"), "Tenant acme added. `gpubridge plan` shows the Slurm changes; `gpubridge apply` makes them.\n"},
		"unchanged":    {Modified("acme", false, nil), "Tenant acme: nothing to change.\n"},
		"slurm":        {Modified("acme", true, []tenant.FieldChange{{Title: "GPUs"}}), "Tenant acme modified. `gpubridge apply` makes the change in Slurm.\n"},
		"policy only":  {Modified("acme", true, []tenant.FieldChange{{Title: "Booking"}}), "Tenant acme modified. Nothing changes in Slurm: the booking and burst policy are read from the store (by the next booking and the burst controller's next pass); `gpubridge apply` is not needed.\n"},
		"user added":   {UserAdded("bob", "acme", true), "User bob added to tenant acme. `gpubridge apply` creates the association.\n"},
		"user there":   {UserAdded("bob", "acme", false), "User bob is already in tenant acme.\n"},
		"user removed": {UserRemoved("bob", "acme"), "User bob removed from tenant acme. `gpubridge apply` removes the association once their jobs there have ended.\n"},
		"applied":      {Applied("/etc/g.lua", true, 3, Requests{Reads: 4, Writes: 2}), "Guard file /etc/g.lua updated.\nApply complete: 3 change(s) in Slurm; slurmrestd requests: 4 read(s), 2 write(s).\n"},
		"no guard":     {Applied("", false, 0, Requests{Reads: 3}), "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).\nApply complete: 0 change(s) in Slurm; slurmrestd requests: 3 read(s), 0 write(s).\n"},
		"guard same":   {Applied("/etc/g.lua", false, 0, Requests{Reads: 3}), "Apply complete: 0 change(s) in Slurm; slurmrestd requests: 3 read(s), 0 write(s).\n"},
		"sacctmgr":     {Applied("/etc/g.lua", false, 240, Requests{Reads: 3, Writes: 3, Sacctmgr: 2}), "Apply complete: 240 change(s) in Slurm; slurmrestd requests: 3 read(s), 3 write(s); sacctmgr commands: 2.\n"},
		"deleted":      {Deleted([]string{"acme", "globex"}, nil), "Tenant(s) acme, globex marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n"},
		"released": {Deleted([]string{"acme", "site"}, []string{"site"}), "Tenant(s) acme, site marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n" +
			"Released, not deleted: site (adopted: only gpubridge's objects go; give --purge to delete the site's account too).\n"},
		"many deleted": {Deleted(strings.Fields("t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12"), nil),
			"Tenant(s) t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, ... (12 in all) marked for deletion. `gpubridge apply` blocks their new jobs and removes them once their jobs have ended.\n"},
		"imported":         {Imported([]string{"physics", "chem"}), "Imported physics, chem. `gpubridge plan` shows how apply will align and mark their Slurm objects.\n"},
		"nothing imported": {Imported(nil), "Nothing to import.\n"},
	}
	for name, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q\nwant %q", name, c.got, c.want)
		}
	}
}

// TestConfirmations: delete tenant's and import's confirmations list
// every tenant, say which are released, and carry import's notes.
func TestConfirmations(t *testing.T) {
	got := Deleting([]tenantadmin.Deletion{{Name: "acme"}, {Name: "site", Release: true}})
	want := ` Deleting tenant(s)
  acme
  site  (release: adopted; the site's account and its original users stay)
 (new jobs are refused at the next apply; the Slurm objects go once running and pending jobs end)`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Deleting (-want +got):\n%s", diff)
	}
	got = Importing([]tenant.Tenant{{Name: "physics", Users: []string{"heidi"}}}, []string{"QOS physics has no GrpTRES"})
	want = ` Importing account as tenant
  physics
 Settings
  Users        = heidi
  Burst        = no
  State        = active
 Note: QOS physics has no GrpTRES
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Importing (-want +got):\n%s", diff)
	}
}
