package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func TestAuditSummary(t *testing.T) {
	s := func(v string) *string { return &v }
	cases := map[string]struct {
		kind          string
		before, after *string
		want          string
	}{
		"create": {kind: "tenant", after: s(`{"name":"acme","gpus":{"h100":2},"users":["alice"],"state":"active"}`), want: "GPUs=h100:2 Users=alice State=active"},
		"modify": {kind: "tenant", before: s(`{"name":"acme","gpus":{"h100":2}}`), after: s(`{"name":"acme","gpus":{"h100":3}}`), want: "GPUs h100:2 -> h100:3"},
		"remove": {kind: "tenant", before: s(`{"name":"acme"}`), want: "removed"},
		"other":  {kind: "ratecard", before: s(`1`), after: s(`2`), want: "1 -> 2"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := auditSummary(c.kind, c.before, c.after); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestBookingAuditSummary: show audit summarises the booking store's kinds
// with their views (bridge/reserve/view).
func TestBookingAuditSummary(t *testing.T) {
	s := func(v string) *string { return &v }
	created := s(`{"id":4,"tenant":"acme","kind":"gpu","gpuType":"h100","count":2,"start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","purpose":"p","state":"requested"}`)
	projected := s(`{"id":4,"tenant":"acme","kind":"gpu","gpuType":"h100","count":2,"start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","purpose":"p","state":"scheduled","held":{"reservation":"gpubridge-4","start":"2026-12-01T09:00:00Z","end":"2026-12-01T10:00:00Z","count":2}}`)
	cases := map[string]struct {
		kind          string
		before, after *string
		want          string
	}{
		"create":  {"booking", nil, created, `acme h100:2 2026-12-01T09:00:00Z..2026-12-01T10:00:00Z "p"`},
		"project": {"booking", created, projected, "state requested -> scheduled; no reservation -> gpubridge-4 2 2026-12-01T09:00:00Z..2026-12-01T10:00:00Z"},
		"maintenance": {"maintenance", nil, s(`{"id":1,"nodes":["gpu-b"],"start":"2026-12-02T00:00:00Z","end":"2026-12-03T00:00:00Z","reason":"firmware"}`),
			`gpu-b 2026-12-02T00:00:00Z..2026-12-03T00:00:00Z "firmware"`},
	}
	for name, c := range cases {
		if got := auditSummary(c.kind, c.before, c.after); got != c.want {
			t.Errorf("%s: %q\nwant %q", name, got, c.want)
		}
	}
}

// TestTenantInputRefusedOffline: the tenant commands' own refusals (their
// parsers', and import's) come before anything is opened (an Env without
// configuration), exit 2.
func TestTenantInputRefusedOffline(t *testing.T) {
	ctx := context.Background()
	e := &Env{ConfigPath: "/nonexistent/gpubridge.yaml"}
	_, modify := ParseModifyTenant("acme", map[string]string{})
	_, noTenant := ParseUser("bob", map[string]string{"admin": "yes"})
	_, badAdmin := ParseUser("bob", map[string]string{"account": "acme", "admin": "maybe"})
	_, removeNoTenant := ParseUser("bob", map[string]string{})
	_, noImport := e.ImportTenants(ctx, "gpubridge import", nil, false, nil)
	cases := map[string]struct {
		err  error
		want string
	}{
		"modify without set":     {modify, ModifyTenantUsage},
		"add user, no tenant":    {noTenant, UserUsage},
		"add user, bad admin":    {badAdmin, "admin: "},
		"delete user, no tenant": {removeNoTenant, UserUsage},
		"import nothing":         {noImport, "name the accounts to import, or give --marked"},
	}
	for name, c := range cases {
		if !errors.Is(c.err, ErrInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v; want an input error with %q", name, c.err, c.want)
		}
	}
	// account= names the tenant when tenant= is not given; past the
	// refusals the configuration is read (and missing here).
	r, err := ParseUser("bob", map[string]string{"account": "acme", "admin": "yes"})
	if err != nil || r.Tenant != "acme" || !r.Admin {
		t.Fatalf("account=acme admin=yes: %+v, %v", r, err)
	}
	r.What = "gpubridge add user"
	if _, err := e.AddUser(ctx, r); err == nil || errors.Is(err, ErrInput) && strings.Contains(err.Error(), UserUsage) {
		t.Errorf("account=acme: %v; want the configuration's error", err)
	}
}

func TestUserTenant(t *testing.T) {
	for where, want := range map[string]string{"tenant=a": "a", "account=b": "b", "tenant=a account=b": "a"} {
		m := map[string]string{}
		for _, kv := range strings.Fields(where) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		if r, err := ParseUser("bob", m); r.Tenant != want || err != nil {
			got := r.Tenant
			t.Errorf("%s: %q, %v; want %q", where, got, err, want)
		}
	}
}

// TestAsks: without a confirmer (-i) nothing is asked; with one, its
// answer is the use case's.
func TestAsks(t *testing.T) {
	if err := asks(nil, "x"); err != nil {
		t.Errorf("nil confirm: %v", err)
	}
	no := errors.New("no")
	var asked string
	if err := asks(func(s string) error { asked = s; return no }, "Deleting"); err != no || asked != "Deleting" {
		t.Errorf("asks: %v, asked %q", err, asked)
	}
	var ask string
	_ = confirmChanges(func(s string) error { ask = s; return nil })("acme", []tenant.FieldChange{{Title: "GPUs", Old: "h100:1", New: "h100:2"}})
	if !strings.HasPrefix(ask, " Modifying tenant\n  acme\n") || !strings.Contains(ask, "h100:1 -> h100:2") {
		t.Errorf("confirmChanges asked %q", ask)
	}
}

// TestPlanReport: plan's text is the plan printer's, its pending changes
// count Slurm changes and tenants dropped; apply's --json is the same
// object as plan's (the guard file's path is not in it).
func TestPlanReport(t *testing.T) {
	r := PlanReport{Plan: &reconcile.Plan{}, Reads: 3}
	if got := r.Text(); got != "No changes: Slurm matches the tenants.\n" {
		t.Errorf("empty plan: %q", got)
	}
	if r.Pending() != 0 {
		t.Errorf("empty plan: %d pending", r.Pending())
	}
	r.Changes = []reconcile.Change{{Action: reconcile.Create, Kind: reconcile.KindAccount, Name: "acme"}}
	r.Removed = []string{"gone"}
	if r.Pending() != 2 {
		t.Errorf("pending %d, want 2", r.Pending())
	}
	plan, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := json.Marshal(ApplyReport{PlanReport: r, GuardPath: "/etc/slurm/guard.lua"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(plan), string(applied)); diff != "" {
		t.Errorf("apply's JSON differs from plan's (-plan +apply):\n%s", diff)
	}
	want := "Guard file: not written (give --guard-file or set GPUBRIDGE_GUARD_FILE; see contrib/job_submit.lua).\nApply complete: 1 change(s) in Slurm; slurmrestd requests: 3 read(s), 0 write(s).\n"
	if got := (ApplyReport{PlanReport: r}).Text(); got != want {
		t.Errorf("apply without a guard file: %q\nwant %q", got, want)
	}
}

// TestDumpText: without a directory dump prints the tenants file; with
// one, what it wrote, the rate card's line only once it was dumped.
func TestDumpText(t *testing.T) {
	td := TenantsDump{File: tenant.File{Tenants: []tenant.Tenant{{Name: "a"}, {Name: "b"}}, Delete: []string{"c"}}, YAML: []byte("tenants: ...\n")}
	if got := (Dump{Tenants: td}).Text(); got != "tenants: ...\n" {
		t.Errorf("stdout: %q", got)
	}
	td.Path = "/d/tenants.yaml"
	wrote := "wrote /d/tenants.yaml: 2 tenant(s), 1 being deleted\n"
	cases := map[string]struct {
		card *CardDump
		want string
	}{
		"card failed": {nil, wrote},
		"no card":     {&CardDump{Path: "/d/ratecard.yaml"}, wrote + "no rate card: /d/ratecard.yaml not written\n"},
		"card": {&CardDump{Path: "/d/ratecard.yaml", Written: true, Card: pricing.Card{Currency: "EUR", Rates: make([]pricing.Rate, 2), Types: make([]pricing.GPUType, 1)}},
			wrote + "wrote /d/ratecard.yaml: EUR, 2 rate(s), 1 GPU type(s)\n"},
	}
	for name, c := range cases {
		if got := (Dump{Tenants: td, Card: c.card}).Text(); got != c.want {
			t.Errorf("%s: %q\nwant %q", name, got, c.want)
		}
	}
	if got := (Dump{}).Text(); got != "" {
		t.Errorf("failed dump prints %q", got)
	}
}

// TestAuditLogTable: one row per entry, times in UTC to the second, the
// change summarised by kind; no entries are [] for --json.
func TestAuditLogTable(t *testing.T) {
	s := func(v string) *string { return &v }
	at := time.Date(2026, 12, 1, 12, 0, 0, 500, time.FixedZone("CET", 3600))
	tb := AuditLog{{ID: 7, At: at, Actor: "root", Action: "modify", ObjectKind: "ratecard", ObjectName: "current", Before: s("1"), After: s("2")}}.Table()
	if diff := cmp.Diff([][]string{{"7", "2026-12-01T11:00:00Z", "root", "modify", "ratecard", "current", "1 -> 2"}}, tb.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if raw, ok := AuditLog(nil).Table().Raw.([]sqldb.AuditEntry); !ok || raw == nil {
		t.Errorf("no entries: Raw %#v, want an empty list", raw)
	}
}
