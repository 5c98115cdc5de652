package token

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewAndHashOf(t *testing.T) {
	plain, h, err := New(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plain, Prefix) || len(plain) != len(Prefix)+43 {
		t.Fatalf("token %q: want gpb_ and 43 characters", plain)
	}
	got, err := HashOf(plain)
	if err != nil || got != h {
		t.Fatalf("HashOf(%q) = %v, %v; want %v", plain, got, err, h)
	}
	other, _, _ := New(nil)
	if oh, _ := HashOf(other); oh == h {
		t.Fatal("two tokens hash alike")
	}
	if strings.Contains(h.String(), plain[len(Prefix):]) {
		t.Fatal("the hash shows the secret")
	}
}

func TestHashOfMalformed(t *testing.T) {
	good, _, _ := New(nil)
	for name, s := range map[string]string{
		"empty":         "",
		"no prefix":     good[len(Prefix):],
		"wrong prefix":  "gpx_" + good[len(Prefix):],
		"short":         good[:len(good)-1],
		"long":          good + "A",
		"bad character": good[:len(good)-1] + "*",
		"padding":       good[:len(good)-1] + "=",
		"jwt":           "eyJhbGciOiJIUzI1NiJ9.e30.x",
		"spaces":        " " + good,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := HashOf(s); err != ErrMalformed {
				t.Errorf("HashOf(%q) = %v; want ErrMalformed", s, err)
			}
		})
	}
}

func TestScopeAllows(t *testing.T) {
	cases := map[string]struct {
		have, need Scope
		want       bool
	}{
		"read reads":          {Read, Read, true},
		"read cannot book":    {Read, Book, false},
		"book reads":          {Book, Read, true},
		"book books":          {Book, Book, true},
		"book is no admin":    {Book, Admin, false},
		"admin books":         {Admin, Book, true},
		"admin admins":        {Admin, Admin, true},
		"unknown allows none": {Scope("write"), Read, false},
		"needs unknown":       {Admin, Scope(""), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := c.have.Allows(c.need); got != c.want {
				t.Errorf("%s.Allows(%s) = %v; want %v", c.have, c.need, got, c.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	now := time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		tok  Token
		want []string
	}{
		"tenant read":         {Token{Name: "ci", Tenant: "acme", Scope: Read}, nil},
		"admin":               {Token{Name: "grafana", Scope: Admin}, nil},
		"admin with tenant":   {Token{Name: "x", Tenant: "acme", Scope: Admin}, []string{"tenant"}},
		"read without tenant": {Token{Name: "x", Scope: Read}, []string{"tenant"}},
		"bad scope":           {Token{Name: "x", Tenant: "acme", Scope: "write"}, []string{"scope"}},
		"no name":             {Token{Tenant: "acme", Scope: Read}, []string{"name"}},
		"bad name":            {Token{Name: "CI job", Tenant: "acme", Scope: Read}, []string{"name"}},
		"name starts with -":  {Token{Name: "-x", Tenant: "acme", Scope: Read}, []string{"name"}},
		"long name":           {Token{Name: strings.Repeat("a", 65), Tenant: "acme", Scope: Read}, []string{"name"}},
		"expired":             {Token{Name: "x", Tenant: "acme", Scope: Read, ExpiresAt: now}, []string{"expires"}},
		"everything":          {Token{Scope: "x", ExpiresAt: now.Add(-time.Hour)}, []string{"name", "scope", "expires"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, p := range Check(c.tok, now) {
				got = append(got, p.Field)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 11, 5, 10, 0, 0, 500, time.UTC)
	cases := map[string]struct {
		in   string
		want time.Time
		bad  bool
	}{
		"never":         {in: "never"},
		"empty":         {in: ""},
		"days":          {in: "90d", want: time.Date(2027, 2, 3, 10, 0, 0, 0, time.UTC)},
		"weeks":         {in: "2w", want: time.Date(2026, 11, 19, 10, 0, 0, 0, time.UTC)},
		"hours":         {in: "36h", want: time.Date(2026, 11, 6, 22, 0, 0, 0, time.UTC)},
		"date":          {in: "2027-01-01", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		"rfc3339":       {in: "2027-01-01T12:00:00+01:00", want: time.Date(2027, 1, 1, 11, 0, 0, 0, time.UTC)},
		"zero days":     {in: "0d", bad: true},
		"negative":      {in: "-1h", bad: true},
		"word":          {in: "soon", bad: true},
		"d suffix junk": {in: "1xd", bad: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseExpiry(c.in, now)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseExpiry(%q) = %v; want an error", c.in, got)
				}
				return
			}
			if err != nil || !got.Equal(c.want) {
				t.Errorf("ParseExpiry(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
		})
	}
}

func TestExpiredAndKey(t *testing.T) {
	now := time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC)
	if (Token{}).Expired(now) {
		t.Error("a token without expiry expired")
	}
	if !(Token{ExpiresAt: now}).Expired(now) || (Token{ExpiresAt: now.Add(time.Second)}).Expired(now) {
		t.Error("expiry is not at ExpiresAt")
	}
	if k := (Token{Name: "ci", Tenant: "acme"}).Key(); k != "acme/ci" {
		t.Errorf("key %q", k)
	}
	if a := (Token{Name: "ops", Scope: Admin}).Actor(); a != "api-token (admin)/ops" {
		t.Errorf("actor %q", a)
	}
}
