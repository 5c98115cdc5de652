package view

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
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
		"applied":      {Applied("/etc/g.lua", true, 3, 4, 2), "Guard file /etc/g.lua updated.\nApply complete: 3 change(s) in Slurm; slurmrestd requests: 4 read(s), 2 write(s).\n"},
		"no guard":     {Applied("", false, 0, 3, 0), "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).\nApply complete: 0 change(s) in Slurm; slurmrestd requests: 3 read(s), 0 write(s).\n"},
		"guard same":   {Applied("/etc/g.lua", false, 0, 3, 0), "Apply complete: 0 change(s) in Slurm; slurmrestd requests: 3 read(s), 0 write(s).\n"},
	}
	for name, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q\nwant %q", name, c.got, c.want)
		}
	}
}
