package api

import (
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Beside the HS256 key, Slurm verifies RS256 JWTs with the public keys of
// a JWKS file (AuthAltParameters=jwks=/etc/slurm/jwks.json): tokens that
// a site's identity service signs with its private key. The portal takes
// the same tokens when portal.jwksFile names that file: the token's kid
// picks the key, which must be an RSA public key for signatures (use
// "sig" or none, alg "RS256" or none). An RS256 token is never checked
// with the HS256 key, nor an HS256 token with a JWKS key (a token that
// names an RSA key's kid but says HS256 is checked with the HS256 key
// only, and is refused).

// JWKSFile reads the JWKS file (nil: RS256 tokens are refused).
type JWKSFile func() ([]byte, error)

// errNoJWTKey: neither an HS256 key nor a JWKS is configured.
var errNoJWTKey = errors.New("no Slurm JWT key is configured (portal.jwtKeyFile or portal.jwksFile)")

// jwtKeys are the keys a person's JWT may be signed with: the site's
// HS256 key (nil: none) and the JWKS's RSA public keys by kid.
type jwtKeys struct {
	hs  []byte
	rsa map[string]*rsa.PublicKey
}

// keyFor picks the key of t by its algorithm: HS256 the site's key, RS256
// the JWKS key its kid names; anything else has none. As Slurm does, a
// token with a kid is the JWKS's and one without the HS256 key's.
func (k jwtKeys) keyFor(t *jwt.Token) (any, error) {
	kid, hasKid := t.Header["kid"]
	switch t.Method.Alg() {
	case jwt.SigningMethodHS256.Alg():
		if hasKid {
			return nil, errors.New("an HS256 token naming a key id (kid is for the JWKS's RS256 keys)")
		}
		if len(k.hs) == 0 {
			return nil, errors.New("HS256 tokens are not taken here (no portal.jwtKeyFile)")
		}
		return k.hs, nil
	case jwt.SigningMethodRS256.Alg():
		id, _ := kid.(string)
		if id == "" {
			return nil, errors.New("an RS256 token without kid")
		}
		pub, ok := k.rsa[id]
		if !ok {
			return nil, fmt.Errorf("no key %q in the JWKS", id)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("algorithm %s is not taken", t.Method.Alg())
}

// parseJWKS reads a JWKS document's RSA signature keys by kid. Keys of
// another type or use, private keys and keys without kid are left out
// (Slurm takes only RS256 keys with a kid); a document with none is an
// error naming the file's problem.
func parseJWKS(b []byte) (map[string]*rsa.PublicKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("read the JWKS: %w", err)
	}
	out := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		pub, ok := k.Key.(*rsa.PublicKey)
		if !ok || k.KeyID == "" || (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != string(jose.RS256)) {
			continue
		}
		out[k.KeyID] = pub
	}
	if len(out) == 0 {
		return nil, errors.New("the JWKS has no RSA signature key with a kid (RS256)")
	}
	return out, nil
}

// jwksCache holds the JWKS's keys, read again at most once a minute (a
// rotated key takes effect without a restart).
type jwksCache struct {
	mu   sync.Mutex
	at   time.Time
	keys map[string]*rsa.PublicKey
}

// jwks reads the configured JWKS's keys (nil without one).
func (s *Server) jwks() (map[string]*rsa.PublicKey, error) {
	if s.o.JWKS == nil {
		return nil, nil
	}
	c := &s.jwksKeys
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys != nil && s.now().Sub(c.at) < time.Minute {
		return c.keys, nil
	}
	b, err := s.o.JWKS()
	if err != nil {
		return nil, err
	}
	keys, err := parseJWKS(b)
	if err != nil {
		return nil, err
	}
	c.keys, c.at = keys, s.now()
	return keys, nil
}

// personKeys are the keys configured now: the HS256 key and the JWKS
// (either may be absent, not both).
func (s *Server) personKeys() (jwtKeys, error) {
	var k jwtKeys
	if s.o.JWTKey == nil && s.o.JWKS == nil {
		return k, errNoJWTKey
	}
	if s.o.JWTKey != nil {
		hs, err := s.jwtKey()
		if err != nil {
			return k, fmt.Errorf("read the Slurm JWT key: %w", err)
		}
		k.hs = hs
	}
	rs, err := s.jwks()
	if err != nil {
		return k, fmt.Errorf("read the JWKS: %w", err)
	}
	k.rsa = rs
	return k, nil
}
