//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSacctmgrHabits (issue 27): plan -f FILE previews a tenants file
// against the testbed's Slurm without writing or asking (exit 0, 2 with
// --detailed-exitcode, 2 for a bad file); modify tenant where name=X set
// ... changes the tenant (a where naming none exits 2); tenant= naming no
// tenant exits 2 in every show as show tenants NAME does; format= widths.
func TestSacctmgrHabits(t *testing.T) {
	const name = "s27hab"
	h := newTenantIT(t, name)
	dir := t.TempDir()
	file := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(file, []byte("version: 1\ntenants:\n  - name: "+name+"\n    users: [alice]\n    gpus: {h100: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := h.cli("", "plan", "-f", file)
	t.Logf("gpubridge plan -f tenants.yaml </dev/null: exit %d\n%s%s", code, out, errs)
	if code != 0 || !strings.Contains(out, "+ tenant "+name) || !strings.Contains(out, "(store)") || !strings.Contains(out, "account "+name) ||
		strings.Contains(out, "Would you like") {
		t.Errorf("plan -f: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if _, _, code := h.cli("", "show", "tenants", name); code != 2 {
		t.Errorf("after plan -f, show tenants %s: exit %d, want 2 (plan -f wrote nothing)", name, code)
	}
	if _, errs, code := h.cli("", "plan", "--detailed-exitcode", "-f", file); code != 2 || !strings.Contains(errs, "change(s) to apply") {
		t.Errorf("plan --detailed-exitcode -f: exit %d, stderr %q; want 2", code, errs)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\ntenants:\n  - name: "+name+"\n    gpus: {nosuchgpu: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := h.cli("", "plan", "-f", bad); code != 2 {
		t.Errorf("plan -f bad.yaml: exit %d, want 2\n%s%s", code, out, errs)
	}

	h.ok("-i", "add", "tenant", name, "users=alice", "gpus=h100:1")
	out = h.ok("-i", "modify", "tenant", "where", "name="+name, "set", "gpus=h100:2")
	t.Logf("gpubridge -i modify tenant where name=%s set gpus=h100:2\n%s", name, out)
	if got := strings.TrimSpace(h.ok("-n", "-P", "show", "tenants", name, "format=gpus")); got != "h100:2" {
		t.Errorf("gpus after modify where name=: %q, want h100:2", got)
	}
	if _, errs, code := h.cli("", "-i", "modify", "tenant", "where", "name=s27nosuch", "set", "gpus=h100:2"); code != 2 || !strings.Contains(errs, "no such tenant") {
		t.Errorf("modify where name=s27nosuch: exit %d, stderr %q; want 2", code, errs)
	}

	if comp := h.ok("__complete", "modify", "tenant", "where", "name=s27h"); !strings.HasPrefix(comp, "name="+name+"\n") {
		t.Errorf("completion of where name=:\n%s", comp)
	}
	_, want, code := h.cli("", "show", "tenants", "s27nosuch")
	if code != 2 {
		t.Fatalf("show tenants s27nosuch: exit %d, want 2", code)
	}
	for _, args := range [][]string{
		{"show", "usage", "tenant=s27nosuch"},
		{"show", "bookings", "tenant=s27nosuch"},
		{"show", "tokens", "tenant=s27nosuch"},
		{"show", "booking-policy", "tenant=s27nosuch"},
	} {
		_, errs, code := h.cli("", args...)
		if code != 2 || !strings.Contains(errs, `tenant "s27nosuch": no such tenant`) {
			t.Errorf("%s: exit %d, stderr %q; want 2 as show tenants s27nosuch (%q)", strings.Join(args, " "), code, errs, want)
		}
	}
	if _, errs, code := h.cli("", "show", "bookings", "999999999"); code != 2 || !strings.Contains(errs, "booking 999999999: not found") {
		t.Errorf("show bookings 999999999: exit %d, stderr %q; want 2", code, errs)
	}
	if _, errs, code := h.cli("", "show", "usage", "tenant="+name); code != 0 {
		t.Errorf("show usage tenant=%s: exit %d, %s", name, code, errs)
	}

	out = h.ok("show", "tenants", name, "format=name%-8,gpus%10")
	t.Logf("gpubridge show tenants %s format=name%%-8,gpus%%10\n%s", name, out)
	if lines := strings.Split(out, "\n"); len(lines) < 3 || lines[0] != fmt.Sprintf("%-8s  %10s", "Name", "GPUs") || lines[2] != fmt.Sprintf("%-8s  %10s", name, "h100:2") {
		t.Errorf("format= widths:\n%s", out)
	}
}
