package app

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// Ping asks slurmrestd and the Slurm controllers whether they answer
// (gpubridge ping). When slurmrestd answered, it returns what it said,
// with an error when no primary controller responds (pingError).
func (e *Env) Ping(ctx context.Context) (*slurmrest.PingResult, error) {
	cl, err := e.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	p, err := cl.Ping(ctx)
	if err != nil {
		return nil, err
	}
	return &p, pingError(p)
}

// Nodes are the nodes as slurmctld reports them, with their GPUs.
func (e *Env) Nodes(ctx context.Context) ([]slurmrest.Node, error) {
	cl, err := e.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	return cl.ListNodes(ctx)
}

// pingError is nil when p says a primary controller responds, else why
// not.
func pingError(p slurmrest.PingResult) error {
	if p.Up() {
		return nil
	}
	// slurmrestd answers ping even when slurmctld rejects the token: a
	// DOWN controller may be a bad JWT key.
	return fmt.Errorf("slurmrestd at %s: no primary controller responds (controller down, or slurmctld rejected the token)", p.URL)
}
