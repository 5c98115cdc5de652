package slurmrest

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/table"
)

// The tables of `gpubridge ping` and `show nodes` (the status page shows
// the same views).

// NodeRow is a node and one of its GPU types (`show nodes`, its --json
// objects).
type NodeRow struct {
	Name       string   `json:"name"`
	State      string   `json:"state"`
	Partitions []string `json:"partitions"`
	GPUType    string   `json:"gpuType"`
	GPUs       int64    `json:"gpus"`
	GPUsUsed   int64    `json:"gpusUsed"`
}

// NodeRows lays nodes out one row per node and GPU type, by name; a node
// without GPUs gets one row with an empty type and 0.
func NodeRows(nodes []Node) []NodeRow {
	rows := []NodeRow{}
	for _, n := range nodes {
		base := NodeRow{Name: n.Name, State: strings.Join(n.State, "+"), Partitions: n.Partitions}
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
	slices.SortStableFunc(rows, func(x, y NodeRow) int { return strings.Compare(x.Name, y.Name) })
	return rows
}

// NodesTable is `show nodes`.
func NodesTable(nodes []Node) table.Table {
	rows := NodeRows(nodes)
	t := table.Table{Header: []string{"Name", "State", "Partitions", "GPUType", "GPUs", "GPUsUsed"}, Raw: rows}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Name, r.State, strings.Join(r.Partitions, ","), r.GPUType,
			strconv.FormatInt(r.GPUs, 10), strconv.FormatInt(r.GPUsUsed, 10)})
	}
	return t
}

// PingRow is one controller of a ping (its --json object).
type PingRow struct {
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

// Table is `gpubridge ping`: one row per controller (one empty when
// slurmrestd named none).
func (p PingResult) Table() table.Table {
	t := table.Table{
		Header: []string{"URL", "APIVersion", "SlurmVersion", "Cluster", "Controller", "Mode", "State", "Responding", "Latency"},
		Keys:   []string{"url", "apiVersion", "slurmVersion", "cluster", "controller", "mode", "state", "responding", "latencyMs"},
	}
	ctrls := p.Controllers
	if len(ctrls) == 0 {
		ctrls = []Controller{{}}
	}
	var raw []PingRow
	for _, c := range ctrls {
		r := PingRow{p.URL, p.APIVersion, p.SlurmVersion, p.Cluster, c.Hostname, c.Mode, c.Pinged, c.Responding, float64(c.Latency) / float64(time.Millisecond)}
		raw = append(raw, r)
		t.Rows = append(t.Rows, []string{r.URL, r.APIVersion, r.SlurmVersion, r.Cluster, r.Controller, r.Mode, r.State,
			strconv.FormatBool(r.Responding), c.Latency.Round(10 * time.Microsecond).String()})
	}
	t.Raw = raw
	return t
}
