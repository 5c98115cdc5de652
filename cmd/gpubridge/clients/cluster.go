package clients

import (
	"context"
	"fmt"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// Cluster is the handle of the one cluster a configuration generation
// serves: its name, its slurmrestd client, its slurmdbd pool, its pool
// partition and its sacctmgr runner. Every service and job of the
// generation takes the cluster from it, so that ledger rows, health
// events, credits, booking charges, watermarks and exports all carry the
// same name. Serving several clusters later is a map of handles.
//
// The name is the configuration's cluster: when set, else the one
// slurmrestd reports, resolved at the first need and then fixed for the
// generation (a daemon starts while slurmrestd is down; its jobs resolve
// the name when it is back). This is the one reader of config.Cluster
// besides the slurmrestd client's options, which check it against the
// cluster slurmrestd serves.
type Cluster struct {
	set       *Set
	partition string
	command   string // reconcile.sacctmgr

	mu       sync.Mutex
	name     string
	sacctmgr *sacctmgr.Runner
}

func newCluster(s *Set, c config.Config) *Cluster {
	h := &Cluster{set: s, partition: c.Tenants.PoolPartition, command: c.Reconcile.Sacctmgr, name: c.Cluster}
	if h.name != "" {
		h.sacctmgr = sacctmgr.New(h.command, h.name)
	}
	return h
}

// Name is the cluster's name: cluster: when configured, else the one
// slurmrestd reports (which connects to it on the first call of the
// generation). It fails only when the name is not configured and
// slurmrestd is not reachable or names no cluster.
func (h *Cluster) Name(ctx context.Context) (string, error) {
	if n := h.known(); n != "" {
		return n, nil
	}
	cl, err := h.set.Slurm(ctx)
	if err == nil {
		err = cl.Negotiate(ctx) // the name comes with the negotiation
	}
	if err != nil {
		return "", fmt.Errorf("cluster: is not configured and slurmrestd, which names it, is not reachable: %w", err)
	}
	n := cl.Cluster()
	if n == "" {
		return "", fmt.Errorf("cluster: is not configured and slurmrestd at %s names no cluster (set cluster: or GPUBRIDGE_CLUSTER)", cl.URL())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.name == "" {
		h.name = n
		h.sacctmgr = sacctmgr.New(h.command, n)
	}
	return h.name, nil
}

// Known is the name if it is known without asking slurmrestd (configured,
// or already resolved), else "".
func (h *Cluster) Known() string { return h.known() }

// known is the name if it is resolved, else "".
func (h *Cluster) known() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.name
}

// NamesCluster reports whether configuration c names its cluster; when it
// does not, slurmrestd must be reachable to name it (a readiness check).
func NamesCluster(c config.Config) bool { return c.Cluster != "" }

// Slurm is the cluster's slurmrestd client.
func (h *Cluster) Slurm(ctx context.Context) (*slurmrest.Client, error) { return h.set.Slurm(ctx) }

// SlurmDB is the cluster's slurmdbd database (read-only user).
func (h *Cluster) SlurmDB(ctx context.Context) (*sqlx.DB, error) { return h.set.SlurmDB(ctx) }

// PoolPartition is the cluster's pool partition (tenants.poolPartition).
func (h *Cluster) PoolPartition() string { return h.partition }

// Sacctmgr is the runner of reconcile.sacctmgr for the cluster (nil when
// it is unset), made once the name is known.
func (h *Cluster) Sacctmgr(ctx context.Context) (*sacctmgr.Runner, error) {
	if h.command == "" {
		return nil, nil
	}
	if _, err := h.Name(ctx); err != nil {
		return nil, err
	}
	return h.builtSacctmgr(), nil
}

// builtSacctmgr is the runner if the name is resolved, else nil; it never
// connects (command counters read it).
func (h *Cluster) builtSacctmgr() *sacctmgr.Runner {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sacctmgr
}
