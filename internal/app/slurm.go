package app

import (
	"context"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

// Ping asks slurmrestd and the Slurm controllers whether they answer
// (gpubridge ping).
func (e *Env) Ping(ctx context.Context) (slurmrest.PingResult, error) {
	cl, err := e.Slurm(ctx)
	if err != nil {
		return slurmrest.PingResult{}, err
	}
	return cl.Ping(ctx)
}

// Nodes are the nodes as slurmctld reports them, with their GPUs.
func (e *Env) Nodes(ctx context.Context) ([]slurmrest.Node, error) {
	cl, err := e.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	return cl.ListNodes(ctx)
}
