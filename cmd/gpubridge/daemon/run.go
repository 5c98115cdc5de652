package daemon

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// Options are what Run needs from the command that starts it.
type Options struct {
	// Load reads and validates the configuration: at start (an error
	// stops Run) and at every reload (an error keeps the running one).
	Load func() (config.Config, error)
	// Jobs makes the periodic jobs of a configuration, on its clients,
	// once the generation resolved its cluster's name (cl.Cluster().Name
	// answers at once). It must not connect anything: the clients connect
	// at their first use. It is called again at every reload.
	Jobs func(ctx context.Context, c config.Config, cl *clients.Set) ([]Scheduled, error)
	// Checks are the readiness probes of a configuration; nil probes
	// gpubridge's database only.
	Checks func(c config.Config, cl *clients.Set) []Check
	// App, when set, makes the handler of every path but /healthz and
	// /readyz on server.listen for a configuration (the tenant API and status
	// page), and a task run in the background while the configuration is
	// in force, on every replica, leader or not (nil for none). Like Jobs
	// it is called once the cluster's name is resolved, must not connect
	// anything, and is called again at every reload.
	App func(ctx context.Context, c config.Config, cl *clients.Set) (http.Handler, func(ctx context.Context), error)
	// Clients says how clients are built (logger, schema policy).
	Clients clients.Options
	// Registry serves /metrics on server.metricsListen; Run registers its
	// own collectors on it.
	Registry *prometheus.Registry
	Logger   *slog.Logger

	// Reload, when set, triggers reloads besides SIGHUP (tests).
	Reload <-chan struct{}
	// Listening, when set, is told each address the API's server binds,
	// MetricsListening each address the metrics server binds (tests).
	Listening        func(net.Addr)
	MetricsListening func(net.Addr)
	// Timings; zero takes the defaults (2 s, 5 s, 3 s).
	CampaignInterval time.Duration
	ProbeTTL         time.Duration
	ProbeTimeout     time.Duration
}

// Run is `gpubridge serve`: it owns the process's signals (SIGINT and
// SIGTERM stop it, SIGHUP reloads), serves /metrics, /healthz and
// /readyz, campaigns for the cluster's leader lock and, while it holds it,
// runs the jobs on their schedules. No client connects before its first
// use, so Run starts and stays up while slurmrestd or a database is down;
// readiness says so. A reload validates the new configuration and everything it
// needs (files, listen address) before it stops anything; then it stops
// the jobs, swaps the clients whose settings changed (closing the old
// pools), rebinds the server if its settings changed and starts again. It
// returns nil after a graceful stop, an error when the start fails or the
// stop outlasts server.shutdownTimeout.
func Run(ctx context.Context, o Options) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	d, err := start(ctx, o)
	if err != nil {
		return err
	}
	_ = SdNotify("READY=1")
	for {
		select {
		case <-ctx.Done():
			_ = SdNotify("STOPPING=1")
			return d.shutdown()
		case <-hup:
			d.reload(ctx)
		case <-o.Reload:
			d.reload(ctx)
		}
	}
}

type daemon struct {
	o       Options
	log     *slog.Logger
	metrics *Metrics
	live    atomic.Bool
	cur     atomic.Pointer[generation] // read by the HTTP handlers
	srv     *Listener
	srvDone chan struct{}
	// msrv serves /metrics (server.metricsListen).
	msrv     *Listener
	msrvDone chan struct{}
}

