package token

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/problem"
)

// Prefix starts every token, so that a token is recognised where it leaks
// (logs, repositories) and told apart from a Slurm JWT.
const Prefix = "gpb_"

// secretBytes is the secret's size: 256 bits.
const secretBytes = 32

// encoding writes the secret: 43 characters, URL- and header-safe.
var encoding = base64.RawURLEncoding

// ErrMalformed: the string is not a gpubridge token at all.
var ErrMalformed = errors.New("malformed token")

// Hash is the SHA-256 of a token's secret: all that is stored.
type Hash [sha256.Size]byte

// String is the hash in hex (never the secret).
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// New makes a token from 256 random bits of r (crypto/rand when nil): the
// string to hand out once, and its hash to store.
func New(r io.Reader) (string, Hash, error) {
	if r == nil {
		r = rand.Reader
	}
	var secret [secretBytes]byte
	if _, err := io.ReadFull(r, secret[:]); err != nil {
		return "", Hash{}, fmt.Errorf("make a token: %w", err)
	}
	return Prefix + encoding.EncodeToString(secret[:]), sha256.Sum256(secret[:]), nil
}

// HashOf checks that s has a token's form and returns its hash; a string of
// any other form is ErrMalformed.
func HashOf(s string) (Hash, error) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(rest) != encoding.EncodedLen(secretBytes) {
		return Hash{}, ErrMalformed
	}
	secret, err := encoding.DecodeString(rest)
	if err != nil || len(secret) != secretBytes {
		return Hash{}, ErrMalformed
	}
	return sha256.Sum256(secret), nil
}

// Scope is what a token may do.
type Scope string

// The scopes, from least to most.
const (
	// Read: the tenant's own quota, usage, spend, burst state, bookings,
	// availability, slots and pending jobs.
	Read Scope = "read"
	// Book: Read, plus creating, modifying and cancelling the tenant's
	// bookings within its booking policy.
	Book Scope = "book"
	// Admin: everything, for every tenant (no tenant of its own).
	Admin Scope = "admin"
)

// Scopes lists the scopes, from least to most.
var Scopes = []Scope{Read, Book, Admin}

func (s Scope) rank() int {
	switch s {
	case Read:
		return 1
	case Book:
		return 2
	case Admin:
		return 3
	}
	return 0
}

// Valid reports whether s is one of Scopes.
func (s Scope) Valid() bool { return s.rank() > 0 }

// Allows reports whether a token of scope s may do what needs scope need.
func (s Scope) Allows(need Scope) bool { return s.Valid() && need.Valid() && s.rank() >= need.rank() }

// MaxNameLen bounds a token's name.
const MaxNameLen = 64

// Token is a stored token: everything but its secret.
type Token struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Tenant string `json:"tenant,omitempty"` // empty for an admin token
	Scope  Scope  `json:"scope"`
	// ExpiresAt is when it stops working (zero: never).
	ExpiresAt  time.Time `json:"expiresAt,omitzero"`
	CreatedAt  time.Time `json:"createdAt"`
	CreatedBy  string    `json:"createdBy"`
	LastUsedAt time.Time `json:"lastUsedAt,omitzero"`
	Hash       Hash      `json:"-"`
	// Person is the Slurm user of a person signed in with a Slurm JWT
	// (never stored): Tenants are the tenants the person belongs to
	// (Tenant is the one a request acts for), AdminOf those whose admins
	// list the person.
	Person  string   `json:"-"`
	Tenants []string `json:"-"`
	AdminOf []string `json:"-"`
}

// Expired reports whether t no longer works at now.
func (t Token) Expired(now time.Time) bool { return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt) }

// Key names the token the way the CLI and the audit log do: acme/ci, or
// (admin)/ops for an admin token (no tenant name holds parentheses).
func (t Token) Key() string {
	if t.Person != "" {
		return t.Tenant + "/(user " + t.Person + ")"
	}
	if t.Tenant == "" {
		return "(admin)/" + t.Name
	}
	return t.Tenant + "/" + t.Name
}

// Actor is the token as the audit log names who made a change.
// A person is named as the Slurm user: user alice.
func (t Token) Actor() string {
	if t.Person != "" {
		return "user " + t.Person
	}
	return "api-token " + t.Key()
}

// ErrInvalid is matched (errors.Is) by Problems: the token's fields were
// wrong and nothing was stored.
var ErrInvalid = errors.New("invalid token")

// Problem is one thing wrong with one field of a new token.
type Problem = problem.Problem

// Problems is every problem found; as an error it lists them all.
type Problems = problem.List[invalidToken]

type invalidToken struct{}

func (invalidToken) Sentinel() error { return ErrInvalid }

// Check validates a new token's name, tenant, scope and expiry at now:
// an admin token has no tenant, every other one has one; a name is
// [a-z0-9][a-z0-9._-]*; an expiry lies in the future.
func Check(t Token, now time.Time) Problems {
	var ps Problems
	add := ps.Add
	switch {
	case t.Name == "":
		add("name", "required: what the token is for (name=ci)")
	case len(t.Name) > MaxNameLen:
		add("name", "%q is %d characters; at most %d", t.Name, len(t.Name), MaxNameLen)
	case !validName(t.Name):
		add("name", "%q: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", t.Name)
	}
	switch {
	case !t.Scope.Valid():
		add("scope", "%q is not a scope; use read, book or admin", t.Scope)
	case t.Scope == Admin && t.Tenant != "":
		add("tenant", "an admin token belongs to no tenant (it sees all); leave tenant= out, or use scope=read or scope=book")
	case t.Scope != Admin && t.Tenant == "":
		add("tenant", "required for scope=%s: the tenant the token sees (tenant=acme); scope=admin sees every tenant", t.Scope)
	}
	if !t.ExpiresAt.IsZero() && !t.ExpiresAt.After(now) {
		add("expires", "%s is not in the future", t.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return ps
}

func validName(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case i > 0 && (r == '.' || r == '_' || r == '-'):
		default:
			return false
		}
	}
	return s != ""
}

// ParseExpiry reads expires=: never (or empty), a duration from now (90d,
// 12w, 36h), a date (2027-01-01, midnight UTC) or an RFC 3339 time.
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "never":
		return time.Time{}, nil
	}
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if v, ok := strings.CutSuffix(s, unit); ok {
			var n int
			if _, err := fmt.Sscanf(v, "%d", &n); err == nil && fmt.Sprint(n) == v && n > 0 && n <= 10*366 {
				return now.UTC().Add(time.Duration(n) * d).Truncate(time.Second), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.UTC().Add(d).Truncate(time.Second), nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want never, a duration from now (90d, 12w, 36h), a date (2027-01-01) or an RFC 3339 time", s)
}
