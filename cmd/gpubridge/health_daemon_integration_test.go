//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestHealthDaemonDrainsBookedNode: `gpubridge serve` runs the health
// schedules (a site check that fails while a fault file exists, every 3
// s) on gpu-a, which carries an active booking of its 2 h100. The fault
// drains gpu-a within two intervals of the check's schedule; the drain
// re-projects the booking at once (the bookings job itself runs only at
// start, on @every 1h): it is at risk, and says why it cannot move (gpu-a
// has the only h100). The health metrics are on /metrics. With the fault
// cleared gpu-a requalifies, serves again, and the booking is back on its
// h100. The booked GPU-hours lost while gpu-a was held are credited once,
// at the booked rate (health.credits).
func TestHealthDaemonDrainsBookedNode(t *testing.T) {
	ctx := context.Background()
	tag := fmt.Sprintf("hltd%04d", rand.IntN(10000))
	svcAcct := tag + "svc"
	h := newBookingIT(t, tag, svcAcct)
	env := h.env
	dir := "/tmp/" + tag
	if err := os.MkdirAll(filepath.Join(env.Root, dir), 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(filepath.Join(env.Root, dir))
		_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", "root", "where", "account="+svcAcct)
	})
	t.Cleanup(func() { releaseHealthNodes(ctx, t, env, h.slurm, []string{svcAcct}, "gpu-a") })
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "root", "account="+svcAcct)
	h.ok("-i", "add", "tenant", tag, "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")

	fault := filepath.Join(env.Root, dir, "fault")
	conf := filepath.Join(t.TempDir(), "gpubridge.yaml")
	yaml := fmt.Sprintf(`version: 1
bookings:
  leadTime: 1h
schedules:
  reconcile: ""
  burst: ""
  ingest: ""
  closePeriod: ""
  bookings: "@every 1h"
  healthCredits: ""
  health: "@every 2s"
health:
  credits: {enabled: true, minLoss: "0"}
  nodes: [gpu-a]
  account: %s
  outputDir: %s
  localOutputDir: %s
  startWait: 20s
  requalifyPasses: 1
  acceptance:
    name: acceptance
    spec: "@every 3s"
    checks: [probe]
  schedules:
    - name: quick
      spec: "@every 3s"
      checks: [probe]
  checks:
    - name: probe
      command: "if [ -e %s/fault ]; then echo temp_c=95; echo reason=sensor hot; exit 1; fi; echo temp_c=41"
      timeout: 30s
      thresholds:
        "*": {temp_c: {max: 90}}
`, svcAcct, dir, filepath.Join(env.Root, dir), dir)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string { t.Helper(); return h.ok(append([]string{"--config", conf}, args...)...) }
	// gpu-a's burn-in, by hand first (the booking's reservation must land
	// on a node that serves).
	deadline := time.Now().Add(60 * time.Second)
	for !strings.HasPrefix(cli("show", "health", "-P", "-n"), "gpu-a|serving|") {
		if time.Now().After(deadline) {
			t.Fatalf("gpu-a not serving after its burn-in:\n%s", cli("show", "health"))
		}
		cli("health", "run-once")
		time.Sleep(2 * time.Second)
	}
	var b reserve.Booking
	if err := json.Unmarshal([]byte(cli("-i", "--json", "add", "booking", "tenant="+tag, "gpus=h100:2", "start=now", "duration=20m")), &b); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s%d", h.prefix, b.ID)

	addr, log := serveInBackground(t, ctx, conf)
	metric := func(series string) float64 { return metricValue(addr, series) }
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v\nserve's log:\n%s", what, d, log)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	hasGPUs := func() bool {
		r, err := h.slurm.GetReservation(ctx, name)
		return err == nil && strings.Contains(r.TRES, "gres/gpu:h100=2")
	}
	waitFor("the bookings job's first run creates the reservation", 30*time.Second, hasGPUs)
	waitFor("the health metrics: gpu-a serving", 20*time.Second, func() bool { return metric(`gpubridge_health_nodes{state="serving"}`) == 1 })

	if err := os.WriteFile(fault, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	waitFor("gpu-a drained", 60*time.Second, func() bool { return metric(`gpubridge_health_nodes{state="drained"}`) == 1 })
	drained := time.Since(t0)
	t.Logf("gpu-a drained %.1f s after the fault (quick schedule every 3 s, harvest every 2 s)", drained.Seconds())
	if out := cli("show", "health", "-P", "-n", "format=node,state,reason"); !strings.HasPrefix(out, "gpu-a|drained|probe failed: sensor hot (exit 1); temp_c=95 > 90") {
		t.Errorf("show health while drained: %s", out)
	}
	if f := metric(`gpubridge_health_check_results_total{check="probe",verdict="fail"}`); f < 1 {
		t.Errorf("fail results metric %v", f)
	}
	if resp, err := http.Get("http://" + metricsAddr(addr) + "/metrics"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ms []string
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "gpubridge_health_") && !strings.Contains(l, "_bucket") || strings.HasPrefix(l, "gpubridge_bookings_at_risk") {
				ms = append(ms, l)
			}
		}
		t.Logf("$ curl -s http://%s/metrics | grep -E '^gpubridge_(health_|bookings_at_risk)'\n%s", addr, strings.Join(ms, "\n"))
	}
	// The bookings job runs hourly: only the drain's re-projection can
	// have marked it.
	waitFor("the booking at risk", 20*time.Second, func() bool {
		return metric(`gpubridge_bookings_at_risk{resource="gpu:h100",type="h100"}`) == 1
	})
	var bs []reserve.Booking
	if err := json.Unmarshal([]byte(cli("--json", "show", "bookings", "state=at-risk")), &bs); err != nil || len(bs) != 1 || bs[0].ID != b.ID ||
		!strings.Contains(bs[0].Note, "cannot move: 0 healthy h100 free") {
		t.Errorf("show bookings state=at-risk: %v %+v", err, bs)
	}
	if out := cli("show", "bookings", "format=id,state,note"); !strings.Contains(out, "at-risk") {
		t.Errorf("show bookings:\n%s", out)
	} else {
		t.Logf("$ gpubridge show bookings format=id,state,note\n%s", out)
	}
	if !strings.Contains(log.String(), "booking at risk") && !strings.Contains(log.String(), "health: node state") {
		t.Errorf("serve's log says nothing of the drain:\n%s", log)
	}

	if err := os.Remove(fault); err != nil {
		t.Fatal(err)
	}
	waitFor("gpu-a serving again", 90*time.Second, func() bool { return metric(`gpubridge_health_nodes{state="serving"}`) == 1 })
	back := time.Now().Add(20 * time.Second)
	for !hasGPUs() && time.Now().Before(back) {
		time.Sleep(500 * time.Millisecond)
	}
	if !hasGPUs() {
		// What the projector sees now, and whether a projection now moves it.
		t.Logf("gpu-a:\n%s\nreservations:\n%s", env.Exec(t, "", "scontrol", "show", "node", "gpu-a"), env.Exec(t, "", "scontrol", "show", "reservation"))
		out, errs, code := h.cli("--config", conf, "project", "--dry-run")
		t.Logf("project --dry-run: exit %d\n%s%s", code, out, errs)
		t.Fatalf("the booking is not back on its h100 20 s after gpu-a serves again:\n%s\nserve's log:\n%s", cli("show", "bookings", "format=id,state,note"), log)
	}
	if r := metric(`gpubridge_bookings_at_risk{resource="gpu:h100",type="h100"}`); r != 0 {
		t.Errorf("at-risk metric %v after gpu-a is back", r)
	}
	var lines []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "component=health") || strings.Contains(l, "component=bookings") {
			lines = append(lines, l)
		}
	}
	t.Logf("serve's log (health, bookings):\n%s", strings.Join(lines, "\n"))

	// The booked GPU-hours lost while gpu-a was held: one credit at the
	// booked rate, recomputed here from the health events as stored.
	cli("-i", "add", "rate", "type=h100", "tier=booked", "price=36.00", "from=2020-01-01", "currency=EUR")
	var drainedAt, backAt time.Time
	if err := h.scratch.DB.QueryRowContext(ctx, `SELECT d.at, MIN(s.at) FROM health_events d JOIN health_events s ON s.node = d.node AND s.at > d.at AND s.to_state IN ('serving', 'suspect', 'external')
		WHERE d.node = 'gpu-a' AND d.to_state = 'drained' AND d.from_state IN ('serving', 'suspect') GROUP BY d.id, d.at ORDER BY d.at DESC LIMIT 1`).Scan(&drainedAt, &backAt); err != nil {
		t.Fatalf("the drain's events: %v", err)
	}
	from, to := drainedAt, backAt
	if b.Start.After(from) {
		from = b.Start
	}
	secs := int64(to.Sub(from)/time.Second) * 2
	cents := secs // 36.00 EUR an hour is 1 cent a GPU-second
	wantAmount := fmt.Sprintf("-%d.%02d", cents/100, cents%100)
	// A reservation made again has no nodes until a projection reads it
	// back (the daemon's bookings job, every minute by default; here
	// hourly): project once, as that job would.
	cli("project")
	out := cli("-P", "-n", "credit", "run-once")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	f := strings.Split(rows[0], "|")
	if len(rows) != 1 || len(f) < 10 || !strings.HasPrefix(f[0], fmt.Sprintf("health-credit:booking:%d:", b.ID)) || f[1] != "booking-lost" ||
		f[2] != tag || f[5] != "gpu-a" || f[7] != wantAmount || f[8] != "EUR" {
		t.Errorf("credit run-once:\n%s\nwant one booking-lost credit of booking %d on gpu-a, %s EUR (2 h100 x %d s held, %s..%s)", out, b.ID, wantAmount, secs/2, from, to)
	} else {
		t.Logf("$ gpubridge credit run-once\n%s", out)
	}
	if again := cli("-P", "-n", "credit", "run-once"); again != "" {
		t.Errorf("a second run wrote:\n%s", again)
	}
}

