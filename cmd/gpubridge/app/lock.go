package app

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/daemon"
	"github.com/gpubridge/gpubridge/internal/writerlock"
)

// WriterLock takes the cluster's one-writer lock (internal/writerlock) on
// gpubridge's database for holder, waiting reconcile.writerLockTimeout.
// The cluster is the process's handle's (Env.Cluster). While it
// waits, it says so in the log, naming the holder.
func (e *Env) WriterLock(ctx context.Context, holder string) (func(), error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	cluster, err := e.ClusterName(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer lock: the cluster name (set cluster: or GPUBRIDGE_CLUSTER, or reach slurmrestd): %w", err)
	}
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	l := &writerlock.Lock{DB: db.DB, Cluster: cluster, Holder: holder, Wait: c.Reconcile.WriterLockTimeout.Duration,
		OnWait: func(h string, wait time.Duration) {
			e.Logger().Warn("waiting for the writer lock", "lock", writerlock.Name(cluster), "holder", h, "timeout", wait.String())
		}}
	return l.Acquire(ctx)
}

// WriterLockFor is WriterLock for a command or job named what, run by
// the invoking user.
func (e *Env) WriterLockFor(ctx context.Context, what string) (func(), error) {
	return e.WriterLock(ctx, WriterHolder(what))
}

// WriterHolder describes a writer for the message of one that waits.
func WriterHolder(what string) string {
	return fmt.Sprintf("%s by %s (pid %d on %s)", what, Actor(), os.Getpid(), hostname())
}

// LockedJob runs a daemon job under the writer lock (the burst and
// booking jobs; the reconcile job takes it inside its use case).
type LockedJob struct {
	Env  *Env
	What string
	Job  daemon.Job
}

func (j LockedJob) Name() string { return j.Job.Name() }

func (j LockedJob) Run(ctx context.Context) error {
	release, err := j.Env.WriterLockFor(ctx, j.What)
	if err != nil {
		return err
	}
	defer release()
	return j.Job.Run(ctx)
}

// Actor is who the audit log names and whom the CLI's tenant-admin check
// (SpeakFor: `check node ... tenant=T` by one of T's admins) tests: the
// invoking user. $SUDO_USER names them only when sudo set it: the process
// runs as root (sudo's target) and $SUDO_UID is that user's uid. Anyone can
// set the variables, so elsewhere they are ignored and the process's own
// user is named: `SUDO_USER=alice gpubridge ...` run by bob acts as bob
// (issue 25). This is an identity for the audit log and for tenant
// admins' health commands, not an authentication: whoever can read
// gpubridge's configuration holds its database and Slurm credentials.
func Actor() string {
	return actorOf(os.Getuid(), os.Getenv("SUDO_USER"), os.Getenv("SUDO_UID"), user.Lookup, user.Current)
}

// actorOf is Actor on given process facts.
func actorOf(uid int, sudoUser, sudoUID string, lookup func(string) (*user.User, error), current func() (*user.User, error)) string {
	if uid == 0 && sudoUser != "" && sudoUID != "" {
		if u, err := lookup(sudoUser); err == nil && u.Uid == sudoUID {
			return sudoUser
		}
	}
	if u, err := current(); err == nil {
		return u.Username
	}
	return "unknown"
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown host"
	}
	return h
}
