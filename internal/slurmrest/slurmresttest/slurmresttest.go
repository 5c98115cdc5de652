package slurmresttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// New returns a client for the testbed's slurmrestd at url ("" for the
// testbed's own), with its JWT key, user and cluster; mod, when not nil,
// adjusts the options first.
func New(t testing.TB, env testbed.Env, url string, mod func(*slurmrest.Options)) *slurmrest.Client {
	t.Helper()
	if url == "" {
		url = env.RestURL
	}
	o := slurmrest.Options{URL: url, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, Cluster: env.Cluster, Timeout: 30 * time.Second}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := slurmrest.New(ctx, o)
	if err != nil {
		t.Fatalf("slurmrest client for %s: %v", url, err)
	}
	return c
}

// Objects names Slurm objects a test owns.
type Objects struct {
	Accounts, Users, QOS, Reservations []string
}

// Remove deletes objs now (leftovers of an interrupted run) and again when
// the test ends, through c: accounts (with their associations) first,
// then users, QOS and reservations. A failed delete fails the test.
func Remove(t testing.TB, c *slurmrest.Client, objs Objects) {
	t.Helper()
	rm := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, a := range objs.Accounts {
			if err := c.DeleteAccount(ctx, a); err != nil {
				t.Errorf("cleanup: delete account %s: %v", a, err)
			}
		}
		for _, u := range objs.Users {
			if err := c.DeleteUser(ctx, u); err != nil {
				t.Errorf("cleanup: delete user %s: %v", u, err)
			}
		}
		for _, q := range objs.QOS {
			if err := c.DeleteQOS(ctx, q); err != nil {
				t.Errorf("cleanup: delete QOS %s: %v", q, err)
			}
		}
		for _, r := range objs.Reservations {
			if err := c.DeleteReservation(ctx, r); err != nil && !errors.Is(err, slurmrest.ErrNotFound) {
				t.Errorf("cleanup: delete reservation %s: %v", r, err)
			}
		}
	}
	rm()
	t.Cleanup(rm)
}
