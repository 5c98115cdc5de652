package app

import (
	"context"
	"encoding/json"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/gres/device"
	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
	"github.com/gpubridge/gpubridge/gres/slurmcheck"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// The node-ops use cases for GPUs and MIG (gres inventory, generate,
// plan): they read a node's inventory, render its gres.conf and slurm.conf
// lines, compare them with Slurm and plan MIG layouts.

// InventorySource is where a gres command reads the node's GPUs: a
// recorded inventory (the JSON of `gres inventory --json`), else NVML.
type InventorySource struct {
	Fixture string // the recorded inventory; empty reads NVML
	Root    string // the directory that holds proc/driver/nvidia-caps/mig-minors (default /)
	// Collect reads NVML (device.Collect; tests replace it).
	Collect func(device.Options) (inventory.Inventory, error)
}

// Load reads the inventory.
func (s InventorySource) Load() (inventory.Inventory, error) {
	if s.Fixture != "" {
		return inventory.ReadFile(s.Fixture)
	}
	collect := s.Collect
	if collect == nil {
		collect = device.Collect
	}
	return collect(device.Options{Root: s.Root})
}

// GresRequest is one `gres generate`: the inventory, the rendering's
// flags as given, and where the result goes.
type GresRequest struct {
	Source     InventorySource
	Node       string // Slurm NodeName; empty is the inventory's short host name
	AutoDetect bool
	DeviceMap  string            // gpu=PREFIX,mig=PREFIX
	Types      map[string]string // DEFAULT_OR_PROFILE=TYPE
	Weights    map[string]string // TYPE=WEIGHT per whole GPU
	Cores      map[string]string // GPU index=core list
	SkipLost   bool
	// Write, when set, is where gres.conf is written atomically.
	Write string
	// SlurmConf asks for the slurm.conf lines (refused with Write, which
	// prints them anyway).
	SlurmConf bool
	// Check compares the result with the node's GRES in Slurm; alone, it
	// prints only the comparison.
	Check bool
}

// Printed is what gres generate prints of res before the check: the
// slurm.conf lines with Write; nothing for Check without Write (show is
// false); the slurm.conf lines with SlurmConf; else gres.conf.
func (r GresRequest) Printed(res conf.Result) (text string, show bool) {
	switch {
	case r.Write != "":
		return res.SlurmConf, true
	case r.Check:
		return "", false
	case r.SlurmConf:
		return res.SlurmConf, true
	}
	return res.GresConf, true
}

// GeneratedGres is what gres generate did: the rendering, what of it is
// printed (GresRequest.Printed) and, with Check, the check's line when
// Slurm agrees.
type GeneratedGres struct {
	Result  conf.Result
	Printed string
	Checked string
}

// Text is what gres generate prints: the rendering's part, then the
// check's line.
func (g GeneratedGres) Text() string {
	if g.Checked == "" {
		return g.Printed
	}
	return g.Printed + g.Checked + "\n"
}

// MarshalJSON writes the rendering (its --json, with or without Check).
func (g GeneratedGres) MarshalJSON() ([]byte, error) { return json.Marshal(g.Result) }

// GenerateGres renders the node's gres.conf and slurm.conf lines from its
// inventory, logging the rendering's notes, writes gres.conf to r.Write
// when set (on any error the previous file stays as it was) and, with
// r.Check, compares the result with the node's GRES as nodes (slurmctld's
// nodes) reports it. It returns nil when nothing was rendered; a failed
// check comes with the rendering (still printed).
func (e *Env) GenerateGres(ctx context.Context, r GresRequest, nodes func(context.Context) ([]slurmrest.Node, error)) (*GeneratedGres, error) {
	res, err := e.renderGres(r)
	if err != nil {
		return nil, err
	}
	g := &GeneratedGres{Result: res}
	g.Printed, _ = r.Printed(res)
	if r.Check {
		g.Checked, err = slurmcheck.Check(ctx, slurmcheck.ListerFunc(nodes), res)
	}
	return g, err
}

// renderGres renders and writes gres.conf (GenerateGres).
func (e *Env) renderGres(r GresRequest) (conf.Result, error) {
	dm, err := conf.ParseDeviceMap(r.DeviceMap)
	if err != nil {
		return conf.Result{}, Input(err)
	}
	o := conf.Options{AutoDetect: r.AutoDetect, DeviceMap: dm, Types: r.Types, SkipLost: r.SkipLost}
	if o.GPUWeights, err = conf.ParseWeights(r.Weights); err != nil {
		return conf.Result{}, Input(err)
	}
	if o.Cores, err = conf.ParseCores(r.Cores); err != nil {
		return conf.Result{}, Input(err)
	}
	if r.Write != "" && r.SlurmConf {
		return conf.Result{}, Inputf("--slurm-conf and --write: with --write the slurm.conf lines are printed anyway")
	}
	inv, err := r.Source.Load()
	if err != nil {
		return conf.Result{}, err
	}
	if o.Node, err = conf.NodeName(inv, r.Node); err != nil {
		return conf.Result{}, Input(err)
	}
	res, err := conf.Render(inv, o)
	if err != nil {
		return res, err
	}
	for _, n := range res.Notes {
		e.Logger().Warn("gres generate", "node", o.Node, "note", n)
	}
	if r.Write != "" {
		if _, err := atomicfile.Write(r.Write, []byte(res.GresConf), atomicfile.Options{}); err != nil {
			return res, err
		}
		e.Logger().Info("gres.conf written", "path", r.Write, "node", o.Node, "gres", res.Gres)
	}
	return res, nil
}

// PlanRequest is one `gres plan`: the GPUs (Model and Count, or those of
// the inventory), the slices wanted and the name of the mig-parted config.
type PlanRequest struct {
	Source InventorySource
	Model  string
	Count  int
	Want   []string // PROFILE=COUNT or TYPE=COUNT
	Name   string   // the config's name in the mig-parted file
}

// MIGPlan is a MIG layout plan and its nvidia-mig-parted config.
type MIGPlan struct {
	Plan   mig.Plan
	Config string
}

// Text is the mig-parted config.
func (p MIGPlan) Text() string { return p.Config }

// MarshalJSON writes the plan.
func (p MIGPlan) MarshalJSON() ([]byte, error) { return json.Marshal(p.Plan) }

// PlanMIG lays out the slices r wants across its GPUs and renders the
// plan as an nvidia-mig-parted config named r.Name.
func (e *Env) PlanMIG(r PlanRequest) (MIGPlan, error) {
	demand, err := mig.ParseDemand(r.Want)
	if err != nil {
		return MIGPlan{}, Input(err)
	}
	gpus, err := e.planGPUs(r)
	if err != nil {
		return MIGPlan{}, err
	}
	plan, err := mig.PlanFor(gpus, demand)
	if err != nil {
		return MIGPlan{}, err
	}
	cfg, err := mig.MigPartedConfig(r.Name, plan)
	return MIGPlan{Plan: plan, Config: cfg}, err
}

// planGPUs are the GPUs of Model and Count, or of the inventory.
func (e *Env) planGPUs(r PlanRequest) ([]mig.GPU, error) {
	if r.Model != "" || r.Count != 0 {
		if r.Source.Fixture != "" {
			return nil, Inputf("give either --model and --gpus or --fixture, not both")
		}
		if r.Model == "" || r.Count <= 0 {
			return nil, Inputf("--model and --gpus go together (e.g. --model H100-80GB --gpus 2)")
		}
		gpus, err := mig.ModelGPUs(r.Model, r.Count)
		if err != nil {
			return nil, Inputf("--model %s --gpus %d: %v", r.Model, r.Count, err)
		}
		return gpus, nil
	}
	inv, err := r.Source.Load()
	if err != nil {
		return nil, err
	}
	gpus, skipped, err := mig.InventoryGPUs(inv)
	for _, s := range skipped {
		e.Logger().Warn("gres plan: GPU left out: "+s.Reason, "gpu", s.Index, "name", s.Name)
	}
	return gpus, err
}
