package acctest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// EnsureAccounts creates Slurm accounts (children of root) with users,
// allowed QOS normal and ondemand, through sacctmgr; existing ones are
// kept. It returns id_assoc of each account's association for each user.
func EnsureAccounts(t testing.TB, env testbed.Env, ro *sqlx.DB, users []string, accounts ...string) map[[2]string]int64 {
	t.Helper()
	ctx := context.Background()
	run := func(args ...string) {
		// "Nothing new added" exits non-zero; the check below is what counts.
		_, _ = env.Run(ctx, "", nil, append([]string{"sacctmgr", "-i"}, args...)...)
	}
	if out, _ := env.Run(ctx, "", nil, "sacctmgr", "-n", "-P", "show", "qos", "ondemand", "format=name"); strings.TrimSpace(out) == "" {
		run("add", "qos", "ondemand")
	}
	acc := strings.Join(accounts, ",")
	run("add", "account", acc, "cluster="+env.Cluster, "parent=root")
	run("modify", "account", acc, "set", "qos=normal,ondemand")
	run("add", "user", strings.Join(users, ","), "account="+acc, "cluster="+env.Cluster)
	run("modify", "user", strings.Join(users, ","), "where", "account="+acc, "set", "qos=normal,ondemand")
	out := map[[2]string]int64{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := ro.QueryContext(ctx, "SELECT acct, user, id_assoc FROM `"+env.Cluster+"_assoc_table` WHERE deleted = 0 AND user <> ''")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, u string
			var id int64
			if err := rows.Scan(&a, &u, &id); err != nil {
				t.Fatal(err)
			}
			out[[2]string{a, u}] = id
		}
		rows.Close()
		missing := ""
		for _, a := range accounts {
			for _, u := range users {
				if out[[2]string{a, u}] == 0 {
					missing = a + "/" + u
				}
			}
		}
		if missing == "" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("association %s not created by sacctmgr", missing)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// UID returns a testbed user's uid from the root's /etc/passwd.
func UID(t testing.TB, env testbed.Env, user string) int64 {
	t.Helper()
	out := env.Exec(t, "", "id", "-u", user)
	var n int64
	for _, c := range strings.TrimSpace(out) {
		n = n*10 + int64(c-'0')
	}
	return n
}
