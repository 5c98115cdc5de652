package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// JobCache is a burst.JobLister that reads through to Jobs at most once
// per TTL: the snapshot's read (Refresh) and the burst planner's within
// the same cycle are one bulk read.
type JobCache struct {
	Jobs burst.JobLister
	TTL  time.Duration
	Now  func() time.Time

	mu   sync.Mutex
	at   time.Time
	last []burst.Job
}

var _ burst.JobLister = (*JobCache)(nil)

// ListJobs implements burst.JobLister: the last read while younger than
// TTL, else a new one.
func (c *JobCache) ListJobs(ctx context.Context) ([]burst.Job, error) {
	c.mu.Lock()
	if c.last != nil && c.clock().Sub(c.at) < c.TTL {
		js := c.last
		c.mu.Unlock()
		return js, nil
	}
	c.mu.Unlock()
	return c.Refresh(ctx)
}

// Refresh reads the jobs now.
func (c *JobCache) Refresh(ctx context.Context) ([]burst.Job, error) {
	js, err := c.Jobs.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	if js == nil {
		js = []burst.Job{}
	}
	c.mu.Lock()
	c.at, c.last = c.clock(), js
	c.mu.Unlock()
	return js, nil
}

func (c *JobCache) clock() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// InventoryCache is a reserve.Source that reads through at most once per
// TTL: the read-only booking routes (availability, find slot, list) share
// one inventory read per cycle. Admission never goes through it.
type InventoryCache struct {
	Source reserve.Source
	TTL    time.Duration
	Now    func() time.Time

	mu   sync.Mutex
	at   time.Time
	last *reserve.Inventory
	sf   singleflight.Group
}

var _ reserve.Source = (*InventoryCache)(nil)

// Inventory implements reserve.Source.
func (c *InventoryCache) Inventory(ctx context.Context) (reserve.Inventory, error) {
	c.mu.Lock()
	if c.last != nil && c.clock().Sub(c.at) < c.TTL {
		inv := *c.last
		c.mu.Unlock()
		return inv, nil
	}
	c.mu.Unlock()
	return c.Refresh(ctx)
}

// Refresh reads the inventory now (joining a read under way).
func (c *InventoryCache) Refresh(ctx context.Context) (reserve.Inventory, error) {
	v, err, _ := c.sf.Do("inventory", func() (any, error) {
		inv, err := c.Source.Inventory(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the cluster: %w", err)
		}
		c.mu.Lock()
		c.at, c.last = c.clock(), &inv
		c.mu.Unlock()
		return inv, nil
	})
	if err != nil {
		return reserve.Inventory{}, err
	}
	return v.(reserve.Inventory), nil
}

func (c *InventoryCache) clock() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
