package tenantadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// GPUTypes are the GPU types the cluster has: its typed gres/gpu TRES,
// the only ones a quota can limit.
type GPUTypes interface {
	GPUTypes(ctx context.Context) ([]string, error)
}

// Names are the tenant names in use.
type Names interface {
	Names(ctx context.Context) ([]string, error)
}

// Store is the tenant store as the use cases need it
// (bridge/tenantstore.Store, or tenantstore.Memory in tests).
type Store interface {
	Names
	List(ctx context.Context) ([]tenant.Tenant, error)
	ListStored(ctx context.Context) ([]tenant.Stored, error)
	GetStored(ctx context.Context, name string) (tenant.Stored, error)
	// Commit writes an edit in one transaction, refusing it whole with
	// tenant.ErrChanged when a tenant is not at the version it names.
	Commit(ctx context.Context, actor string, e tenant.Edit) error
	// Remove drops tenants whose deletion finished.
	Remove(ctx context.Context, actor string, names []string) error
}

// Cluster is Slurm as the use cases need it (bridge/reconcile/slurmadapter).
type Cluster interface {
	reconcile.Cluster
	GPUTypes
}

// Backends connect the use cases to the store, the cluster and the
// writer lock on first use (and again after a failure), so that a command
// still reports bad input when slurmrestd or the database is down.
type Backends interface {
	Store(ctx context.Context) (Store, error)
	Cluster(ctx context.Context) (Cluster, error)
	// WriterLock takes the cluster's one-writer lock (internal/writerlock),
	// waiting a bounded time; release gives it back.
	WriterLock(ctx context.Context) (release func(), err error)
}

// RefusalRecorder counts plans the delete policy refused, by reason
// (bridge/reconcile/metrics.Recorder).
type RefusalRecorder interface {
	Refused(reason string)
}

// ErrInput is matched (errors.Is) by errors about what was asked: invalid
// fields, unknown or existing tenants and users (exit status 2 in the CLI).
var ErrInput = errors.New("invalid request")

// ErrPlanChanged: between the plan a person confirmed and the one apply
// would make, something changed (another writer, jobs that ended); nothing
// was changed.
var ErrPlanChanged = errors.New("the plan changed while you were confirming it")

type inputError struct{ error }

func (e inputError) Is(target error) bool { return target == ErrInput }
func (e inputError) Unwrap() error        { return e.error }

func inputf(format string, a ...any) error { return inputError{fmt.Errorf(format, a...)} }

// problemsError turns validation problems into an input error, with notes
// on what could not be checked.
func problemsError(ps tenant.Problems, notes ...string) error {
	err := error(ps)
	if len(notes) > 0 {
		err = fmt.Errorf("%w\n  (%s)", ps, strings.Join(notes, "; "))
	}
	return inputError{err}
}

// notFound marks a missing tenant as an input error with a hint.
func notFound(err error) error {
	if errors.Is(err, tenant.ErrNotFound) {
		return inputError{fmt.Errorf("%w (see `gpubridge show tenants`)", err)}
	}
	return err
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
