//go:build integration

package slurmadapter

// Helpers of the health integration tests on the testbed. Every test uses
// gpu-a (the only node, with cpu-a, that these tests may drain), a Slurm
// account and scratch store cluster of its own, an output directory of its
// own under the root's /tmp, and leaves gpu-a resumed, unfenced and free of
// its jobs (t.Cleanup), as other tests use it.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// node is the node these tests drain and resume.
const node = "gpu-a"

type bed struct {
	t       *testing.T
	env     testbed.Env
	cl      *slurmrest.Client
	a       *Adapter
	files   Files
	account string // the health service account
	tag     string // unique to the test
	db      *sqlx.DB
	cluster string // the store's cluster name
	jobs    []int64
	accts   []string
}

func newBed(t *testing.T) *bed {
	t.Helper()
	env := testbed.Require(t)
	ctx := context.Background()
	cl, err := slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	b := &bed{t: t, env: env, cl: cl, a: New(cl, "root"), tag: fmt.Sprintf("hlt%05d", rand.IntN(100000))}
	dir := "/tmp/" + b.tag
	if err := os.MkdirAll(filepath.Join(env.Root, dir), 0o1777); err != nil {
		t.Fatal(err)
	}
	b.files = Files{NodeDir: dir, LocalDir: filepath.Join(env.Root, dir)}
	b.account = b.tag + "svc"
	b.addAccount(b.account, "root")
	t.Cleanup(b.cleanup)
	b.leaveNodeAlone() // an interrupted earlier run may have left it held
	return b
}

// addAccount creates a Slurm account with user's association.
func (b *bed) addAccount(account, user string) {
	b.t.Helper()
	b.env.Exec(b.t, "", "sacctmgr", "-i", "add", "account", account, "parent=root", "description=health-test")
	b.env.Exec(b.t, "", "sacctmgr", "-i", "add", "user", user, "account="+account)
	b.accts = append(b.accts, account)
}

// leaveNodeAlone resumes gpu-a from a drain of gpubridge's (or of this
// test's person) and removes its health reservation.
func (b *bed) leaveNodeAlone() {
	ctx := context.Background()
	_ = b.a.Unfence(ctx, node)
	ns, err := b.cl.ListNodes(ctx)
	if err != nil {
		b.t.Logf("cleanup: list nodes: %v", err)
		return
	}
	for _, n := range ns {
		sn := FromNode(n)
		if n.Name == node && sn.Unavailable() && (health.Ours(sn.Reason) || strings.HasPrefix(sn.Reason, "hlt")) {
			if err := b.a.Resume(ctx, node); err != nil {
				b.t.Logf("cleanup: resume %s: %v", node, err)
			}
		}
	}
}

func (b *bed) cleanup() {
	ctx := context.Background()
	if len(b.jobs) > 0 {
		args := []string{"scancel"}
		for _, id := range b.jobs {
			args = append(args, strconv.FormatInt(id, 10))
		}
		_, _ = b.env.Run(ctx, "", nil, args...)
	}
	for _, a := range b.accts {
		_, _ = b.env.Run(ctx, "", nil, "scancel", "-A", a)
	}
	// Health jobs run as root in the service account; wait for them to
	// leave the node before the reservation goes.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		jobs, err := b.cl.ListJobs(ctx, slurmrest.JobFilter{States: []string{"PENDING", "RUNNING", "COMPLETING"}, Accounts: b.accts})
		if err != nil || len(jobs) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.leaveNodeAlone()
	for _, a := range b.accts {
		_, _ = b.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", "where", "account="+a)
		_, _ = b.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", a)
	}
	os.RemoveAll(b.files.LocalDir)
	if b.db != nil {
		for _, tbl := range []string{"health_nodes", "health_runs", "health_results", "health_events", "health_tenant_checks"} {
			b.db.ExecContext(ctx, `DELETE FROM `+tbl+` WHERE cluster = ?`, b.cluster)
		}
		b.db.ExecContext(ctx, `DELETE FROM audit_log WHERE object_kind = 'node' AND object_name LIKE ?`, b.cluster+"/%")
		b.db.Close()
	}
}

