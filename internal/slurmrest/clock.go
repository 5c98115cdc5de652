package slurmrest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Slurm checks a token's exp against its own clock with no leeway, so a
// gpubridge host whose clock is behind slurmctld's by more than what is left
// of a token's lifetime has every minted token refused (measured: HTTP 511
// error 1007 from /slurm/, HTTP 502 error 7000 from /slurmdb/). The client
// then reads slurmctld's clock once and mints by it.

// clockProbeEvery is the least time between two reads of slurmctld's clock.
const clockProbeEvery = 10 * time.Second

// probeLifetime is the lifetime of the token that reads slurmctld's clock:
// long, so that it is valid whatever the skew (up to a day).
const probeLifetime = 24 * time.Hour

// clockSuspect says whether err may come from a token that Slurm found
// expired: a minted token refused by slurmctld (1007) or by slurmdbd (7000
// on /slurmdb/).
func (c *Client) clockSuspect(path string, err error) bool {
	if c.opts.NoClockCorrection || c.auth.key == nil {
		return false
	}
	var se *SlurmError
	if !errors.As(err, &se) {
		return false
	}
	return se.HasNumber(errnoAuth) || se.HTTPStatus == http.StatusNetworkAuthenticationRequired ||
		strings.HasPrefix(path, "/slurmdb/") && se.HasNumber(errnoDBConnection)
}

// resyncClock reads slurmctld's time and, when it differs from the clock
// the tokens were minted by, corrects the tokens' clock and drops the
// cached tokens. It reports whether the correction changed anything.
func (c *Client) resyncClock(ctx context.Context) bool {
	c.clockMu.Lock()
	defer c.clockMu.Unlock()
	if t := c.clockProbe; !t.IsZero() && time.Since(t) < clockProbeEvery {
		return false
	}
	c.clockProbe = time.Now()
	server, local, err := c.serverTime(ctx)
	if err != nil {
		c.log.Warn("a token was refused and slurmctld's clock could not be read", "error", err)
		return false
	}
	skew := server.Sub(local).Round(time.Second)
	old := c.auth.setSkew(skew)
	if d := skew - old; d > -2*time.Second && d < 2*time.Second {
		return false // not the clock
	}
	c.log.Warn("the local clock differs from slurmctld's; minting tokens by slurmctld's clock",
		"slurmctld_ahead_by", skew, "was", old)
	return true
}

// serverTime reads statistics.req_time of GET /slurm/{v}/diag/ with a
// long-lived token, and the local time (by the client's clock) in the
// middle of the exchange.
func (c *Client) serverTime(ctx context.Context) (server, local time.Time, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	path := "/slurm/" + c.APIVersion() + "/diag/" // negotiated, or being tried by Negotiate
	u := *c.base
	u.Path = c.base.Path + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return server, local, err
	}
	tok, err := c.auth.mint(c.opts.User, probeLifetime)
	if err != nil {
		return server, local, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-SLURM-USER-TOKEN", tok)
	c.reads.Add(1)
	t0 := c.opts.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return server, local, c.transportError(ctx, http.MethodGet, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	t1 := c.opts.Now()
	if err != nil {
		return server, local, err
	}
	var d struct {
		envelope
		Statistics struct {
			ReqTime wNoVal `json:"req_time"`
		} `json:"statistics"`
	}
	if _, err := decodeResponse(http.MethodGet, path, resp.StatusCode, raw, &d); err != nil {
		return server, local, err
	}
	if d.Statistics.ReqTime.Number <= 0 {
		return server, local, fmt.Errorf("GET %s: no statistics.req_time in the answer", path)
	}
	return time.Unix(d.Statistics.ReqTime.Number, 0), t0.Add(t1.Sub(t0) / 2), nil
}

// ControllerTime is slurmctld's clock now (GET /slurm/{v}/diag/, one
// read), to the second. It works whatever the local clock says.
func (c *Client) ControllerTime(ctx context.Context) (time.Time, error) {
	server, local, err := c.serverTime(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read slurmctld's clock: %w", err)
	}
	return server.Add(c.opts.Now().Sub(local)).UTC().Truncate(time.Second), nil
}
