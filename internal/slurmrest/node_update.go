package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// NodeState is a state an admin sets on a node (scontrol update
// nodename=... state=...).
type NodeState string

const (
	// NodeDrain: no new job starts on the node; running jobs finish.
	NodeDrain NodeState = "DRAIN"
	// NodeDown: the node is out of service now; its running jobs are
	// killed.
	NodeDown NodeState = "DOWN"
	// NodeResume: back in service from DRAIN or DOWN (clears the reason).
	NodeResume NodeState = "RESUME"
)

// maxNodeReason bounds a node reason.
const maxNodeReason = 1024

type wNodeUpdate struct {
	State  []string `json:"state"`
	Reason string   `json:"reason,omitempty"`
}

// UpdateNode sets a node's state (POST /slurm/{v}/node/{name}); DRAIN and
// DOWN need a reason, which slurmctld shows as the node's reason (sinfo
// -R). It needs an operator's or admin's token.
func (c *Client) UpdateNode(ctx context.Context, name string, state NodeState, reason string) error {
	reason = strings.TrimSpace(reason)
	switch {
	case name == "" || strings.ContainsAny(name, ",[] "):
		return fmt.Errorf("update node %q: %w: name one node", name, ErrInvalid)
	case state != NodeDrain && state != NodeDown && state != NodeResume:
		return fmt.Errorf("update node %s: %w: state %q (use DRAIN, DOWN or RESUME)", name, ErrInvalid, state)
	case state != NodeResume && reason == "":
		return fmt.Errorf("update node %s: %w: %s needs a reason", name, ErrInvalid, state)
	case len(reason) > maxNodeReason || strings.ContainsAny(reason, "\n\r"):
		return fmt.Errorf("update node %s: %w: the reason must be one line of at most %d bytes", name, ErrInvalid, maxNodeReason)
	}
	body := wNodeUpdate{State: []string{string(state)}, Reason: reason}
	if err := c.do(ctx, http.MethodPost, c.slurmPath("node/%s", url.PathEscape(name)), nil, body, nil); err != nil {
		return fmt.Errorf("update node %s to %s: %w", name, state, err)
	}
	return nil
}
