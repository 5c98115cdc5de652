//go:build integration

package main

// Acceptance of `gpubridge dump` on the testbed: a store dumped, restored
// into a scratch database and dumped again gives the same files byte for
// byte, and applying a dump against the cluster changes nothing. Tenants
// lcd1a/lcd1b (real store, applied) and lcd2a/lcd2b/lcd2site (scratch
// stores only; lcd2site is a site account made with sacctmgr).

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

const dumpTestCard = `version: 1
currency: EUR
types:
  - {name: 1g.10gb, parent: h100}
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2026-01-01}
  - {type: h100, tier: ondemand, perGPUHour: "3.50", from: 2026-01-01}
`

// cliClosed runs gpubridge in-process as run does (runContext: the same
// exit statuses, and the database pool it opened closed at the end: the
// shared MariaDB has a connection limit).
func cliClosed(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := runContext(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := cliClosed(args...)
	if code != 0 {
		t.Fatalf("gpubridge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// TestDumpRestoreScratch: dump a store with every kind of field (an
// imported tenant, burst and booking policy, limits, a rate card), restore
// it into another scratch database with what apply -f and load ratecard
// do to the store, dump again: the same bytes.
func TestDumpRestoreScratch(t *testing.T) {
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	ctx := context.Background()
	try := func(args ...string) { env.Run(ctx, "", nil, args...) }
	try("sacctmgr", "-i", "delete", "account", "lcd2site")
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", "lcd2site", "description=Site team", "organization=physics")
	t.Cleanup(func() { try("sacctmgr", "-i", "delete", "account", "lcd2site") })
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "120s")

	scratch := func(prefix string) *storetest.Scratch {
		sc, err := storetest.New(ctx, env.DBDSN, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() })
		return sc
	}
	a, b := scratch("gpubridge_lcda"), scratch("gpubridge_lcdb")
	tmp := t.TempDir()
	card := filepath.Join(tmp, "card.yaml")
	if err := os.WriteFile(card, []byte(dumpTestCard), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("GPUBRIDGE_DB_DSN", a.DSN)
	mustCLI(t, "-i", "add", "tenant", "lcd2a", "description=Team A", "organization=org-a", "users=alice,bob", "admins=alice",
		"gpus=h100:2,1g.10gb:3", "cpus=64", "memory=512G", "burst=yes", "burstmaxgpus=2", "burstbudget=100.50",
		"booking.maxgpus=h100:1", "booking.maxwindow=2d", "booking.minlead=1h", "booking.spendlimit=99.99")
	mustCLI(t, "-i", "add", "tenant", "lcd2b", "users=carol", "gpus=h100:0")
	mustCLI(t, "-i", "import", "lcd2site")
	mustCLI(t, "-i", "load", "ratecard", "-f", card)
	dirA := filepath.Join(tmp, "a")
	out := mustCLI(t, "dump", "-f", dirA)
	if !strings.Contains(out, "3 tenant(s)") || !strings.Contains(out, "ratecard.yaml: EUR, 2 rate(s), 1 GPU type(s)") {
		t.Errorf("dump said:\n%s", out)
	}
	tenantsA := readFile(t, filepath.Join(dirA, "tenants.yaml"))
	t.Logf("gpubridge dump -f %s\n%s%s", dirA, out, tenantsA)
	for _, want := range []string{"adopted: true", "monthlySpendLimit: \"99.99\"", "monthlyBudget: \"100.50\"", "organization: org-a"} {
		if !strings.Contains(tenantsA, want) {
			t.Errorf("tenants.yaml lacks %q:\n%s", want, tenantsA)
		}
	}
	if stdout := mustCLI(t, "dump"); stdout != tenantsA {
		t.Errorf("dump to stdout differs from tenants.yaml:\n%s", stdout)
	}

	// Restore into b: the store step of apply -f (its Slurm step is the
	// next test's), and load ratecard.
	f, ps := tenant.ParseFile([]byte(tenantsA), nil, tenant.Rules{})
	if len(ps) > 0 {
		t.Fatalf("parse the dump: %v", ps)
	}
	var e tenant.Edit
	for _, tn := range f.Tenants {
		e.Put = append(e.Put, tenant.Stored{Tenant: tn})
	}
	if err := tenantstore.New(b.DB).Commit(ctx, "lcd-test", e); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_DB_DSN", b.DSN)
	mustCLI(t, "-i", "load", "ratecard", "-f", filepath.Join(dirA, "ratecard.yaml"))
	dirB := filepath.Join(tmp, "b")
	mustCLI(t, "dump", "-f", dirB)
	for _, name := range []string{"tenants.yaml", "ratecard.yaml"} {
		if x, y := readFile(t, filepath.Join(dirA, name)), readFile(t, filepath.Join(dirB, name)); x != y {
			t.Errorf("%s differs after the restore:\nfirst:\n%s\nsecond:\n%s", name, x, y)
		}
	}
}

// TestDumpApplyIsNoOp: applying the dump of applied tenants against the
// same cluster changes nothing, in the store or in Slurm.
func TestDumpApplyIsNoOp(t *testing.T) {
	h := newTenantIT(t, "lcd1a", "lcd1b")
	h.ok("-i", "add", "tenant", "lcd1a", "description=Team A", "users=alice,bob", "admins=alice", "gpus=h100:2",
		"cpus=32", "burst=yes", "burstmaxgpus=1", "booking.maxwindow=1d")
	h.ok("-i", "add", "tenant", "lcd1b", "users=carol", "gpus=1g.10gb:2")
	h.apply()
	f, ps := tenant.ParseFile([]byte(h.ok("dump")), nil, tenant.Rules{})
	if len(ps) > 0 {
		t.Fatalf("parse the dump: %v", ps)
	}
	// Only this test's tenants: the store is shared with other tests.
	f.Tenants = slices.DeleteFunc(f.Tenants, func(tn tenant.Tenant) bool { return !strings.HasPrefix(tn.Name, "lcd1") })
	f.Delete = nil
	if len(f.Tenants) != 2 {
		t.Fatalf("dump holds %d of the test's tenants, want 2", len(f.Tenants))
	}
	file, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.apply("-f", path)
	if len(r.StoreChanges) != 0 || len(mine(r.Changes, "lcd1a", "lcd1b")) != 0 {
		t.Errorf("apply of the dump: store changes %+v, Slurm changes %v", r.StoreChanges, mine(r.Changes, "lcd1a", "lcd1b"))
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
