package app

import (
	"errors"
	"os/user"
	"testing"
)

// TestActorVerifiesSudoUser: $SUDO_USER names the actor only as sudo sets
// it (running as root, $SUDO_UID that user's uid); set by hand by anyone
// else it is ignored (issue 25: the tenant-admin check trusted it).
func TestActorVerifiesSudoUser(t *testing.T) {
	users := map[string]*user.User{"alice": {Username: "alice", Uid: "1001"}, "bob": {Username: "bob", Uid: "1002"}, "root": {Username: "root", Uid: "0"}}
	lookup := func(name string) (*user.User, error) {
		if u, ok := users[name]; ok {
			return u, nil
		}
		return nil, user.UnknownUserError(name)
	}
	as := func(name string) func() (*user.User, error) {
		return func() (*user.User, error) { return users[name], nil }
	}
	cases := map[string]struct {
		uid               int
		sudoUser, sudoUID string
		current           func() (*user.User, error)
		want              string
	}{
		"sudo by alice":                  {0, "alice", "1001", as("root"), "alice"},
		"bob sets SUDO_USER":             {1002, "alice", "1001", as("bob"), "bob"},
		"bob sets SUDO_USER only":        {1002, "alice", "", as("bob"), "bob"},
		"root, SUDO_UID of someone else": {0, "alice", "1002", as("root"), "root"},
		"root, no SUDO_UID":              {0, "alice", "", as("root"), "root"},
		"root, unknown SUDO_USER":        {0, "mallory", "1001", as("root"), "root"},
		"no sudo":                        {1001, "", "", as("alice"), "alice"},
		"no user record":                 {1003, "", "", func() (*user.User, error) { return nil, errors.New("no passwd entry") }, "unknown"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := actorOf(c.uid, c.sudoUser, c.sudoUID, lookup, c.current); got != c.want {
				t.Errorf("actor = %q; want %q", got, c.want)
			}
		})
	}
}

// TestActorIgnoresHandSetSudoUser: the process's own Actor with a
// $SUDO_USER that sudo did not set (no matching $SUDO_UID) names the
// process's user. Before issue 25 it named "t25-not-sudo".
func TestActorIgnoresHandSetSudoUser(t *testing.T) {
	t.Setenv("SUDO_USER", "t25-not-sudo")
	t.Setenv("SUDO_UID", "")
	me, err := user.Current()
	if err != nil {
		t.Fatalf("no user record for this process: %v", err)
	}
	if got := Actor(); got != me.Username {
		t.Errorf("Actor() = %q with a hand-set SUDO_USER; want this process's user %q", got, me.Username)
	}
}
