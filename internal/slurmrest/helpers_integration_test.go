//go:build integration

package slurmrest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// itObjects names the Slurm objects one integration test makes.
// (slurmresttest.Remove is the same for tests outside this package; this
// package's tests cannot import it.)
type itObjects struct {
	accounts, users, qos, reservations []string
	jobs                               *[]int64 // cancelled first; may have ended
}

// itRemove deletes objs now (leftovers of an interrupted run) and when the
// test ends: jobs, accounts, users, QOS, reservations.
func itRemove(t *testing.T, c *Client, objs itObjects) {
	t.Helper()
	rm := func() {
		bg, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if objs.jobs != nil {
			for _, id := range *objs.jobs {
				c.CancelJob(bg, id) // may have finished already
			}
		}
		for _, a := range objs.accounts {
			if err := c.DeleteAccount(bg, a); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		for _, u := range objs.users {
			if err := c.DeleteUser(bg, u); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		for _, q := range objs.qos {
			if err := c.DeleteQOS(bg, q); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		for _, r := range objs.reservations {
			if err := c.DeleteReservation(bg, r); err != nil && !errors.Is(err, ErrNotFound) {
				t.Errorf("cleanup: %v", err)
			}
		}
	}
	rm()
	t.Cleanup(rm)
}
