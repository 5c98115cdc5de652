//go:build integration

package testbed_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// The testbed's second cluster is a real one in the same slurmdbd: both
// clusters are registered, its nodes (full H100s and MIG slices) are idle,
// its own slurmrestd answers for it, the first cluster's clients reach it
// with -M, and a job run on it lands in its own job table of slurm_acct_db.
func TestSecondCluster(t *testing.T) {
	env := testbed.RequireCluster2(t)
	c2 := env.Cluster2

	clusters := env.Exec(t, "", "sacctmgr", "-n", "-P", "show", "cluster", "format=cluster")
	for _, want := range []string{env.Cluster, c2} {
		if !strings.Contains("\n"+clusters, "\n"+want+"\n") {
			t.Fatalf("sacctmgr show cluster = %q; want %s registered", clusters, want)
		}
	}

	nodes := env.Exec(t, "", "env", "SLURM_CONF="+env.Cluster2Conf, "sinfo", "-h", "-N", "-o", "%N %T %G")
	want := map[string][]string{"gpu-c": {"gpu:h100:2"}, "gpu-d": {"gpu:3g.40gb:1", "gpu:1g.10gb:3"}}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line) // NODE STATE GRES (with socket bindings)
		if len(f) != 3 || want[f[0]] == nil || f[1] != "idle" {
			t.Errorf("sinfo of %s: line %q; want gpu-c or gpu-d, idle, with its GPUs", c2, line)
			continue
		}
		for _, g := range want[f[0]] {
			if !strings.Contains(f[2], g) {
				t.Errorf("sinfo of %s: %s has GRES %s; want %s among them", c2, f[0], f[2], g)
			}
		}
		seen[f[0]] = true
	}
	if len(seen) != 2 {
		t.Fatalf("sinfo of %s =\n%s\nwant gpu-c and gpu-d", c2, nodes)
	}
	if out := env.Exec(t, "", "sinfo", "-M", c2, "-h", "-N", "-o", "%N"); !strings.Contains(out, "gpu-c") || strings.Contains(out, "gpu-a") {
		t.Errorf("sinfo -M %s from the first cluster's clients =\n%s\nwant the second cluster's nodes only", c2, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := slurmrest.Open(slurmrest.Options{URL: env.Cluster2REST, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, Cluster: c2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cl.Ping(ctx)
	if err != nil || !p.Up() || p.Cluster != c2 {
		t.Fatalf("ping of %s's slurmrestd = %+v, %v; want cluster %s up", c2, p, err, c2)
	}

	// A job on the second cluster, under an account that exists there only.
	acct := fmt.Sprintf("c2probe%d", os.Getpid()%100000)
	t.Cleanup(func() { _, _ = env.Run(context.Background(), "", nil, "sacctmgr", "-i", "delete", "account", acct) })
	id := runOnCluster2(t, env, acct)
	db, err := sqldb.Open(ctx, env.SlurmDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var account, tres string
	// The newest row of that id: a down and up under the old cluster2.sh
	// (which cleared the controller's state) counted ids from 1 again.
	q := fmt.Sprintf("SELECT account, tres_alloc FROM `%s_job_table` WHERE id_job = ? ORDER BY job_db_inx DESC LIMIT 1", c2)
	if err := db.QueryRowContext(ctx, q, id).Scan(&account, &tres); err != nil {
		t.Fatalf("job %s in %s_job_table: %v", id, c2, err)
	}
	if account != acct || tres == "" {
		t.Fatalf("job %s row: account %q, tres_alloc %q; want account %s and its allocation", id, account, tres, acct)
	}
	var n int
	q = fmt.Sprintf("SELECT COUNT(*) FROM `%s_job_table` WHERE account = ?", env.Cluster)
	if err := db.QueryRowContext(ctx, q, acct).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the first cluster's job table holds %d row(s) of %s (%v); want none", n, acct, err)
	}
}

// The second cluster comes back after cluster2.sh down (which deletes it
// from slurmdbd with its associations): registered again, its job ids go
// on from where they were (the controller keeps its state), so a job run
// after the second up is its own row, COMPLETED, not the first
// incarnation's row of the same id.
func TestSecondClusterAgain(t *testing.T) {
	env := testbed.RequireCluster2(t)
	acct := fmt.Sprintf("c2again%d", os.Getpid()%100000)
	t.Cleanup(func() { _, _ = env.Run(context.Background(), "", nil, "sacctmgr", "-i", "delete", "account", acct) })
	first := runOnCluster2(t, env, acct)
	for _, step := range []string{"down", "up"} {
		if out, err := env.Script(3*time.Minute, "cluster2.sh", step); err != nil {
			t.Fatalf("cluster2.sh %s: %v\n%s", step, err, out)
		}
	}
	if out := env.Exec(t, "", "sacctmgr", "-n", "-P", "show", "association", "where", "cluster="+env.Cluster2, "account="+acct, "format=account"); strings.TrimSpace(out) != "" {
		t.Fatalf("after cluster2.sh down and up, %s's associations on %s = %q; want none (down deletes the cluster)", acct, env.Cluster2, out)
	}
	second := runOnCluster2(t, env, acct)
	a, _ := strconv.Atoi(first)
	b, _ := strconv.Atoi(second)
	if b <= a {
		t.Fatalf("job id after cluster2.sh down and up = %s; want more than the first incarnation's %s (job ids go on)", second, first)
	}
}

// runOnCluster2 adds account acct and alice's association to it on the
// second cluster only, runs a one-GPU job there as alice, waits until
// sacct says COMPLETED and returns the job's id. Its output goes nowhere:
// both clusters count job ids from 1 in one root, and slurm-<id>.out of
// the first cluster's job of the same id (another user's) in /tmp made the
// second cluster's job fail with "Could not open stdout file".
func runOnCluster2(t *testing.T, env testbed.Env, acct string) string {
	t.Helper()
	c2 := env.Cluster2
	env.Exec(t, "", "sacctmgr", "-i", "add", "account", acct, "cluster="+c2)
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "alice", "account="+acct, "cluster="+c2)
	id := strings.TrimSpace(env.Exec(t, "alice", "sbatch", "-M", c2, "--parsable", "-A", acct, "--gres=gpu:h100:1", "-o", "/dev/null", "--wrap", "sleep 1"))
	id, _, _ = strings.Cut(id, ";") // "<id>;<cluster>" with -M
	var state string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		state = strings.TrimSpace(env.Exec(t, "", "sacct", "-M", c2, "-n", "-X", "-P", "-j", id, "-o", "state"))
		if state == "COMPLETED" {
			return id
		}
	}
	t.Fatalf("job %s on %s: state %q after 90 s; want COMPLETED", id, c2, state)
	return ""
}
