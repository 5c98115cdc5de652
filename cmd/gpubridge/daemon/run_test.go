package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients/clientstest"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// harness runs Run on fakes: a fake slurmrestd that accepts one token, a
// fake MariaDB, a token file, and one probe job that uses both.
type harness struct {
	t      *testing.T
	db     *clientstest.DB
	slurm  *clientstest.Slurm
	dir    string
	reg    *prometheus.Registry
	reload chan struct{}

	mu      sync.Mutex
	cfg     config.Config
	loadErr error
	addr    string
	maddr   string     // the metrics listener's
	pools   []*sqlx.DB // every pool a job used

	jobRuns atomic.Int32
	app     func(ctx context.Context, c config.Config, cl *clients.Set) (http.Handler, func(ctx context.Context), error)
	built   atomic.Int32 // calls of jobs
	cancel  context.CancelFunc
	done    chan error
	client  *http.Client
}

func newHarness(t *testing.T) *harness {
	h := &harness{
		t: t, db: &clientstest.DB{}, slurm: clientstest.NewSlurm("fake", "tok-1"),
		dir: t.TempDir(), reg: prometheus.NewRegistry(), reload: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{}, Timeout: 20 * time.Second},
	}
	t.Cleanup(h.slurm.Close)
	h.writeToken("tok-1")
	c := config.Default()
	c.Cluster = "fake"
	c.SlurmRest.URL = h.slurm.URL
	c.SlurmRest.TokenFile = filepath.Join(h.dir, "jwt")
	c.SlurmRest.Timeout.Duration = 2 * time.Second
	c.Database.DSN = "gpubridge:pw@tcp(127.0.0.1:3306)/gpubridge"
	c.Server.Listen = "127.0.0.1:0"
	c.Server.MetricsListen = "127.0.0.1:0"
	// Above the 5 s for which http.Server.Shutdown waits on a connection
	// that never sent a request (the client's transport may dial one
	// spare).
	c.Server.ShutdownTimeout.Duration = 15 * time.Second
	h.cfg = c
	return h
}

// writeToken replaces the token file as an operator should: a new file
// renamed over the old one, so that a reader never sees it half written.
func (h *harness) writeToken(tok string) {
	h.t.Helper()
	tmp := filepath.Join(h.dir, "jwt.new")
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.dir, "jwt")); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) setConfig(edit func(*config.Config)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	edit(&h.cfg)
}

func (h *harness) load() (config.Config, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.loadErr != nil {
		return config.Config{}, h.loadErr
	}
	return h.cfg, h.cfg.Validate()
}

func (h *harness) jobs(ctx context.Context, c config.Config, set *clients.Set) ([]Scheduled, error) {
	h.built.Add(1)
	if n, err := set.Cluster().Name(ctx); err != nil || n == "" {
		h.t.Errorf("jobs built before the cluster's name is resolved: %q, %v", n, err)
	}
	db, err := set.DB(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.pools = append(h.pools, db)
	h.mu.Unlock()
	return []Scheduled{{Spec: "@every 1s", Job: Func("probe", func(ctx context.Context) error {
		if err := db.PingContext(ctx); err != nil {
			return err
		}
		if err := set.CheckSlurm(ctx); err != nil {
			return err
		}
		h.jobRuns.Add(1)
		return nil
	})}}, nil
}

func (h *harness) checks(c config.Config, set *clients.Set) []Check {
	return []Check{{clients.NameDatabase, set.CheckDB}, {clients.NameSlurmRest, set.CheckSlurm}}
}

func (h *harness) start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.done = make(chan error, 1)
	bound := make(chan struct{}, 1)
	go func() {
		h.done <- Run(ctx, Options{
			Load: h.load, Jobs: h.jobs, Checks: h.checks, App: h.app,
			Clients:  clients.Options{ConnectDB: h.db.Connector, PrepareDB: clientstest.Prepare},
			Registry: h.reg, Logger: quiet(), Reload: h.reload,
			Listening: func(a net.Addr) {
				h.mu.Lock()
				h.addr = a.String()
				h.mu.Unlock()
				select {
				case bound <- struct{}{}:
				default:
				}
			},
			MetricsListening: func(a net.Addr) {
				h.mu.Lock()
				h.maddr = a.String()
				h.mu.Unlock()
			},
			CampaignInterval: 20 * time.Millisecond, ProbeTTL: 50 * time.Millisecond, ProbeTimeout: time.Second,
		})
	}()
	select {
	case <-bound:
	case err := <-h.done:
		h.t.Fatalf("Run returned at start: %v", err)
	case <-time.After(10 * time.Second):
		h.t.Fatal("Run did not listen")
	}
	h.t.Cleanup(h.stop)
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.client.CloseIdleConnections()
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		h.t.Error("Run did not return after its context ended")
	}
}

