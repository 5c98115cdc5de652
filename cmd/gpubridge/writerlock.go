package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gpubridge/gpubridge/internal/daemon"
	"github.com/gpubridge/gpubridge/internal/writerlock"
)

// writerLock takes the cluster's one-writer lock (internal/writerlock) on
// gpubridge's database for holder, waiting reconcile.writerLockTimeout.
// The cluster is config cluster, else the one slurmrestd serves. While it
// waits, it says so on stderr, naming the holder.
func (a *App) writerLock(ctx context.Context, holder string) (func(), error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	cluster := c.Cluster
	if cluster == "" {
		cl, err := a.Slurm(ctx)
		if err != nil {
			return nil, fmt.Errorf("writer lock: the cluster name (set cluster: or GPUBRIDGE_CLUSTER, or reach slurmrestd): %w", err)
		}
		cluster = cl.Cluster()
	}
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	l := &writerlock.Lock{DB: db.DB, Cluster: cluster, Holder: holder, Wait: c.Reconcile.WriterLockTimeout.Duration,
		OnWait: func(h string, wait time.Duration) {
			a.Logger().Warn("waiting for the writer lock", "lock", writerlock.Name(cluster), "holder", h, "timeout", wait.String())
		}}
	return l.Acquire(ctx)
}

// writerLockFor is writerLock for a command or job named what, run by
// the invoking user.
func (a *App) writerLockFor(ctx context.Context, what string) (func(), error) {
	return a.writerLock(ctx, writerHolder(what))
}

// writerHolder describes a writer for the message of one that waits.
func writerHolder(what string) string {
	return fmt.Sprintf("%s by %s (pid %d on %s)", what, actor(), os.Getpid(), hostname())
}

// lockedJob runs a daemon job under the writer lock (the burst job; the
// reconcile job takes it inside its use case).
type lockedJob struct {
	a    *App
	what string
	job  daemon.Job
}

func (j lockedJob) Name() string { return j.job.Name() }

func (j lockedJob) Run(ctx context.Context) error {
	release, err := j.a.writerLockFor(ctx, j.what)
	if err != nil {
		return err
	}
	defer release()
	return j.job.Run(ctx)
}
