package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/daemon"
)

// jobFactory builds one scheduled job from the current configuration.
// Features add theirs with App.addJob in their register functions.
type jobFactory func(ctx context.Context, a *App, c config.Config) (daemon.Scheduled, error)

func (a *App) addJob(f jobFactory) { a.jobs = append(a.jobs, f) }

// Registry is the process's Prometheus registry; features register their
// collectors on it.
func (a *App) Registry() *prometheus.Registry {
	if a.registry == nil {
		a.registry = prometheus.NewRegistry()
		a.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return a.registry
}

func serveCmd(a *App) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: periodic reconcile, burst, ingest and period close; HTTP /metrics and /healthz",
		Long: `serve runs gpubridge's periodic jobs on their cron schedules (config: schedules.*)
while this replica holds the MariaDB leader lock, so only one replica writes.
It serves /metrics and /healthz on server.listen. SIGHUP reloads the
configuration (validated before it replaces the running one); SIGINT/SIGTERM
stop it gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listen != "" {
				c, err := a.Config()
				if err != nil {
					return err
				}
				c.Server.Listen = listen
				a.cfg = &c
			}
			return a.serve(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "HTTP listen address (overrides server.listen)")
	return cmd
}

func (a *App) serve(ctx context.Context) error {
	c, err := a.Config()
	if err != nil {
		return err
	}
	log := a.Logger().With("component", "serve")
	db, err := a.DB(ctx)
	if err != nil {
		return err
	}
	reg := a.Registry()
	metrics := daemon.NewMetrics(reg)

	ln, err := net.Listen("tcp", c.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s (server.listen): %w", c.Server.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := db.PingContext(r.Context()); err != nil {
			http.Error(w, "database: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	log.Info("listening", "addr", ln.Addr().String())

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	_ = daemon.SdNotify("READY=1")
	for {
		sched, err := a.buildScheduler(ctx, c, metrics)
		if err != nil {
			return err
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = daemon.RunWhileLeader(runCtx, daemon.NewLeader(db.DB, daemon.LockName(c.Cluster)), sched, metrics, 5*time.Second, log)
		}()
		next, quit := a.waitReload(ctx, hup, log)
		stop()
		<-done
		if quit {
			_ = daemon.SdNotify("STOPPING=1")
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		}
		c = next
	}
}

// waitReload blocks until ctx ends (quit) or a SIGHUP brings a valid
// configuration; an invalid one is logged and the running one kept.
func (a *App) waitReload(ctx context.Context, hup <-chan os.Signal, log *slog.Logger) (next config.Config, quit bool) {
	for {
		select {
		case <-ctx.Done():
			return config.Config{}, true
		case <-hup:
			c, err := a.reloadConfig()
			if err != nil {
				log.Error("reload refused; keeping the running configuration", "err", err)
				continue
			}
			log.Info("configuration reloaded")
			return c, false
		}
	}
}

func (a *App) reloadConfig() (config.Config, error) {
	old := a.cfg
	a.cfg = nil
	c, err := a.Config()
	if err != nil {
		a.cfg = old
		return config.Config{}, err
	}
	return c, nil
}

func (a *App) buildScheduler(ctx context.Context, c config.Config, m *daemon.Metrics) (*daemon.Scheduler, error) {
	var jobs []daemon.Scheduled
	for _, f := range a.jobs {
		j, err := f(ctx, a, c)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return daemon.NewScheduler(jobs, a.Logger().With("component", "scheduler"), m)
}
