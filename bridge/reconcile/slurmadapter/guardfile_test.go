package slurmadapter

import (
	"bytes"
	"fmt"
	"hash/adler32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

func TestGuardFileWrite(t *testing.T) {
	acme := tenant.Guard([]tenant.Tenant{{Name: "acme", Users: []string{"alice"}, GPUs: tenant.Quota{"h100": 2}}})
	acme3 := tenant.Guard([]tenant.Tenant{{Name: "acme", Users: []string{"alice"}, GPUs: tenant.Quota{"h100": 3}}})
	empty := tenant.Guard(nil)
	body := []byte("# an empty table written by another gpubridge version\n")
	emptyOther := append([]byte(fmt.Sprintf("gpubridge-guard v2 length=%d adler32=%08x\n", len(body), adler32.Checksum(body))), body...)
	v1 := []byte("-- gpubridge-guard v1 sha256:0123456789abcdef01234567\nreturn { version = 1, accounts = { acme = {} } }\n")
	cases := map[string]struct {
		old        []byte // nil: no file
		write      []byte
		allowEmpty bool
		wrote      bool
		want       []byte // the file afterwards
		kept       bool   // a "guard table kept" warning is logged
	}{
		"new file":                      {write: acme, wrote: true, want: acme},
		"unchanged is not rewritten":    {old: acme, write: acme, wrote: false, want: acme},
		"changed":                       {old: acme, write: acme3, wrote: true, want: acme3},
		"empty where there is none":     {write: empty, wrote: true, want: empty},
		"empty over empty":              {old: emptyOther, write: empty, wrote: true, want: empty},
		"empty over tenants is kept":    {old: acme, write: empty, wrote: false, want: acme, kept: true},
		"empty over unreadable is kept": {old: []byte("while true do end\n"), write: empty, wrote: false, want: []byte("while true do end\n"), kept: true},
		"empty over version 1 is kept":  {old: v1, write: empty, wrote: false, want: v1, kept: true},
		"allowed empty over tenants":    {old: acme, write: empty, allowEmpty: true, wrote: true, want: empty},
		"tenants over unreadable":       {old: []byte("garbage"), write: acme, wrote: true, want: acme},
		"tenants over version 1":        {old: v1, write: acme, wrote: true, want: acme},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "guard", "tenants.table")
			if c.old != nil {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, c.old, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			g := GuardFile{Path: p, AllowEmpty: c.allowEmpty, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			wrote, err := g.Write(c.write)
			if err != nil {
				t.Fatal(err)
			}
			if wrote != c.wrote {
				t.Errorf("wrote = %v, want %v", wrote, c.wrote)
			}
			got, _ := os.ReadFile(p)
			if !bytes.Equal(got, c.want) {
				t.Errorf("file afterwards:\n%s\nwant:\n%s", got, c.want)
			}
			if kept := strings.Contains(logs.String(), "guard table kept"); kept != c.kept {
				t.Errorf("kept warning logged = %v, want %v; log:\n%s", kept, c.kept, logs.String())
			}
			if c.wrote {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o644 {
					t.Errorf("mode %v, want 0644 (slurmctld reads it)", st.Mode().Perm())
				}
			}
			entries, _ := os.ReadDir(filepath.Dir(p))
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only the table (no temporary file left)", len(entries))
			}
		})
	}
}

func TestGuardFileRefusesInvalidTables(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tenants.table")
	for name, data := range map[string][]byte{
		"Lua":       []byte("return {}\n"),
		"truncated": tenant.Guard([]tenant.Tenant{{Name: "acme"}})[:20],
	} {
		if wrote, err := WriteGuard(p, data); err == nil || wrote {
			t.Errorf("%s: wrote=%v err=%v; want a refusal", name, wrote, err)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: a file was left: %v", name, err)
		}
	}
}

func TestWriteGuardKeepsTenants(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tenants.table")
	acme := tenant.Guard([]tenant.Tenant{{Name: "acme"}})
	if wrote, err := WriteGuard(p, acme); err != nil || !wrote {
		t.Fatalf("first write: wrote=%v err=%v", wrote, err)
	}
	if wrote, err := WriteGuard(p, tenant.Guard(nil)); err != nil || wrote {
		t.Errorf("empty table from the daemon: wrote=%v err=%v; want the table kept", wrote, err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, acme) {
		t.Errorf("the table in place changed:\n%s", got)
	}
}
