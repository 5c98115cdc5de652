package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// A person signs in with the Slurm JWT that `scontrol token` gives them
// (HS256 with the site's key, the user in the claim sun). The person's
// rights come from the tenants' specs, read afresh (at most membersTTL
// old) on every request: a member (users or admins of a tenant) reads and
// books for that tenant, a tenant admin (admins) is marked as such.

// jwtSkew is how far in the future a token's iat may lie (clocks differ a
// little between the login node and this host), and how long past exp it
// is still taken.
const jwtSkew = 30 * time.Second

// membersTTL is how long one read of the tenants' members is used: a
// person removed from a tenant loses access within it.
const membersTTL = time.Second

// errNotMember: the JWT is good but its user belongs to no tenant.
var errNotMember = errors.New("this Slurm user is not a member of any tenant; ask the tenant's admin to add you")

// errBadJWT: the JWT is not one this site's key signed, is expired, or
// names no user.
var errBadJWT = errors.New("the Slurm token is not valid here (expired, signed with another key, or not from scontrol token)")

// JWTKey reads the HS256 key Slurm signs its JWTs with (the
// slurmrest.jwtKeyFile of the configuration unless portal.jwtKeyFile
// names another). Nil: person sign-in is off.
type JWTKey func() ([]byte, error)

// Membership is one tenant a person belongs to.
type Membership struct {
	Tenant string
	Admin  bool // listed in the tenant's admins
}

// verifyJWT checks raw's signature (HS256 with the site's key, or RS256
// with the JWKS key its kid names: none and every other algorithm are
// refused), its exp (required, jwtSkew of leeway), its iat (not in the
// future beyond jwtSkew) and returns the Slurm user it names (sun, or
// username) and when it expires.
func verifyJWT(raw string, keys jwtKeys, now time.Time) (string, time.Time, error) {
	if len(keys.hs) == 0 && len(keys.rsa) == 0 {
		return "", time.Time{}, errBadJWT
	}
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg(), jwt.SigningMethodRS256.Alg()}), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithLeeway(jwtSkew), jwt.WithTimeFunc(func() time.Time { return now }))
	claims := jwt.MapClaims{}
	if _, err := p.ParseWithClaims(raw, claims, keys.keyFor); err != nil {
		return "", time.Time{}, fmt.Errorf("%w: %v", errBadJWT, err)
	}
	user := ""
	for _, k := range []string{"sun", "username"} {
		if s, ok := claims[k].(string); ok && s != "" {
			user = s
			break
		}
	}
	if user == "" || strings.ContainsAny(user, " \t\r\n/,") {
		return "", time.Time{}, fmt.Errorf("%w: no user (claim sun)", errBadJWT)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return "", time.Time{}, errBadJWT
	}
	return user, exp.Time, nil
}

// looksLikeJWT says whether raw has a JWT's form (three dot-separated
// parts) rather than a gpubridge token's.
func looksLikeJWT(raw string) bool {
	return !strings.HasPrefix(raw, token.Prefix) && strings.Count(raw, ".") == 2
}

// members reads the tenants that user belongs to, in name order, from
// the tenant list (Options.Members), at most membersTTL old.
func (s *Server) members(ctx context.Context, user string) ([]Membership, error) {
	if s.o.Members == nil {
		return nil, errUnavailable
	}
	all, err := s.memberCache.get(struct{}{}, func() (map[string][]Membership, time.Duration, error) {
		ts, err := s.o.Members.List(ctx)
		if err != nil {
			return nil, 0, err
		}
		m := map[string][]Membership{}
		for _, t := range ts {
			for _, u := range slices.Concat(t.Users, t.Admins) {
				if ms := m[u]; len(ms) > 0 && ms[len(ms)-1].Tenant == t.Name {
					continue
				}
				m[u] = append(m[u], Membership{Tenant: t.Name, Admin: slices.Contains(t.Admins, u)})
			}
		}
		for u := range m {
			slices.SortFunc(m[u], func(a, b Membership) int { return strings.Compare(a.Tenant, b.Tenant) })
		}
		return m, 0, nil
	})
	if err != nil {
		return nil, err
	}
	return all[user], nil
}

// personToken is a person's rights as a token: scope book on the tenants
// ms names (Tenant is the first; forTenant picks another), actor "user
// NAME" in the audit log.
func personToken(user string, ms []Membership, exp time.Time) token.Token {
	t := token.Token{Name: "user " + user, Person: user, Scope: token.Book, ExpiresAt: exp}
	for _, m := range ms {
		t.Tenants = append(t.Tenants, m.Tenant)
		if m.Admin {
			t.AdminOf = append(t.AdminOf, m.Tenant)
		}
	}
	if len(t.Tenants) > 0 {
		t.Tenant = t.Tenants[0]
	}
	return t
}

// forTenant returns a person's token acting for tenant name when the
// person belongs to it; any other token, or a tenant the person does not
// belong to, is returned as it is (isolation then answers 404).
func forTenant(t token.Token, name string) token.Token {
	if t.Person != "" && name != "" && slices.Contains(t.Tenants, name) {
		t.Tenant = name
	}
	return t
}

// authenticatePerson verifies a Slurm JWT and finds its user's tenants:
// the person's token, or 401 (bad JWT), 403 (a user in no tenant), 503.
func (s *Server) authenticatePerson(ctx context.Context, ip, raw string) (token.Token, int, error) {
	if s.o.JWTKey == nil && s.o.JWKS == nil {
		return s.jwtFailed(ip)
	}
	keys, err := s.personKeys()
	if err != nil {
		s.o.Logger.Warn("read the Slurm JWT keys", "err", err)
		return token.Token{}, 503, errUnavailable
	}
	user, exp, err := verifyJWT(raw, keys, s.now())
	if err != nil {
		return s.jwtFailed(ip)
	}
	ms, err := s.members(ctx, user)
	if err != nil {
		s.o.Logger.Warn("read the tenants' members", "err", err)
		return token.Token{}, 503, errUnavailable
	}
	if len(ms) == 0 {
		s.o.Metrics.authFailures.WithLabelValues("no-tenant").Inc()
		return token.Token{}, 403, errNotMember
	}
	return personToken(user, ms, exp), 0, nil
}

// jwtFailed counts a refused Slurm JWT as failed: 401 saying what is
// wrong with a Slurm token (not the API token's hint), or 429.
func (s *Server) jwtFailed(ip string) (token.Token, int, error) {
	tok, code, err := s.failed(ip, "jwt")
	if code == 401 {
		err = errBadJWT
	}
	return tok, code, err
}

// keyCache holds the JWT key, read again at most once a minute (a new
// key takes effect without a restart).
type keyCache struct {
	mu  sync.Mutex
	at  time.Time
	key []byte
}

func (s *Server) jwtKey() ([]byte, error) {
	c := &s.keys
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != nil && s.now().Sub(c.at) < time.Minute {
		return c.key, nil
	}
	k, err := s.o.JWTKey()
	if err != nil {
		return nil, err
	}
	if len(k) == 0 {
		return nil, errors.New("the JWT key file is empty")
	}
	c.key, c.at = k, s.now()
	return k, nil
}
