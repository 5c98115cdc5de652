package app

import (
	"context"
	"fmt"

	"github.com/gpubridge/gpubridge/bridge/slurmconf"
	"github.com/gpubridge/gpubridge/bridge/slurmconf/slurmadapter"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// SlurmConfRequest is what `config render` and `config check` are given:
// the GPU nodes and types (empty: read from slurmrestd) and the two tiers'
// partition settings.
type SlurmConfRequest struct {
	Nodes, GPUTypes      string // comma-separated
	PoolTier             int
	OnDemandTier         int
	OnDemandPartitionQOS string
}

// SlurmConfSpec builds the render spec from r and the configuration,
// reading what r leaves out from slurmrestd.
func (e *Env) SlurmConfSpec(ctx context.Context, r SlurmConfRequest) (slurmconf.Spec, error) {
	c, err := e.Config()
	if err != nil {
		return slurmconf.Spec{}, err
	}
	s := slurmconf.Spec{
		PoolPartition: c.Tenants.PoolPartition, OnDemandPartition: c.Tenants.OnDemandPartition,
		Nodes: kv.List(r.Nodes), GPUTypes: kv.List(r.GPUTypes), PoolTier: r.PoolTier, OnDemandTier: r.OnDemandTier,
		OnDemandPartitionQOS: r.OnDemandPartitionQOS, PoolDefault: true,
	}
	s, err = slurmconf.Complete(ctx, s, e.slurmConfREST())
	if err != nil {
		return s, fmt.Errorf("%w (or give --nodes and --gpu-types)", err)
	}
	return s, nil
}

// RenderSlurmConf renders the slurm.conf fragment of the two tiers
// (config render).
func (e *Env) RenderSlurmConf(ctx context.Context, r SlurmConfRequest) (slurmconf.Fragment, error) {
	s, err := e.SlurmConfSpec(ctx, r)
	if err != nil {
		return slurmconf.Fragment{}, err
	}
	return slurmconf.Render(s)
}

// SlurmConfCheck is what config check found, a finding per setting.
type SlurmConfCheck struct {
	Findings []slurmconf.Finding
}

// Table is the findings' table (slurmconf.FindingsTable).
func (c SlurmConfCheck) Table() table.Table { return slurmconf.FindingsTable(c.Findings) }

// CheckSlurmConf compares the live cluster with the rendered fragment
// (config check): through scontrol (a command line split on spaces; empty
// reads slurmrestd only) and slurmrestd's partitions. When it could
// compare, it returns the findings with their verdict as the error
// (slurmconf.Verdict: a setting differs or is missing, or could not be
// verified unless allowUnknown); else nil and why not.
func (e *Env) CheckSlurmConf(ctx context.Context, r SlurmConfRequest, scontrol string, allowUnknown bool) (*SlurmConfCheck, error) {
	s, err := e.SlurmConfSpec(ctx, r)
	if err != nil {
		return nil, err
	}
	fs, err := slurmconf.CheckLive(ctx, s, slurmconf.LiveReader{
		Scontrol: slurmadapter.NewScontrol(scontrol), REST: e.slurmConfREST(), Logger: e.Logger(),
	})
	if err != nil {
		return nil, err
	}
	return &SlurmConfCheck{Findings: fs}, slurmconf.Verdict(fs, allowUnknown)
}

// slurmConfREST reads the cluster for slurmconf through slurmrestd,
// connecting on the first read.
func (e *Env) slurmConfREST() slurmadapter.REST {
	return slurmadapter.REST{Connect: func(ctx context.Context) (slurmadapter.Client, error) {
		cl, err := e.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		return cl, nil
	}}
}