func (h *harness) get(path string) (int, string) {
	return h.getFrom(false, path)
}

// getFrom gets path from the API's listener, or the metrics' one.
func (h *harness) getFrom(metrics bool, path string) (int, string) {
	h.mu.Lock()
	addr := h.addr
	if metrics {
		addr = h.maddr
	}
	h.mu.Unlock()
	resp, err := h.client.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// eventually polls cond until it holds, failing after a generous deadline
// (a bound on a wait, not a speed goal).
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) reloadNow() {
	h.t.Helper()
	select {
	case h.reload <- struct{}{}:
	case <-time.After(20 * time.Second):
		h.t.Fatal("the daemon did not take the reload")
	}
}

// The daemon starts with slurmrestd and the database down, answers
// liveness but not readiness, and recovers when they return: readiness
// turns 200 and the job runs.
func TestRunSurvivesDeadDependencies(t *testing.T) {
	h := newHarness(t)
	h.db.SetDown(true)
	h.slurm.SetDown(true)
	h.start()
	if code, body := h.get("/healthz"); code != 200 || body != "degraded\n" {
		t.Fatalf("/healthz with the database down = %d %q; want 200 degraded (alive)", code, body)
	}
	if code, body := h.get("/readyz"); code != 503 || body != "not ready\n" {
		t.Fatalf("/readyz with dependencies down = %d %q; want 503 and a generic body", code, body)
	}
	time.Sleep(200 * time.Millisecond) // some failed campaigns and runs
	select {
	case err := <-h.done:
		t.Fatalf("Run exited with its dependencies down: %v", err)
	default:
	}
	if n := h.jobRuns.Load(); n != 0 {
		t.Fatalf("%d job runs succeeded with the dependencies down", n)
	}
	h.db.SetDown(false)
	h.slurm.SetDown(false)
	h.eventually("/readyz 200", func() bool { c, _ := h.get("/readyz"); return c == 200 })
	h.eventually("a successful job run", func() bool { return h.jobRuns.Load() > 0 })
	if code, body := h.get("/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz after recovery = %d %q; want 200 ok", code, body)
	}
	if code, body := h.getFrom(true, "/metrics"); code != 200 || !strings.Contains(body, `gpubridge_dependency_up{dependency="slurmrestd"} 1`) {
		t.Fatalf("/metrics = %d, dependency gauge missing:\n%s", code, body)
	}
	// Never on the API's listener (it names every tenant), with or
	// without an App.
	if code, _ := h.get("/metrics"); code != 404 {
		t.Fatalf("/metrics on the API's listener = %d; want 404", code)
	}
}