// slurmNode returns gpu-a as slurmctld reports it.
func (b *bed) slurmNode() health.SlurmNode {
	b.t.Helper()
	ns, err := b.a.Nodes(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	for _, n := range ns {
		if n.Name == node {
			return n
		}
	}
	b.t.Fatalf("no node %s", node)
	return health.SlurmNode{}
}

// sbatch submits a job as user under account pinned to gpu-a and returns
// its id.
func (b *bed) sbatch(user, account string, extra ...string) int64 {
	b.t.Helper()
	args := append([]string{"sbatch", "--parsable", "-A", account, "-w", node, "-t", "10", "-o", "/dev/null", "-J", b.tag}, extra...)
	args = append(args, "--wrap", "sleep 300")
	out := b.env.Exec(b.t, user, args...)
	id, err := strconv.ParseInt(strings.TrimSpace(strings.Split(out, ";")[0]), 10, 64)
	if err != nil {
		b.t.Fatalf("sbatch: %q", out)
	}
	b.jobs = append(b.jobs, id)
	return id
}

func (b *bed) jobState(id int64) string {
	b.t.Helper()
	j, err := b.cl.GetJob(context.Background(), id)
	if err != nil {
		b.t.Fatalf("job %d: %v", id, err)
	}
	return strings.Join(j.State, "+") + " (" + j.Reason + ")"
}

// waitJob waits until job id is in one of the states.
func (b *bed) waitJob(id int64, within time.Duration, states ...string) string {
	b.t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		j, err := b.cl.GetJob(context.Background(), id)
		if err != nil {
			b.t.Fatalf("job %d: %v", id, err)
		}
		for _, s := range states {
			if j.HasState(s) {
				return s
			}
		}
		last = strings.Join(j.State, "+") + " (" + j.Reason + ")"
		time.Sleep(500 * time.Millisecond)
	}
	b.t.Fatalf("job %d still %s after %s, want %v", id, last, within, states)
	return ""
}

// faultFile is a file the test's site check reads: present, the check
// fails (on the host: <root>/tmp/<tag>/fault).
func (b *bed) setFault(on bool) {
	b.t.Helper()
	p := filepath.Join(b.files.LocalDir, "fault")
	if on {
		if err := os.WriteFile(p, []byte("95\n"), 0o644); err != nil {
			b.t.Fatal(err)
		}
		return
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		b.t.Fatal(err)
	}
}

// catalog holds the test's site check "probe": it fails with temp_c=95 and
// exit 1 while the fault file exists, and passes with temp_c=41.
func (b *bed) catalog() check.Catalog {
	b.t.Helper()
	f := b.files.NodeDir + "/fault"
	cmd := fmt.Sprintf("if [ -e %s ]; then echo temp_c=$(cat %s); echo reason=sensor hot; exit 1; fi\necho temp_c=41", f, f)
	cat, err := check.NewCatalog([]check.Def{{Name: "probe", Command: cmd, Timeout: 30 * time.Second,
		Thresholds: check.Thresholds{check.AnyModel: {"temp_c": {Max: ptr(90.0)}}}}}, "health.checks")
	if err != nil {
		b.t.Fatal(err)
	}
	return cat
}

func ptr[T any](v T) *T { return &v }

// service builds the health service on the testbed with a store cluster of
// the test's own and an injected clock.
func (b *bed) service(clock func() time.Time, mutate func(*health.Settings)) (*health.Service, health.Store) {
	b.t.Helper()
	if b.env.DBDSN == "" {
		b.t.Fatal("GPUBRIDGE_DB_DSN is not set: `source .testbed/env`")
	}
	if b.db == nil {
		db, err := sqldb.OpenMigrated(context.Background(), b.env.DBDSN)
		if err != nil {
			b.t.Fatal(err)
		}
		b.db, b.cluster = db, b.tag
	}
	st := store.New(b.db, b.cluster)
	s := health.Settings{
		Nodes: []string{node}, Account: b.account, User: "root", MaxConcurrent: 2,
		Policy:     health.Policy{AcceptancePasses: 1, RequalifyPasses: 2},
		Acceptance: health.Schedule{Name: "acceptance", Spec: "@every 1m", Checks: []string{"probe"}},
		Schedules:  []health.Schedule{{Name: "quick", Spec: "@every 1m", Checks: []string{"probe"}}},
		StartWait:  30 * time.Second, TenantChecksPerHour: 2, Retention: 24 * time.Hour,
	}
	if mutate != nil {
		mutate(&s)
	}
	svc, err := health.New(health.Params{Nodes: b.a, Jobs: b.a, Outputs: b.files, Store: st, Usage: b.a, Bookings: b.a,
		Catalog: b.catalog(), Settings: s, Now: clock})
	if err != nil {
		b.t.Fatal(err)
	}
	return svc, st
}

// settle waits until no run of the store is in flight (their jobs ended),
// so the next cycle harvests them.
func (b *bed) settle(st health.Store) {
	b.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		runs, err := st.InFlight(ctx)
		if err != nil {
			b.t.Fatal(err)
		}
		active := false
		for _, r := range runs {
			j, err := b.cl.GetJob(ctx, r.JobID)
			if err == nil && !j.HasState("COMPLETED") && !j.HasState("FAILED") && !j.HasState("CANCELLED") && !j.HasState("TIMEOUT") {
				active = true
			}
		}
		if !active {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.t.Fatal("check jobs still running after 60s")
}
