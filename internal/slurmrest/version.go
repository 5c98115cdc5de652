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

// negotiate picks the data_parser version: the pinned one, else the first
// of Supported whose ping answers with anything but 404. When none does, it
// reads /openapi/v3 to list what the server offers.
//
// The whole negotiation shares one Options.Timeout, so that a server that
// does not answer makes New (and `gpubridge ping`) fail within it.
func (c *Client) negotiate(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, c.opts.Timeout)
	defer cancel()
	candidates := Supported
	if c.opts.APIVersion != "" {
		candidates = []string{c.opts.APIVersion}
	}
	for _, v := range candidates {
		c.version = v
		var resp pingResp
		err := c.do(ctx, http.MethodGet, c.slurmPath("ping/"), nil, nil, &resp)
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
		if resp.Meta != nil && resp.Meta.Slurm.Cluster != "" {
			served := resp.Meta.Slurm.Cluster
			if c.cluster != "" && c.cluster != served {
				return fmt.Errorf("slurmrestd at %s serves cluster %q, but gpubridge is configured for cluster %q (set GPUBRIDGE_CLUSTER / cluster:): %w",
					c.base, served, c.cluster, ErrInvalid)
			}
			c.cluster = served
		}
		return nil
	}
	c.version = ""
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