// With cluster: unset, the daemon asks slurmrestd for the cluster's name
// before it builds anything: while slurmrestd is down it is alive, not
// ready, its API paths answer 503 and no job is built; once slurmrestd
// answers, the app and the jobs are built once, on the resolved name.
func TestRunResolvesClusterBeforeBuilding(t *testing.T) {
	h := newHarness(t)
	h.cfg.Cluster = ""
	h.slurm.SetDown(true)
	var apps atomic.Int32
	h.app = func(ctx context.Context, _ config.Config, set *clients.Set) (http.Handler, func(context.Context), error) {
		apps.Add(1)
		name, err := set.Cluster().Name(ctx)
		if err != nil {
			t.Errorf("app built before the cluster's name is resolved: %v", err)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "cluster", name) }), nil, nil
	}
	h.start()
	time.Sleep(200 * time.Millisecond) // several resolution attempts
	if code, body := h.get("/api/v1/pool"); code != 503 || body != "not ready\n" {
		t.Fatalf("API path before the name is resolved = %d %q; want 503 not ready", code, body)
	}
	if c, _ := h.get("/readyz"); c != 503 {
		t.Fatalf("/readyz before the name is resolved = %d; want 503", c)
	}
	if n, a := h.built.Load(), apps.Load(); n != 0 || a != 0 {
		t.Fatalf("built jobs %d times, the app %d times, before the name is resolved; want 0", n, a)
	}
	h.slurm.SetDown(false)
	h.eventually("the app answers", func() bool { c, body := h.get("/api/v1/pool"); return c == 200 && body == "cluster fake\n" })
	h.eventually("a job run", func() bool { return h.jobRuns.Load() > 0 })
	h.eventually("/readyz 200", func() bool { c, _ := h.get("/readyz"); return c == 200 })
	if n, a := h.built.Load(), apps.Load(); n != 1 || a != 1 {
		t.Fatalf("built jobs %d times, the app %d times; want once each", n, a)
	}
}

// SIGHUP with a rotated token file: the next client sends the new token
// (the old one, revoked, is no longer used); the database pool, whose
// settings did not change, is kept.
func TestReloadRotatesToken(t *testing.T) {
	h := newHarness(t)
	h.slurm.SetToken("tok-2") // tok-1, in the file, is revoked
	h.start()
	h.eventually("/readyz 503 with a revoked token", func() bool { c, _ := h.get("/readyz"); return c == 503 })
	h.writeToken("tok-2")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	h.eventually("/readyz 200 after SIGHUP", func() bool { c, _ := h.get("/readyz"); return c == 200 })
	h.eventually("a job run with the new token", func() bool { return h.jobRuns.Load() > 0 })

	h.writeToken("tok-3") // not accepted: proves the file is what is sent
	h.reloadNow()
	h.eventually("/readyz 503 after reloading a bad token", func() bool { c, _ := h.get("/readyz"); return c == 503 })
	if n := h.db.Opened(); n != 1 {
		t.Fatalf("the database pool was opened %d times; want 1 (its DSN never changed)", n)
	}
}

// A reload whose configuration is invalid, names a file that cannot be
// read, or a listen address that is taken, is refused: the running
// configuration, clients and server stay.
func TestReloadKeepsRunningConfiguration(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.eventually("ready", func() bool { c, _ := h.get("/readyz"); return c == 200 })
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	good := h.cfg
	bad := map[string]func(*config.Config){
		"invalid":      func(c *config.Config) { c.Schedules.Burst = "every now and then" },
		"missing file": func(c *config.Config) { c.SlurmRest.TokenFile = filepath.Join(h.dir, "nope") },
		"taken port":   func(c *config.Config) { c.Server.Listen = taken.Addr().String() },
		"plain public": func(c *config.Config) { c.Server.Listen = "0.0.0.0:0" },
	}
	n := 0
	for name, edit := range bad {
		h.setConfig(func(c *config.Config) { *c = good; edit(c) })
		h.reloadNow()
		n++
		h.eventually(name+" refused", func() bool { return counter(h.reg, "gpubridge_config_reloads_total", "refused") == float64(n) })
		if c, _ := h.get("/readyz"); c != 200 {
			t.Fatalf("%s: /readyz = %d after a refused reload; want the running configuration still ready", name, c)
		}
	}
	h.mu.Lock()
	h.loadErr = errors.New("config: unreadable")
	h.mu.Unlock()
	h.reloadNow()
	h.eventually("load error refused", func() bool { return counter(h.reg, "gpubridge_config_reloads_total", "refused") == float64(n+1) })
	if got := counter(h.reg, "gpubridge_config_reloads_total", "ok"); got != 0 {
		t.Fatalf("%v reloads applied; want none", got)
	}
	if h.db.Opened() != 1 {
		t.Fatalf("pools opened: %d; want 1", h.db.Opened())
	}
}