// generation is one configuration at work: its clients, readiness
// checker, and, once its cluster's name is resolved, its app, scheduler
// and leader campaign.
type generation struct {
	cfg     config.Config
	set     *clients.Set
	checker *Checker
	work    atomic.Pointer[work] // nil until the cluster's name is resolved
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// work is what a generation builds on its resolved cluster.
type work struct {
	cluster string
	sched   *Scheduler
	app     http.Handler
	bg      func(ctx context.Context)
}

func start(ctx context.Context, o Options) (*daemon, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	o.CampaignInterval = cmpOr(o.CampaignInterval, 2*time.Second)
	o.ProbeTTL = cmpOr(o.ProbeTTL, 5*time.Second)
	o.ProbeTimeout = cmpOr(o.ProbeTimeout, 3*time.Second)
	if o.Clients.Logger == nil {
		o.Clients.Logger = o.Logger
	}
	d := &daemon{o: o, log: o.Logger.With("component", "serve"), metrics: NewMetrics(o.Registry)}
	c, err := o.Load()
	if err != nil {
		return nil, err
	}
	set := clients.New(c, o.Clients)
	g, err := d.prepare(c, set)
	if err != nil {
		return nil, err
	}
	ln, mln, err := d.listen(c.Server)
	if err != nil {
		return nil, err
	}
	d.live.Store(true)
	d.run(ctx, g) // before serving: a configured cluster's app is built when the first request comes
	d.serve(ln, mln)
	d.metrics.lastReload.SetToCurrentTime()
	return d, nil
}

// prepare makes a generation without starting anything.
func (d *daemon) prepare(c config.Config, set *clients.Set) (*generation, error) {
	checks := []Check{{Name: clients.NameDatabase, Run: set.CheckDB}}
	if d.o.Checks != nil {
		checks = d.o.Checks(c, set)
	}
	checker := NewChecker(checks, d.o.ProbeTTL, d.o.ProbeTimeout, d.o.Logger.With("component", "readiness"), d.metrics)
	return &generation{cfg: c, set: set, checker: checker}, nil
}

// run starts g: its probes and, in the background, its work: resolve the
// cluster's name, build the app and the jobs on it, campaign for the
// leader lock and run the jobs while it is held.
func (d *daemon) run(ctx context.Context, g *generation) {
	gctx, cancel := context.WithCancel(ctx)
	g.cancel = cancel
	g.done.Go(func() { g.checker.Watch(gctx) })
	// A configured (or already resolved) name needs no slurmrestd: the
	// app and the jobs are built before the generation is served.
	var built *work
	if g.set.Cluster().Known() != "" {
		built, _ = d.build(gctx, g) // an error is logged; the generation stays without work
	}
	g.done.Go(func() {
		w, err := built, error(nil)
		if w == nil {
			if w, err = d.build(gctx, g); err != nil {
				return // ctx ended, or the configuration cannot work: logged
			}
		}
		if w.bg != nil {
			g.done.Go(func() { w.bg(gctx) })
		}
		db, err := g.set.DB(gctx)
		if err != nil {
			d.log.Error("no leader election: gpubridge's database is not configured", "err", err)
			return
		}
		leader := NewLeader(func(context.Context) (*sql.DB, error) { return db.DB, nil },
			func(context.Context) (string, error) { return w.cluster, nil },
			LeaseTTL(d.o.CampaignInterval), d.o.Logger.With("component", "lease"))
		_ = RunWhileLeader(gctx, leader, w.sched, d.metrics, d.o.CampaignInterval, d.o.Logger.With("component", "leader"))
	})
	d.cur.Store(g)
}

// build resolves g's cluster name, trying every campaign interval while
// it cannot (cluster: unset and slurmrestd unreachable), then builds g's
// app and scheduler on it. Its error (ctx ended, or the app or the jobs
// cannot be built: a configuration problem, logged) leaves g without
// work: alive, not ready.
func (d *daemon) build(ctx context.Context, g *generation) (*work, error) {
	cluster, err := d.resolve(ctx, g.set.Cluster())
	if err != nil {
		return nil, err
	}
	w := &work{cluster: cluster}
	var jobs []Scheduled
	if d.o.Jobs != nil {
		jobs, err = d.o.Jobs(ctx, g.cfg, g.set)
	}
	if err == nil {
		w.sched, err = NewScheduler(jobs, d.o.Logger.With("component", "scheduler"), d.metrics)
	}
	if err == nil && d.o.App != nil {
		w.app, w.bg, err = d.o.App(ctx, g.cfg, g.set)
	}
	if err != nil {
		d.log.Error("the configuration cannot run; fix it and reload", "err", err)
		return nil, err
	}
	g.work.Store(w)
	return w, nil
}

// resolve is the cluster's name, asked every campaign interval until it
// is known or ctx ends; each new failure is logged once.
func (d *daemon) resolve(ctx context.Context, h *clients.Cluster) (string, error) {
	var failing string
	for {
		actx, cancel := context.WithTimeout(ctx, campaignTimeout)
		name, err := h.Name(actx)
		cancel()
		if err == nil {
			if failing != "" {
				d.log.Info("the cluster's name is resolved", "cluster", name)
			}
			return name, nil
		}
		if msg := err.Error(); msg != failing && ctx.Err() == nil {
			d.log.Warn("cannot resolve the cluster's name; trying again", "every", d.o.CampaignInterval, "err", err)
			failing = msg
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(d.o.CampaignInterval):
		}
	}
}

// stopGeneration stops g's campaign and jobs and waits for them; after
// the configured shutdown timeout it warns and, unless bounded, keeps
// waiting. It returns an error when bounded and the wait timed out.
func (d *daemon) stopGeneration(g *generation, bounded bool) error {
	g.cancel()
	done := make(chan struct{})
	go func() { g.done.Wait(); close(done) }()
	limit := g.cfg.Server.ShutdownTimeout.Duration
	for {
		select {
		case <-done:
			return nil
		case <-time.After(limit):
			var running []string
			if w := g.work.Load(); w != nil {
				running = w.sched.Running()
			}
			if bounded {
				return fmt.Errorf("stop: jobs still running after %s (server.shutdownTimeout): %v", limit, running)
			}
			d.log.Warn("reload waits for running jobs to end", "jobs", running, "waited", limit)
		}
	}
}

// listen binds the API's server (server.listen) and the metrics server
// (server.metricsListen), or neither.
func (d *daemon) listen(s config.Server) (*Listener, *Listener, error) {
	ln, err := Listen(s, d.handler(), d.log)
	if err != nil {
		return nil, nil, err
	}
	mln, err := ListenMetrics(s, d.coreHandler(), d.log)
	if err != nil {
		_ = ln.Close()
		return nil, nil, err
	}
	return ln, mln, nil
}

// serve starts serving ln (the API's) and mln (the metrics'); a nil one
// is not started.
func (d *daemon) serve(ln, mln *Listener) {
	if ln != nil {
		if d.o.Listening != nil {
			d.o.Listening(ln.Addr())
		}
		d.log.Info("listening", "addr", ln.Addr().String(), "tls", ln.tls)
		done := make(chan struct{})
		go func() { defer close(done); ln.Serve(d.log) }()
		d.srv, d.srvDone = ln, done
	}
	if mln != nil {
		if d.o.MetricsListening != nil {
			d.o.MetricsListening(mln.Addr())
		}
		d.log.Info("serving /metrics", "addr", mln.Addr().String(), "tls", mln.tls)
		done := make(chan struct{})
		go func() { defer close(done); mln.Serve(d.log) }()
		d.msrv, d.msrvDone = mln, done
	}
}

// handler serves /healthz and /readyz, and every other path from the
// running configuration's App (404 without one). /metrics is on the
// metrics listener only: it names every tenant.
func (d *daemon) handler() http.Handler {
	core := d.probeHandler()
	if d.o.App == nil {
		return core
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/readyz"} {
		mux.Handle(p, core)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		g := d.cur.Load()
		if g == nil {
			http.NotFound(w, r)
			return
		}
		wk := g.work.Load()
		if wk == nil {
			// The cluster's name is not resolved yet (or the
			// configuration cannot run): nothing to serve yet.
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		if wk.app == nil {
			http.NotFound(w, r)
			return
		}
		wk.app.ServeHTTP(w, r)
	})
	return mux
}

func (d *daemon) coreHandler() http.Handler { return Handler(d.o.Registry, d.probes()) }

func (d *daemon) probeHandler() http.Handler { return ProbeHandler(d.probes()) }

func (d *daemon) probes() Probes {
	return Probes{
		Live: d.live.Load,
		Database: func(ctx context.Context) bool {
			g := d.cur.Load()
			return g != nil && g.checker.Up(ctx, clients.NameDatabase)
		},
		Ready: func(ctx context.Context) bool {
			g := d.cur.Load()
			return g != nil && g.work.Load() != nil && g.checker.Ready(ctx)
		},
	}
}

// reload applies a new configuration, or keeps the running one when the
// new one (or anything it names) is not usable.
func (d *daemon) reload(ctx context.Context) {
	_ = SdNotify("RELOADING=1")
	defer SdNotify("READY=1")
	refuse := func(err error) {
		d.metrics.reloads.WithLabelValues("refused").Inc()
		d.log.Error("reload refused; keeping the running configuration", "err", err)
	}
	old := d.cur.Load()
	c, err := d.o.Load()
	if err != nil {
		refuse(err)
		return
	}
	set, changed, err := old.set.Derive(c)
	if err != nil {
		refuse(err)
		return
	}
	g, err := d.prepare(c, set)
	if err != nil {
		refuse(err)
		return
	}
	ln, mln, err := d.rebind(c.Server)
	if err != nil {
		refuse(err)
		return
	}
	if ln != nil || mln != nil {
		changed = append(changed, "server")
	}

	_ = d.stopGeneration(old, false)
	old.set.CloseReplaced(set)
	d.swap(ln, mln, old.cfg.Server.ShutdownTimeout.Duration)
	d.run(ctx, g)
	slices.Sort(changed)
	d.metrics.reloads.WithLabelValues("ok").Inc()
	d.metrics.lastReload.SetToCurrentTime()
	d.log.Info("configuration reloaded", "rebuilt", changed)
}

// rebind binds, before anything stops, the servers whose settings changed
// (nil for one that did not): if an address is taken, the running servers
// and configuration stay.
func (d *daemon) rebind(s config.Server) (ln, mln *Listener, err error) {
	fp, err := serverFingerprint(s)
	if err != nil {
		return nil, nil, err
	}
	mfp, err := serverFingerprint(metricsServer(s))
	if err != nil {
		return nil, nil, err
	}
	if fp != d.srv.fp {
		if ln, err = Listen(s, d.handler(), d.log); err != nil {
			return nil, nil, err
		}
	}
	if mfp != d.msrv.fp {
		if mln, err = ListenMetrics(s, d.coreHandler(), d.log); err != nil {
			if ln != nil {
				_ = ln.Close()
			}
			return nil, nil, err
		}
	}
	return ln, mln, nil
}

// swap serves ln and mln (either may be nil: that server stays) and stops
// the servers they replace within timeout.
func (d *daemon) swap(ln, mln *Listener, timeout time.Duration) {
	if ln == nil && mln == nil {
		return
	}
	prev, prevDone, mprev, mprevDone := d.srv, d.srvDone, d.msrv, d.msrvDone
	d.serve(ln, mln)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if ln != nil {
		_ = prev.Shutdown(sctx)
		<-prevDone
	}
	if mln != nil {
		_ = mprev.Shutdown(sctx)
		<-mprevDone
	}
}

// shutdown stops the jobs, the campaign (releasing the lock), the server
// and the clients, within server.shutdownTimeout.
func (d *daemon) shutdown() error {
	d.live.Store(false)
	g := d.cur.Load()
	d.log.Info("stopping", "timeout", g.cfg.Server.ShutdownTimeout.Duration)
	errJobs := d.stopGeneration(g, true)
	sctx, cancel := context.WithTimeout(context.Background(), g.cfg.Server.ShutdownTimeout.Duration)
	defer cancel()
	errSrv := errors.Join(d.srv.Shutdown(sctx), d.msrv.Shutdown(sctx))
	<-d.srvDone
	<-d.msrvDone
	if errJobs == nil {
		g.set.Close() // after a timeout, running jobs keep their pools until exit
	}
	if err := errors.Join(errJobs, errSrv); err != nil {
		return err
	}
	d.log.Info("stopped")
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func hashParts(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
