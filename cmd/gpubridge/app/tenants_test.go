package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

func TestReadTenantsFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "tenants.yaml")
	if err := os.WriteFile(small, []byte("tenants: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadTenantsFile(nil, small); err != nil || string(b) != "tenants: []\n" {
		t.Errorf("file: %q, %v", b, err)
	}
	if b, err := ReadTenantsFile(strings.NewReader("from stdin"), "-"); err != nil || string(b) != "from stdin" {
		t.Errorf("-: %q, %v", b, err)
	}
	// A larger file is read to one byte past the limit, so that the use
	// case refuses it without reading it whole.
	big := strings.Repeat("x", tenant.MaxFileBytes+100)
	if b, err := ReadTenantsFile(strings.NewReader(big), "-"); err != nil || len(b) != tenant.MaxFileBytes+1 {
		t.Errorf("large: %d bytes, %v; want %d", len(b), err, tenant.MaxFileBytes+1)
	}
	_, err := ReadTenantsFile(nil, filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "tenants file: ") {
		t.Errorf("missing file: %v, want an input error naming the tenants file", err)
	}
}

// TestAuditLimit: a bad limit= is refused as input by show audit's
// parser, before the use case opens the store.
func TestAuditLimit(t *testing.T) {
	for _, l := range []string{"0", "x", "100001"} {
		_, err := ParseAudit(map[string]string{"limit": l})
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "is not a number from 1 to 100000") {
			t.Errorf("limit=%s: %v", l, err)
		}
	}
}

// TestServeConfig: --listen and --init override the configuration at
// every load.
func TestServeConfig(t *testing.T) {
	t.Setenv("GPUBRIDGE_LISTEN", "") // restored after the test
	os.Unsetenv("GPUBRIDGE_LISTEN")
	path := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(path, []byte("version: 1\nserver:\n  listen: 127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Env{ConfigPath: path}
	c, err := e.ServeConfig("", false)()
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "127.0.0.1:1" || c.Database.Init {
		t.Errorf("no flags: listen %q init %v", c.Server.Listen, c.Database.Init)
	}
	c, err = e.ServeConfig("127.0.0.1:2", true)()
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "127.0.0.1:2" || !c.Database.Init {
		t.Errorf("--listen --init: listen %q init %v", c.Server.Listen, c.Database.Init)
	}
}