// Reloads while requests and jobs run, under -race: every reload swaps
// the database pool, the token and the listen address; one in five is
// invalid. At the end the last valid configuration runs, the refused ones
// are counted, and every replaced pool is closed.
func TestReloadRace(t *testing.T) {
	h := newHarness(t)
	h.start()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, path := range []string{"/readyz", "/healthz", "/metrics", "/readyz"} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					h.getFrom(i == 2, path) // errors while the address moves are expected
				}
			}
		})
	}
	const reloads = 30
	valid, refused := 0, 0
	for i := 1; i <= reloads; i++ {
		h.setConfig(func(c *config.Config) {
			c.Database.DSN = fmt.Sprintf("gpubridge:pw@tcp(127.0.0.1:3306)/gpubridge_%d", i)
			c.Server.Listen = []string{"127.0.0.1:0", "localhost:0"}[i%2]
			c.Schedules.Burst = "@every 10s"
			if i%5 == 0 {
				c.Schedules.Burst = "not a spec"
			}
		})
		h.writeToken("tok-1")
		h.reloadNow()
		if i%5 == 0 {
			refused++
		} else {
			valid++
		}
		// The next configuration is set only once this reload has read its own.
		h.eventually("reload counted", func() bool {
			return counter(h.reg, "gpubridge_config_reloads_total", "ok")+counter(h.reg, "gpubridge_config_reloads_total", "refused") == float64(i)
		})
		if i%3 == 0 {
			h.eventually("a job run", func() bool { return h.jobRuns.Load() > 0 })
		}
	}
	defer func() {
		t.Logf("ok=%v refused=%v", counter(h.reg, "gpubridge_config_reloads_total", "ok"), counter(h.reg, "gpubridge_config_reloads_total", "refused"))
	}()
	h.eventually("all reloads counted", func() bool {
		return counter(h.reg, "gpubridge_config_reloads_total", "ok") == float64(valid) &&
			counter(h.reg, "gpubridge_config_reloads_total", "refused") == float64(refused)
	})
	close(stop)
	wg.Wait()
	h.eventually("ready on the last configuration", func() bool { c, _ := h.get("/readyz"); return c == 200 })
	last := h.db.DSNs()
	if want := fmt.Sprintf("/gpubridge_%d", reloads-1); !strings.HasSuffix(last[len(last)-1], want) {
		t.Fatalf("last DSN opened %q; want the last valid one (%s)", last[len(last)-1], want)
	}
	h.stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.pools {
		if err := p.Ping(); err == nil {
			t.Errorf("pool %d of %d still open after its generation ended", i+1, len(h.pools))
		}
	}
}

// A job that ignores its context makes the stop fail after
// server.shutdownTimeout instead of hanging.
func TestShutdownDeadline(t *testing.T) {
	h := newHarness(t)
	h.cfg.Server.ShutdownTimeout.Duration = 100 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	started := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Load: h.load,
			Jobs: func(context.Context, config.Config, *clients.Set) ([]Scheduled, error) {
				return []Scheduled{{"@every 1h", Func("stuck", func(context.Context) error {
					select {
					case started <- struct{}{}:
					default:
					}
					<-stuck
					return nil
				})}}, nil
			},
			Clients: clients.Options{ConnectDB: h.db.Connector, PrepareDB: clientstest.Prepare},
			Logger:  quiet(), CampaignInterval: 20 * time.Millisecond,
		})
	}()
	<-started // the kick-off run of the interval job
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stuck") {
			t.Fatalf("Run = %v; want an error naming the stuck job", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run hung on a job that ignores its context")
	}
}

func counter(reg *prometheus.Registry, name, result string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
