package config

import (
	"net/url"
	"strings"
)

// Portal configures the tenant portal (cmd/gpubridge/api, docs/portal.md).
type Portal struct {
	// JWTKeyFile is the HS256 key of the Slurm JWTs people sign in with
	// (`scontrol token`; Slurm's AuthAltParameters=jwt_key=...). Empty:
	// slurmrest.jwtKeyFile, the key slurmrestd's tokens are made with.
	JWTKeyFile string `json:"jwtKeyFile"`
	// JWKSFile is the JWKS (JSON Web Key Set) whose RSA public keys verify
	// RS256 Slurm JWTs, the file of Slurm's AuthAltParameters=jwks=...
	// (empty: RS256 tokens are refused). Read at the first sign-in and
	// again at most once a minute.
	JWKSFile string `json:"jwksFile"`
	// OIDC is the site's OpenID Connect provider people may sign in with
	// (nil: none).
	OIDC *PortalOIDC `json:"oidc,omitempty"`
}

// PortalOIDC is sign-in through an OpenID Connect provider: the
// authorization code flow with PKCE; the Slurm user name is the ID
// token's UserClaim.
type PortalOIDC struct {
	// Issuer is the provider's issuer URL (https; http only on loopback).
	Issuer string `json:"issuer"`
	// ClientID is the portal's client at the provider; ClientSecretFile a
	// file holding its secret (empty: a public client, PKCE only).
	ClientID         string `json:"clientID"`
	ClientSecretFile string `json:"clientSecretFile"`
	// RedirectURL is the portal's /oidc/callback as browsers reach it
	// (registered at the provider).
	RedirectURL string `json:"redirectURL"`
	// UserClaim is the ID token claim holding the Slurm user name
	// (default preferred_username).
	UserClaim string `json:"userClaim"`
	// Scopes are asked for besides openid (default [profile]).
	Scopes []string `json:"scopes"`
}

// PortalJWTKeyFile is the key file people's Slurm JWTs are verified
// with: portal.jwtKeyFile, else slurmrest.jwtKeyFile (empty: person
// sign-in is off).
func (c Config) PortalJWTKeyFile() string {
	if c.Portal.JWTKeyFile != "" {
		return c.Portal.JWTKeyFile
	}
	return c.SlurmRest.JWTKeyFile
}

// validate checks the OIDC provider's settings, when one is set.
func (p Portal) validate(add func(field, format string, a ...any)) {
	o := p.OIDC
	if o == nil {
		return
	}
	if u, err := url.Parse(o.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname()))) {
		add("portal.oidc.issuer", "%q is not an https URL (the provider's issuer, e.g. https://id.example.org/realms/hpc)", o.Issuer)
	}
	if o.ClientID == "" {
		add("portal.oidc.clientID", "is empty; set the portal's client id at the provider")
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || !strings.HasSuffix(u.Path, "/oidc/callback") {
		add("portal.oidc.redirectURL", "%q is not the portal's callback URL (e.g. https://gpubridge.example.org/oidc/callback)", o.RedirectURL)
	}
	if strings.ContainsAny(o.UserClaim, " \t\"") {
		add("portal.oidc.userClaim", "%q is not a claim name (default preferred_username)", o.UserClaim)
	}
}

// loopbackHost says whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}