// releaseHealthNodes hands the nodes back as the test found them: the
// accounts' check jobs cancelled, the health reservations removed, a node
// gpubridge drained resumed and responding again (slurmctld marks a
// resumed node NOT_RESPONDING until its next ping: a test right after
// would find it unbookable).
func releaseHealthNodes(ctx context.Context, t *testing.T, env testbed.Env, cl *slurmrest.Client, accounts []string, nodes ...string) {
	for _, a := range accounts {
		_, _ = env.Run(ctx, "", nil, "scancel", "-A", a)
	}
	time.Sleep(3 * time.Second)
	ns, _ := cl.ListNodes(ctx)
	var resumed []string
	for _, n := range nodes {
		_ = cl.DeleteReservation(ctx, health.FenceName(n))
		for _, x := range ns {
			if x.Name == n && health.Ours(x.Reason) {
				if err := cl.UpdateNode(ctx, n, slurmrest.NodeResume, ""); err != nil {
					t.Errorf("resume %s: %v", n, err)
				}
				resumed = append(resumed, n)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(resumed) > 0 && time.Now().Before(deadline) {
		ns, err := cl.ListNodes(ctx)
		if err == nil && !slices.ContainsFunc(ns, func(x slurmrest.Node) bool {
			return slices.Contains(resumed, x.Name) && slices.Contains(x.State, "NOT_RESPONDING")
		}) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(resumed) > 0 {
		t.Errorf("%v not responding 30 s after the resume", resumed)
	}
}

// TestHealthTwoNodeJob: a two-node site check (nodes: 2) that stands in
// for nccl-2node on the fake GPUs: `check node gpu-a peer=gpu-b` runs one
// job on both nodes, its srun spreads one task per node (the command
// counts the distinct SLURMD_NODENAMEs), the result is stored for each
// node, and sacct shows the job on two nodes under the health account.
func TestHealthTwoNodeJob(t *testing.T) {
	ctx := context.Background()
	tag := fmt.Sprintf("hlt2n%04d", rand.IntN(10000))
	svcAcct := tag + "svc"
	h := newBookingIT(t, svcAcct)
	env := h.env
	dir := "/tmp/" + tag
	if err := os.MkdirAll(filepath.Join(env.Root, dir), 0o1777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(filepath.Join(env.Root, dir))
		_, _ = env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", "root", "where", "account="+svcAcct)
	})
	t.Cleanup(func() { releaseHealthNodes(ctx, t, env, h.slurm, []string{svcAcct}, "gpu-a", "gpu-b") })
	env.Exec(t, "", "sacctmgr", "-i", "add", "user", "root", "account="+svcAcct)
	conf := filepath.Join(t.TempDir(), "gpubridge.yaml")
	yaml := fmt.Sprintf(`version: 1
schedules:
  bookings: ""
health:
  nodes: [gpu-a, gpu-b]
  account: %s
  outputDir: %s
  localOutputDir: %s
  startWait: 20s
  acceptance:
    name: acceptance
    spec: "@every 5m"
    checks: [probe]
  schedules:
    - name: quick
      spec: "@every 10m"
      checks: [probe]
  checks:
    - name: probe
      command: "echo temp_c=41"
      timeout: 30s
    - name: pair
      nodes: 2
      command: "echo hosts=$(srun --nodes=2 --ntasks-per-node=1 bash -c 'echo $SLURMD_NODENAME' | sort -u | wc -l)"
      timeout: 60s
      thresholds:
        "*": {hosts: {min: 2}}
`, svcAcct, dir, filepath.Join(env.Root, dir))
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string { t.Helper(); return h.ok(append([]string{"--config", conf}, args...)...) }
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(cli("show", "health", "-P", "-n"), "|serving|") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("gpu-a and gpu-b not serving after their burn-in:\n%s", cli("show", "health"))
		}
		cli("health", "run-once")
		time.Sleep(2 * time.Second)
	}
	if out, errs, code := h.cli("--config", conf, "check", "node", "gpu-a", "check=pair"); code != 2 || !strings.Contains(errs, "pair spans 2 nodes: name the second with peer=NODE") {
		t.Errorf("a two-node check without peer=: exit %d: %s%s", code, out, errs)
	}
	out := cli("check", "node", "gpu-a", "check=pair", "peer=gpu-b", "wait=90s", "-P", "-n")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("check node gpu-a check=pair peer=gpu-b:\n%s", out)
	}
	var nodes []string
	for _, l := range lines {
		f := strings.Split(l, "|")
		nodes = append(nodes, f[2])
		if f[3] != "pair" || f[4] != "pass" || f[6] != "hosts=2" {
			t.Errorf("result %q: want pair pass hosts=2", l)
		}
	}
	if strings.Join(nodes, ",") != "gpu-a,gpu-b" && strings.Join(nodes, ",") != "gpu-b,gpu-a" {
		t.Errorf("results on %v, want one per node", nodes)
	}
	t.Logf("$ gpubridge check node gpu-a check=pair peer=gpu-b wait=90s\n%s", cli("show", "checks", "check=pair"))
	jobID := strings.Split(lines[0], "|")[8]
	if got := strings.TrimSpace(env.Exec(t, "", "sacct", "-X", "-n", "-P", "-j", jobID, "-o", "account,nnodes,nodelist")); got != svcAcct+"|2|gpu-a,gpu-b" && got != svcAcct+"|2|gpu-[a-b]" {
		t.Errorf("sacct of the pair's job %s: %q, want %s|2|gpu-a,gpu-b", jobID, got, svcAcct)
	}
}
