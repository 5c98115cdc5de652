package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPortalOIDC: a working OIDC section (the one docs/portal.md shows)
// loads and validates; each bad field is named.
func TestPortalOIDC(t *testing.T) {
	y := "version: 1\nportal:\n  jwksFile: /etc/slurm/jwks.json\n  oidc:\n    issuer: https://id.example.org/realms/hpc\n    clientID: gpubridge-portal\n" +
		"    clientSecretFile: /etc/gpubridge/oidc-client-secret\n    redirectURL: https://gpubridge.example.org/oidc/callback\n" +
		"    userClaim: preferred_username\n    scopes: [profile]\n"
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, false, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if o := c.Portal.OIDC; o == nil || o.ClientID != "gpubridge-portal" || o.UserClaim != "preferred_username" || len(o.Scopes) != 1 || c.Portal.JWKSFile != "/etc/slurm/jwks.json" {
		t.Fatalf("read: %+v %+v", c.Portal, c.Portal.OIDC)
	}
	c.Portal.OIDC = &PortalOIDC{Issuer: "http://id.example.org", RedirectURL: "https://gpubridge.example.org/", UserClaim: "a b"}
	err = c.Validate()
	for _, f := range []string{"portal.oidc.issuer", "portal.oidc.clientID", "portal.oidc.redirectURL", "portal.oidc.userClaim"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("Validate() = %v; want a problem with %s", err, f)
		}
	}
	// http is taken on loopback only (a test provider, a tunnel).
	c.Portal.OIDC = &PortalOIDC{Issuer: "http://127.0.0.1:5556/dex", ClientID: "x", RedirectURL: "http://localhost:8080/oidc/callback"}
	if err := c.Validate(); err != nil {
		t.Errorf("loopback provider: %v", err)
	}
}
