package main

import (
	"bytes"
	"strings"
	"testing"
)

// noBackends makes the CLI find neither slurmrestd nor a database.
func noBackends(t *testing.T) {
	t.Setenv("GPUBRIDGE_CONFIG", "")
	for _, k := range []string{"GPUBRIDGE_SLURMREST_JWT_KEY", "GPUBRIDGE_SLURMREST_TOKEN", "GPUBRIDGE_DB_DSN"} {
		t.Setenv(k, "")
	}
}

// TestBadTenantInputOffline: without slurmrestd or the store, bad input is
// still refused with every field problem at once, exit status 2.
func TestBadTenantInputOffline(t *testing.T) {
	noBackends(t)
	cases := map[string]struct {
		args []string
		want []string
	}{
		"name and quota": {
			args: []string{"add", "tenant", "a;b", "gpus=h100:-1,1g.10gb:abc", "users=alice,B0b"},
			want: []string{
				"4 problem(s), nothing was changed",
				`name: "a;b" is not a valid name`,
				"gpus.h100: -1 is negative",
				`gpus.1g.10gb: "abc" is not a whole number`,
				`users[1]: "B0b" has upper-case letters`,
				"GPU types not checked",
			},
		},
		"unknown option": {args: []string{"add", "tenant", "acme", "quota=4"}, want: []string{`unknown option "quota"`}},
		"two names":      {args: []string{"add", "tenant", "acme", "globex"}, want: []string{"add tenant takes one name"}},
		"user name":      {args: []string{"add", "user", "$(id)", "tenant=acme"}, want: []string{"user: \"$(id)\" is not a valid user name"}},
		"import name":    {args: []string{"import", "a'b"}, want: []string{`bad character "'"`}},
		"no set":         {args: []string{"modify", "tenant", "acme", "gpus=h100:2"}, want: []string{"no key=value options are accepted here"}},
		"format column":  {args: []string{"show", "tenants", "format=name,quota"}, want: []string{`format=quota: no such column`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"-i"}, c.args...), strings.NewReader(""), &out, &errb)
			if code != 2 {
				t.Errorf("exit %d; want 2\nstderr: %s", code, errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr:\n%s\nwant %q", errb.String(), w)
				}
			}
		})
	}
}

// TestTenantHelpNamesBookingKeys: add/modify tenant --help list the
// booking.* keys they accept.
func TestTenantHelpNamesBookingKeys(t *testing.T) {
	noBackends(t)
	for _, verb := range []string{"add", "modify"} {
		var out, errb bytes.Buffer
		if code := run([]string{verb, "tenant", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s tenant --help: exit %d %s", verb, code, errb.String())
		}
		for _, k := range []string{"booking.maxgpus=", "booking.maxwindow=", "booking.minlead=", "booking.maxhorizon=", "booking.spendlimit="} {
			if !strings.Contains(out.String(), k) {
				t.Errorf("%s tenant --help does not mention %s:\n%s", verb, k, out.String())
			}
		}
	}
}
