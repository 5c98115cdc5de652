package slurmrest

import (
	"context"
	"fmt"
	"net/http"
)

// Partition is one slurmctld partition.
type Partition struct {
	Name  string
	Nodes string   // hostlist expression of the configured nodes, e.g. gpu-[a-b]
	State []string // UP, DOWN, DRAIN, INACTIVE
	// QOS is the partition QOS (QOS=); AllowedQOS/DeniedQOS the AllowQos
	// and DenyQos lists (Slurm prints "ALL" for no restriction).
	QOS             string
	AllowedQOS      []string
	DeniedQOS       []string
	AllowedAccounts []string
	DeniedAccounts  []string
	TotalCPUs       int
	TotalNodes      int
	TRES            string // configured TRES, e.g. cpu=16,mem=32000M,node=2,gres/gpu=4
	BillingWeights  string
	PriorityTier    int
	MaxTimeMinutes  Limit
}

type wPartition struct {
	Name  string `json:"name"`
	Nodes struct {
		Configured string `json:"configured"`
		Total      int    `json:"total"`
	} `json:"nodes"`
	Accounts struct {
		Allowed string `json:"allowed"`
		Deny    string `json:"deny"`
	} `json:"accounts"`
	QOS struct {
		Allowed  string `json:"allowed"`
		Deny     string `json:"deny"`
		Assigned string `json:"assigned"`
	} `json:"qos"`
	TRES struct {
		BillingWeights string `json:"billing_weights"`
		Configured     string `json:"configured"`
	} `json:"tres"`
	CPUs struct {
		Total int `json:"total"`
	} `json:"cpus"`
	Maximums struct {
		Time *wNoVal `json:"time"`
	} `json:"maximums"`
	Priority struct {
		Tier int `json:"tier"`
	} `json:"priority"`
	Partition struct {
		State []string `json:"state"`
	} `json:"partition"`
}

type partitionsResp struct {
	envelope
	Partitions []wPartition `json:"partitions"`
}

// ListPartitions returns every partition (GET /slurm/{v}/partitions/).
func (c *Client) ListPartitions(ctx context.Context) ([]Partition, error) {
	var resp partitionsResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("partitions/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	out := make([]Partition, 0, len(resp.Partitions))
	for _, w := range resp.Partitions {
		out = append(out, Partition{
			Name: w.Name, Nodes: w.Nodes.Configured, State: w.Partition.State,
			QOS: w.QOS.Assigned, AllowedQOS: splitList(w.QOS.Allowed), DeniedQOS: splitList(w.QOS.Deny),
			AllowedAccounts: splitList(w.Accounts.Allowed), DeniedAccounts: splitList(w.Accounts.Deny),
			TotalCPUs: w.CPUs.Total, TotalNodes: w.Nodes.Total, TRES: w.TRES.Configured,
			BillingWeights: w.TRES.BillingWeights, PriorityTier: w.Priority.Tier,
			MaxTimeMinutes: w.Maximums.Time.limit(),
		})
	}
	return out, nil
}
