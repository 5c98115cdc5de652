package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Negotiate picks the data_parser version now, when no request did yet
// (the first request does it otherwise): the pinned one, else the first of
// Supported whose ping answers with anything but 404; when none does, it
// reads /openapi/v3 to list what the server offers. It also learns the
// cluster slurmrestd serves, and fails (ErrInvalid) when it is not the
// configured one. A failed negotiation is not remembered: the next request
// tries again. Concurrent callers negotiate once.
//
// The whole negotiation shares one Options.Timeout, so that a server that
// does not answer makes it (and `gpubridge ping`) fail within it.
func (c *Client) Negotiate(ctx context.Context) error {
	select {
	case c.negotiating <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.negotiating }()
	c.stateMu.Lock()
	done := c.negotiated
	c.stateMu.Unlock()
	if done {
		return nil
	}
	return c.negotiate(ctx)
}

// Negotiated reports whether a request (or Negotiate) negotiated the API
// version with the server; it never connects.
func (c *Client) Negotiated() bool {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.negotiated
}

// forget makes the next request negotiate again.
func (c *Client) forget() {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	c.negotiated = false
}

// clusterFor is the cluster name for a request about to be sent: a failed
// negotiation leaves it as configured (maybe ""), but then the request's
// own negotiation fails too and nothing is sent.
func (c *Client) clusterFor(ctx context.Context) string {
	_ = c.Negotiate(ctx)
	return c.Cluster()
}

// noServer reports whether err says no slurmrestd answered (not a Slurm
// error, not the caller giving up): it may have restarted, or been
// upgraded, since the version was negotiated.
func noServer(ctx context.Context, err error) bool {
	var se *SlurmError
	return ctx.Err() == nil && !errors.As(err, &se) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrInvalid)
}

// setVersion records the version being tried (serverTime reads it when a
// ping's token is refused) or picked.
func (c *Client) setVersion(v string) {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	c.version = v
}

// negotiate is Negotiate's exchange; the caller holds c.negotiating.
func (c *Client) negotiate(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, c.opts.Timeout)
	defer cancel()
	candidates := Supported
	if c.opts.APIVersion != "" {
		candidates = []string{c.opts.APIVersion}
	}
	for _, v := range candidates {
		c.setVersion(v)
		var resp pingResp
		err := c.send(ctx, http.MethodGet, "/slurm/"+v+"/ping/", nil, nil, &resp)
		var se *SlurmError
		if errors.As(err, &se) && se.HTTPStatus == http.StatusNotFound {
			continue
		}
		if err != nil && !errors.As(err, &se) {
			if parent.Err() == nil && ctx.Err() != nil {
				return fmt.Errorf("slurmrestd at %s: no answer within %s: %w", c.base, c.opts.Timeout, err)
			}
			return err // transport: the server is not there
		}
		if errors.Is(err, ErrUnauthorized) {
			return fmt.Errorf("slurmrestd at %s: authentication failed (check the JWT key or token and the user): %w", c.base, err)
		}
		// Any other answer (even a Slurm error because slurmctld is down)
		// shows the version is served.
		return c.served(resp.Meta)
	}
	c.setVersion(c.opts.APIVersion)
	offered, err := c.offeredVersions(ctx)
	if err != nil {
		return fmt.Errorf("slurmrestd at %s: offers neither %s (%w), and listing its versions failed: %v", c.base, strings.Join(candidates, " nor "), ErrUnsupportedVersion, err)
	}
	list := "none"
	if len(offered) > 0 {
		list = strings.Join(offered, ", ")
	}
	return fmt.Errorf("slurmrestd at %s: offers data_parser %s; gpubridge needs %s: %w", c.base, list, strings.Join(candidates, " or "), ErrUnsupportedVersion)
}

// served records a ping's answer: the version tried is served, and the
// cluster is the one slurmrestd serves (refused when another is
// configured).
func (c *Client) served(m *wireMeta) error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if m != nil && m.Slurm.Cluster != "" {
		served := m.Slurm.Cluster
		if c.opts.Cluster != "" && c.opts.Cluster != served {
			return fmt.Errorf("slurmrestd at %s serves cluster %q, but gpubridge is configured for cluster %q (set GPUBRIDGE_CLUSTER / cluster:): %w",
				c.base, served, c.opts.Cluster, ErrInvalid)
		}
		c.cluster = served
	}
	c.negotiated = true
	return nil
}

var versionInPath = regexp.MustCompile(`^/slurm(?:db)?/(v\d+\.\d+\.\d+)/`)

// offeredVersions lists the data_parser versions in the server's OpenAPI
// paths, sorted.
func (c *Client) offeredVersions(ctx context.Context) ([]string, error) {
	var spec struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := c.do(ctx, http.MethodGet, "/openapi/v3", nil, nil, &spec); err != nil {
		return nil, err
	}
	var vs []string
	for p := range spec.Paths {
		if m := versionInPath.FindStringSubmatch(p); m != nil && !slices.Contains(vs, m[1]) {
			vs = append(vs, m[1])
		}
	}
	slices.SortFunc(vs, compareVersions)
	return vs, nil
}

// compareVersions orders v0.0.9 before v0.0.10.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var x, y int
		fmt.Sscan(pa[i], &x)
		fmt.Sscan(pb[i], &y)
		if x != y {
			return x - y
		}
	}
	return len(pa) - len(pb)
}
