//go:build integration

package main

// Integration tests of `gpubridge serve` on the testbed: its start with
// slurmrestd and MariaDB stopped (test/testbed/daemon.sh), its recovery when
// they return, a token file rotated under SIGHUP, and the refusal to create
// a schema in an empty database. Each test runs serve in-process on a
// scratch database of its own, with reconcile disabled (an empty store must
// never reconcile the shared cluster) and the read-mostly burst and ingest
// jobs as witnesses.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/golang-jwt/jwt/v5"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// lockedBuffer is serve's stderr: written by the daemon's goroutines,
// read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveIT is one in-process `gpubridge serve` on a scratch database.
type serveIT struct {
	t      *testing.T
	env    testbed.Env
	dsn    string // the scratch database
	dbName string
	addr   string
	config string
	log    *lockedBuffer
	cancel context.CancelFunc
	done   chan int
}

// newServeIT makes a scratch database (empty) and a config file with the
// given schedules, and points GPUBRIDGE_DB_DSN and GPUBRIDGE_LISTEN at them.
func newServeIT(t *testing.T, tag string, schedules map[string]string) *serveIT {
	t.Helper()
	env := testbed.Require(t)
	h := &serveIT{t: t, env: env}
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("gpubridge_serve_%s_%06d", tag, rand.IntN(1e6))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+cfg.DBName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Runs after the daemons are started again (cleanups run last-in first-out).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+cfg.DBName); err != nil {
			t.Errorf("drop the scratch database: %v", err)
		}
		admin.Close()
	})
	h.dsn, h.dbName = cfg.FormatDSN(), cfg.DBName
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	ln.Close()
	t.Setenv("GPUBRIDGE_DB_DSN", h.dsn)
	t.Setenv("GPUBRIDGE_LISTEN", h.addr)
	k, v, _ := strings.Cut(withMetricsListen(t, h.addr), "=")
	t.Setenv(k, v)
	var y strings.Builder
	y.WriteString("version: 1\nserver:\n  shutdownTimeout: 15s\nschedules:\n")
	for _, k := range []string{"reconcile", "burst", "ingest", "closePeriod"} {
		fmt.Fprintf(&y, "  %s: %q\n", k, schedules[k])
	}
	h.config = filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(h.config, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// start runs `gpubridge serve ARGS` in-process until the test ends, and
// waits until it answers /healthz.
func (h *serveIT) start(args ...string) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done, h.log = cancel, make(chan int, 1), &lockedBuffer{}
	go func() {
		h.done <- runContext(ctx, append([]string{"--config", h.config, "serve"}, args...), strings.NewReader(""), io.Discard, h.log)
	}()
	h.t.Cleanup(h.stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := h.get("/healthz"); code == 200 {
			return
		}
		select {
		case code := <-h.done:
			h.t.Fatalf("serve exited with %d at start:\n%s", code, h.log)
		default:
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("serve did not answer /healthz within 30 s:\n%s", h.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends serve gracefully and checks it exited 0.
func (h *serveIT) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case code := <-h.done:
		if code != 0 {
			h.t.Errorf("serve exited with %d:\n%s", code, h.log)
		}
	case <-time.After(45 * time.Second):
		h.t.Errorf("serve did not stop within 45 s:\n%s", h.log)
	}
}

// running fails the test if serve has exited.
func (h *serveIT) running() {
	h.t.Helper()
	select {
	case code := <-h.done:
		h.t.Fatalf("serve exited with %d:\n%s", code, h.log)
	default:
	}
}

// get gets path from serve (/metrics from its metrics listener).
func (h *serveIT) get(path string) (int, string) {
	cl := &http.Client{Timeout: 10 * time.Second}
	addr := h.addr
	if path == "/metrics" {
		addr = metricsAddr(addr)
	}
	resp, err := cl.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric reads one sample from /metrics ("" name+labels as printed), or -1.
func (h *serveIT) metric(series string) float64 {
	_, body := h.get("/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

func (h *serveIT) okRuns(job string) float64 {
	return max(0, h.metric(`gpubridge_job_runs_total{job="`+job+`",result="ok"}`))
}

// waitFor polls cond every 100 ms up to limit and returns how long it took.
func (h *serveIT) waitFor(what string, limit time.Duration, cond func() bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	for !cond() {
		h.running()
		if time.Since(start) > limit {
			h.t.Fatalf("%s: not within %s\nserve's log:\n%s", what, limit, h.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

func (h *serveIT) tables() int {
	h.t.Helper()
	db, err := sqldb.Open(context.Background(), h.dsn)
	if err != nil {
		h.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Get(&n, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// stoppedDaemons are testbed daemons a test stopped with daemon.sh.
type stoppedDaemons struct {
	t       *testing.T
	script  string
	stopped []string // in the order they were stopped; started again in reverse
}

// stopDaemons stops testbed daemons one by one; those it stopped (or
// tried to: daemon.sh removes a daemon's pid file before it checks the
// port) are started again by start, or when the test ends, also when it
// fails. A daemon it did not reach is never started twice.
func stopDaemons(t *testing.T, names ...string) *stoppedDaemons {
	t.Helper()
	script, err := filepath.Abs("../../test/testbed/daemon.sh")
	if err != nil {
		t.Fatal(err)
	}
	d := &stoppedDaemons{t: t, script: script}
	t.Cleanup(func() {
		if err := d.startAll(); err != nil {
			t.Errorf("start the testbed daemons again: %v", err)
		}
		slurmdbdAnswers(t, script)
	})
	for _, n := range names {
		d.stopped = append(d.stopped, n)
		if err := d.run("stop", n); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// start starts the stopped daemons again, in the reverse order.
func (d *stoppedDaemons) start() {
	d.t.Helper()
	if err := d.startAll(); err != nil {
		d.t.Fatal(err)
	}
}

func (d *stoppedDaemons) startAll() error {
	for len(d.stopped) > 0 {
		n := d.stopped[len(d.stopped)-1]
		d.stopped = d.stopped[:len(d.stopped)-1]
		if err := d.run("start", n); err != nil {
			return err
		}
	}
	return nil
}

func (d *stoppedDaemons) run(op, name string) error {
	out, err := exec.Command(d.script, op, name).CombinedOutput()
	if err != nil && op == "stop" && daemonPorts[name] != "" && !listening(daemonPorts[name]) {
		// tb_stop_daemon's last statement (`tb_port_listening ... && tb_die`)
		// makes daemon.sh exit 1 exactly when the port did close: the daemon
		// is stopped, as asked.
		d.t.Logf("daemon.sh stop %s exited with %v, but nothing listens on %s: stopped", name, err, daemonPorts[name])
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon.sh %s %s: %v\n%s", op, name, err, out)
	}
	return nil
}

// daemonPorts are the testbed's ports of the daemons these tests stop.
var daemonPorts = map[string]string{"mariadb": "127.0.0.1:3306", "slurmrestd": "127.0.0.1:6820"}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// slurmdbdAnswers waits until slurmdbd answers again after a MariaDB
// restart (it reconnects by itself), restarting it if it does not, so
// that the tests after this one find the testbed as it was.
func slurmdbdAnswers(t *testing.T, script string) {
	t.Helper()
	env, _ := testbed.Load()
	ok := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := env.Run(ctx, "", nil, "sacctmgr", "-n", "-P", "show", "cluster", "format=cluster")
		return err == nil
	}
	for i := 0; i < 15; i++ {
		if ok() {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Log("slurmdbd does not answer after MariaDB returned; restarting it")
	if out, err := exec.Command(script, "restart", "slurmdbd").CombinedOutput(); err != nil || !ok() {
		t.Errorf("slurmdbd does not answer after a restart: %v\n%s", err, out)
	}
}

// mintToken signs a slurmrestd token for root with key, expiring at exp.
func mintToken(t *testing.T, key []byte, exp time.Time) string {
	t.Helper()
	now := time.Now().Truncate(time.Second)
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sun": "root", "iat": now.Add(-time.Minute).Unix(), "exp": exp.Unix(),
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeAtomic replaces path with content (new file, then rename), as a
// token rotation should.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

const schedule = 5 * time.Second

// serve starts with slurmrestd and MariaDB (gpubridge's database and
// slurm_acct_db) stopped, stays up with /readyz 503 through two schedules,
// and recovers within two schedules after they return: /readyz 200, and
// the burst (slurmrestd + database) and ingest (slurm_acct_db + database)
// jobs run successfully.
func TestServeSurvivesDependencies(t *testing.T) {
	h := newServeIT(t, "deps", map[string]string{"burst": "@every 5s", "ingest": "@every 5s"})
	// The schema first, so that this test is about outages, not about --init.
	if code, out, errs := runCode("migrate"); code != 0 {
		t.Fatalf("migrate: %d\n%s%s", code, out, errs)
	}
	down := stopDaemons(t, "slurmrestd", "mariadb")
	h.start()
	if code, body := h.get("/healthz"); code != 200 || body != "degraded\n" {
		t.Fatalf("/healthz with slurmrestd and MariaDB down = %d %q; want 200 degraded (alive, database down)", code, body)
	}
	for deadline := time.Now().Add(2 * schedule); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		h.running()
		if code, body := h.get("/readyz"); code != 503 || body != "not ready\n" {
			t.Fatalf("/readyz with slurmrestd and MariaDB down = %d %q; want 503 with a generic body", code, body)
		}
	}
	if n := h.okRuns("burst") + h.okRuns("ingest"); n != 0 {
		t.Fatalf("%v job runs succeeded with their dependencies down", n)
	}
	for _, dep := range []string{"database", "slurmrestd", "slurmdb"} {
		if v := h.metric(`gpubridge_dependency_up{dependency="` + dep + `"}`); v != 0 {
			t.Errorf("gpubridge_dependency_up{%s} = %v; want 0", dep, v)
		}
	}

	restart := time.Now()
	down.start() // mariadb, then slurmrestd
	back := time.Now()
	ready := h.waitFor("/readyz 200 after the daemons returned", 2*schedule, func() bool { c, _ := h.get("/readyz"); return c == 200 })
	h.waitFor("burst and ingest succeed after the daemons returned", 2*schedule-ready, func() bool {
		return h.okRuns("burst") > 0 && h.okRuns("ingest") > 0
	})
	t.Logf("recovered %.1f s after slurmrestd and MariaDB listened again (readyz 200 after %.1f s; their start took %.1f s; schedule %s)",
		time.Since(back).Seconds(), ready.Seconds(), back.Sub(restart).Seconds(), schedule)
	if c, _ := h.get("/readyz"); c != 200 {
		t.Fatalf("/readyz = %d after recovery", c)
	}
	if code, body := h.get("/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz after recovery = %d %q; want 200 ok", code, body)
	}
}

// SIGHUP with a new token file takes effect without a restart: serve
// starts with a token signed by the wrong key (slurmrestd refuses it:
// /readyz 503), a valid token is written and SIGHUP sent (/readyz 200,
// burst runs), then an expired one (/readyz 503 again: the file is what
// is used, the old client is gone).
func TestServeReloadsTokenFile(t *testing.T) {
	h := newServeIT(t, "token", map[string]string{"burst": "@every 5s"})
	key, err := os.ReadFile(h.env.JWTKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "slurmrestd.jwt")
	writeAtomic(t, tokenFile, mintToken(t, []byte("not the testbed's key, 32 bytes.."), time.Now().Add(time.Hour)))
	t.Setenv("GPUBRIDGE_SLURMREST_JWT_KEY", "")
	t.Setenv("GPUBRIDGE_SLURMREST_TOKEN_FILE", tokenFile)
	h.start("--init")
	// slurmrestd (SLURM_JWT=daemon) hands the token to slurmctld, which
	// refuses it: the ping shows no responding controller, and every
	// other call fails with Slurm error 1007.
	h.waitFor("/readyz 503 and a failed burst run with a token slurmctld refuses", 3*schedule, func() bool {
		c, _ := h.get("/readyz")
		return c == 503 && h.metric(`gpubridge_job_runs_total{job="burst",result="error"}`) > 0
	})
	if n := h.okRuns("burst"); n != 0 {
		t.Fatalf("burst ran %v times with a refused token", n)
	}

	writeAtomic(t, tokenFile, mintToken(t, key, time.Now().Add(10*time.Minute)))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	took := h.waitFor("/readyz 200 after SIGHUP with a valid token", 2*schedule, func() bool { c, _ := h.get("/readyz"); return c == 200 })
	h.waitFor("a burst run with the new token", 2*schedule, func() bool { return h.okRuns("burst") > 0 })
	if !strings.Contains(h.log.String(), `msg="configuration reloaded"`) || !strings.Contains(h.log.String(), "slurmrestd") {
		t.Fatalf("the reload is not logged with the rebuilt client:\n%s", h.log)
	}
	t.Logf("ready %.1f s after SIGHUP with the new token", took.Seconds())

	writeAtomic(t, tokenFile, mintToken(t, key, time.Now().Add(-time.Minute)))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	h.waitFor("/readyz 503 after SIGHUP with an expired token", 2*schedule, func() bool { c, _ := h.get("/readyz"); return c == 503 })
	if v := h.metric(`gpubridge_config_reloads_total{result="ok"}`); v != 2 {
		t.Fatalf("reloads ok = %v; want 2", v)
	}
}

// serve on an empty database without --init: it refuses to create the
// schema, says so in the log and in /metrics, stays up with /readyz 503,
// and creates nothing. With --init it creates the schema and is ready.
func TestServeRefusesEmptyDatabase(t *testing.T) {
	h := newServeIT(t, "empty", nil) // no jobs: readiness is the database alone
	h.start()
	h.waitFor("gpubridge_database_schema_refused 1", 3*schedule, func() bool { return h.metric("gpubridge_database_schema_refused") == 1 })
	if c, body := h.get("/readyz"); c != 503 || body != "not ready\n" {
		t.Fatalf("/readyz = %d %q; want 503 not ready", c, body)
	}
	log := h.log.String()
	if !strings.Contains(log, "no gpubridge schema; refusing to create it") || !strings.Contains(log, h.dbName) {
		t.Fatalf("the log does not say it refused, naming the database:\n%s", log)
	}
	time.Sleep(2 * schedule) // more probes: still up, still nothing created
	h.running()
	if n := h.tables(); n != 0 {
		t.Fatalf("the refused database has %d tables; want 0", n)
	}
	if c, _ := h.get("/healthz"); c != 200 {
		t.Fatalf("/healthz = %d; want 200 (it is alive, only not ready)", c)
	}
	h.stop()

	h.start("--init")
	h.waitFor("/readyz 200 with --init", 3*schedule, func() bool { c, _ := h.get("/readyz"); return c == 200 })
	if v := h.metric("gpubridge_database_schema_refused"); v != 0 {
		t.Fatalf("schema refused = %v after --init; want 0", v)
	}
	if n := h.tables(); n == 0 {
		t.Fatal("--init created no tables")
	}
	if !strings.Contains(h.log.String(), "created gpubridge's schema in an empty database") {
		t.Fatalf("the creation is not logged:\n%s", h.log)
	}
}

// gpubridge migrate creates the schema in an empty database, then finds
// it current; a database with foreign tables is refused and left alone.
func TestMigrateCommand(t *testing.T) {
	newServeIT(t, "migrate", nil)
	code, out, errs := runCode("migrate")
	if code != 0 || !strings.Contains(out, "was empty; created gpubridge's schema") {
		t.Fatalf("migrate on an empty database: %d %q %q", code, out, errs)
	}
	code, out, _ = runCode("migrate")
	if code != 0 || !strings.Contains(out, "schema is current") {
		t.Fatalf("migrate again: %d %q", code, out)
	}

	f := newServeIT(t, "foreign", nil)
	db, err := sqldb.Open(context.Background(), f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE orders (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"migrate"}, {"show", "tenants"}} {
		code, _, errs := runCode(args...)
		if code == 0 || !strings.Contains(errs, "not gpubridge's") {
			t.Fatalf("%v on a foreign database: exit %d, %q; want a refusal", args, code, errs)
		}
	}
	if n := f.tables(); n != 1 {
		t.Fatalf("the foreign database has %d tables; want only its own", n)
	}
}
