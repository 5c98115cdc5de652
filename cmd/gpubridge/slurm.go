package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerSlurm adds the commands that talk to slurmrestd: ping, show nodes.
func registerSlurm(a *App, root, show *cobra.Command) {
	root.AddCommand(pingCmd(a))
	show.AddCommand(showNodesCmd(a))
}

func pingCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "ping",
		Short: "Check slurmrestd and the Slurm controllers; print versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := a.Slurm(cmd.Context())
			if err != nil {
				return err
			}
			p, err := cl.Ping(cmd.Context())
			if err != nil {
				return err
			}
			t := table.Table{
				Header: []string{"URL", "APIVersion", "SlurmVersion", "Cluster", "Controller", "Mode", "State", "Responding", "Latency"},
				Keys:   []string{"url", "apiVersion", "slurmVersion", "cluster", "controller", "mode", "state", "responding", "latencyMs"},
			}
			type row struct {
				URL          string  `json:"url"`
				APIVersion   string  `json:"apiVersion"`
				SlurmVersion string  `json:"slurmVersion"`
				Cluster      string  `json:"cluster"`
				Controller   string  `json:"controller"`
				Mode         string  `json:"mode"`
				State        string  `json:"state"`
				Responding   bool    `json:"responding"`
				LatencyMS    float64 `json:"latencyMs"`
			}
			var raw []row
			ctrls := p.Controllers
			if len(ctrls) == 0 {
				ctrls = []slurmrest.Controller{{}}
			}
			for _, c := range ctrls {
				r := row{p.URL, p.APIVersion, p.SlurmVersion, p.Cluster, c.Hostname, c.Mode, c.Pinged, c.Responding, float64(c.Latency) / float64(time.Millisecond)}
				raw = append(raw, r)
				t.Rows = append(t.Rows, []string{r.URL, r.APIVersion, r.SlurmVersion, r.Cluster, r.Controller, r.Mode, r.State,
					strconv.FormatBool(r.Responding), c.Latency.Round(10 * time.Microsecond).String()})
			}
			t.Raw = raw
			if err := a.Print(t); err != nil {
				return err
			}
			if !p.Up() {
				// slurmrestd answers ping even when slurmctld rejects the
				// token: a DOWN controller may be a bad JWT key.
				return fmt.Errorf("slurmrestd at %s: no primary controller responds (controller down, or slurmctld rejected the token)", p.URL)
			}
			return nil
		},
	}
}

// nodeRow is one line of `show nodes`: a node and one of its GPU types.
type nodeRow struct {
	Name       string   `json:"name"`
	State      string   `json:"state"`
	Partitions []string `json:"partitions"`
	GPUType    string   `json:"gpuType"`
	GPUs       int64    `json:"gpus"`
	GPUsUsed   int64    `json:"gpusUsed"`
}

// nodeRows lays nodes out one row per node and GPU type; a node without
// GPUs gets one row with an empty type and 0.
func nodeRows(nodes []slurmrest.Node) []nodeRow {
	var rows []nodeRow
	for _, n := range nodes {
		base := nodeRow{Name: n.Name, State: strings.Join(n.State, "+"), Partitions: n.Partitions}
		if base.Partitions == nil {
			base.Partitions = []string{}
		}
		gpus := n.GPUs()
		if len(gpus) == 0 {
			rows = append(rows, base)
			continue
		}
		for _, g := range gpus {
			r := base
			r.GPUType, r.GPUs, r.GPUsUsed = g.Type, g.Total, g.Used
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(x, y nodeRow) int { return strings.Compare(x.Name, y.Name) })
	return rows
}

func showNodesCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes [where COL=VALUE ...] [format=COL,...]",
		Short: "Nodes with their GPUs per type, as slurmctld reports them",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.showArgs(args, kv.Spec{})
			if err != nil {
				return err
			}
			if len(p.Names) > 0 {
				return usagef("unexpected %q: use where name=%s", p.Names[0], p.Names[0])
			}
			cl, err := a.Slurm(cmd.Context())
			if err != nil {
				return err
			}
			nodes, err := cl.ListNodes(cmd.Context())
			if err != nil {
				return err
			}
			rows := nodeRows(nodes)
			t := table.Table{Header: []string{"Name", "State", "Partitions", "GPUType", "GPUs", "GPUsUsed"}, Raw: rows}
			if rows == nil {
				t.Raw = []nodeRow{}
			}
			for _, r := range rows {
				t.Rows = append(t.Rows, []string{r.Name, r.State, strings.Join(r.Partitions, ","), r.GPUType,
					strconv.FormatInt(r.GPUs, 10), strconv.FormatInt(r.GPUsUsed, 10)})
			}
			return a.Print(t)
		},
	}
}
