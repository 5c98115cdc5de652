package health

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// submit stores and submits one run on a node.
func (s *Service) submit(ctx context.Context, st *snapshot, sn SlurmNode, names []string, p Purpose, schedule string, held bool, tenant, actor string, peers ...SlurmNode) (Run, error) {
	checks, err := s.Catalog.Resolve(names)
	if err != nil {
		return Run{}, err
	}
	key, err := newKey()
	if err != nil {
		return Run{}, err
	}
	r := Run{Key: key, Node: sn.Name, Checks: slices.Clone(names), Purpose: p, Schedule: schedule, Held: held, Tenant: tenant,
		Actor: actor, State: RunSubmitting, Model: sn.Model(), GPUs: sn.GPUCount(), RequestedAt: s.now()}
	nodes := []string{sn.Name}
	for _, pn := range peers {
		r.Peers = append(r.Peers, pn.Name)
		nodes = append(nodes, pn.Name)
	}
	script := check.Script{Key: key, Checks: checks, Model: r.Model, GPUs: r.GPUs}
	text, err := script.Render()
	if err != nil {
		return Run{}, err
	}
	if tenant != "" {
		r, err = s.Store.CreateTenantRun(ctx, r, r.RequestedAt.Add(-time.Hour), s.Settings.TenantChecksPerHour)
	} else {
		r, err = s.Store.CreateRun(ctx, r)
	}
	if err != nil {
		return Run{}, err
	}
	req := JobRequest{
		Name: "gpubridge-health", Comment: "gpubridge-health run=" + key, Account: s.Settings.Account, User: s.Settings.User,
		QOS: s.Settings.QOS, Partition: s.Settings.Partition, Nodes: nodes, Script: text,
		TimeLimit: script.TimeLimit(), StdOut: s.Outputs.Path(key),
	}
	if req.Partition == "" && len(sn.Partitions) > 0 {
		req.Partition = sn.Partitions[0]
	}
	if held {
		req.Reservation = FenceName(sn.Name)
	}
	if slices.ContainsFunc(checks, func(c check.Check) bool { return c.Exclusive }) {
		var g []string
		for _, t := range sn.GPUs {
			if t.Type != "" && t.Count > 0 {
				g = append(g, fmt.Sprintf("gres/gpu:%s:%d", t.Type, t.Count))
			}
		}
		req.GPUs = strings.Join(g, ",")
	}
	id, err := s.Jobs.Submit(ctx, req)
	if err != nil {
		var rep Report
		if _, aerr := s.abort(ctx, r, "submit failed: "+err.Error(), &rep); aerr != nil {
			s.Logger.Warn("health: aborting an unsubmitted run", "run", r.ID, "error", aerr)
		}
		return Run{}, err
	}
	if err := s.Store.SetRunJob(ctx, r.ID, id); err != nil {
		return Run{}, err
	}
	r.JobID, r.State = id, RunSubmitted
	st.inflight = append(st.inflight, r)
	st.jobs[id] = JobState{State: "PENDING"}
	s.Logger.Debug("health: run submitted", "run", r.ID, "node", r.Node, "checks", strings.Join(names, ","), "job", id, "purpose", p)
	return r, nil
}

func newKey() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("run key: %w", err)
	}
	return "h" + hex.EncodeToString(b), nil
}
