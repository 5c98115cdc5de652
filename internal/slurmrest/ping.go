package slurmrest

import (
	"context"
	"net/http"
	"time"
)

// PingResult is slurmrestd's view of the cluster: its version and whether
// the controllers answer.
type PingResult struct {
	URL          string // slurmrestd's base URL
	APIVersion   string // negotiated data_parser version, e.g. v0.0.44
	SlurmVersion string // e.g. 26.05.5
	SlurmRelease string // Slurm's release string
	Cluster      string
	Controllers  []Controller
}

// Controller is one slurmctld as the ping saw it.
type Controller struct {
	Hostname   string
	Pinged     string // UP or DOWN, as Slurm reports it
	Responding bool
	Latency    time.Duration
	Mode       string // primary, backup
	Primary    bool
}

// Up reports whether a primary controller responds.
func (p PingResult) Up() bool {
	for _, c := range p.Controllers {
		if c.Responding && c.Primary {
			return true
		}
	}
	return false
}

type pingResp struct {
	envelope
	Pings []struct {
		Hostname   string `json:"hostname"`
		Pinged     string `json:"pinged"`
		Responding bool   `json:"responding"`
		Latency    int64  `json:"latency"` // microseconds
		Mode       string `json:"mode"`
		Primary    bool   `json:"primary"`
	} `json:"pings"`
}

// Ping asks slurmrestd to ping the controllers (GET /slurm/{v}/ping/).
func (c *Client) Ping(ctx context.Context) (PingResult, error) {
	var resp pingResp
	if err := c.do(ctx, http.MethodGet, c.slurmPath("ping/"), nil, nil, &resp); err != nil {
		return PingResult{}, err
	}
	r := PingResult{URL: c.URL(), APIVersion: c.APIVersion()}
	if m := resp.Meta; m != nil {
		v := m.Slurm.Version
		if v.Major != "" {
			r.SlurmVersion = v.Major + "." + v.Minor + "." + v.Micro
		}
		r.SlurmRelease = m.Slurm.Release
		r.Cluster = m.Slurm.Cluster
	}
	for _, p := range resp.Pings {
		r.Controllers = append(r.Controllers, Controller{
			Hostname: p.Hostname, Pinged: p.Pinged, Responding: p.Responding,
			Latency: time.Duration(p.Latency) * time.Microsecond, Mode: p.Mode, Primary: p.Primary,
		})
	}
	return r, nil
}
