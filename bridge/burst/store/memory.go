package store

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/burst"
)

// Memory is an in-memory store with the same behaviour as DB (both pass
// the same conformance tests), for tests and dry runs.
type Memory struct {
	mu       sync.Mutex
	moves    map[moveKey]burst.MoveRecord
	refusals map[int64]StoredRefusal
}

type moveKey struct {
	job int64
	at  int64
}

var _ burst.Store = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{moves: map[moveKey]burst.MoveRecord{}, refusals: map[int64]StoredRefusal{}}
}

// RecordMoves implements burst.Store.
func (m *Memory) RecordMoves(_ context.Context, _ time.Time, ms []burst.MoveRecord) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, x := range ms {
		x.MovedAt = x.MovedAt.UTC().Truncate(time.Second)
		x.SubmitTime = x.SubmitTime.UTC().Truncate(time.Second)
		k := moveKey{x.JobID, x.MovedAt.Unix()}
		if _, ok := m.moves[k]; !ok {
			m.moves[k] = x
			n++
		}
	}
	return n, nil
}

// SyncRefusals implements burst.Store.
func (m *Memory) SyncRefusals(_ context.Context, at time.Time, rs []burst.Refusal) ([]burst.Refusal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at = at.UTC().Truncate(time.Microsecond)
	next := make(map[int64]StoredRefusal, len(rs))
	var changed []burst.Refusal
	for _, r := range rs {
		if _, dup := next[r.JobID]; dup {
			continue
		}
		s := StoredRefusal{Refusal: r, GPUs: r.GPUs.String(), FirstAt: at.Truncate(time.Second), LastAt: at}
		s.Refusal.GPUs = nil
		if old, ok := m.refusals[r.JobID]; ok && old.Reason == r.Reason {
			s.FirstAt = old.FirstAt
		} else {
			changed = append(changed, r)
		}
		next[r.JobID] = s
	}
	m.refusals = next
	return changed, nil
}

// Refusals returns the stored refusals (of tenant, when not empty), by
// tenant and job.
func (m *Memory) Refusals(_ context.Context, tenant string) ([]StoredRefusal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []StoredRefusal
	for _, r := range m.refusals {
		if tenant == "" || r.Tenant == tenant {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b StoredRefusal) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.JobID, b.JobID))
	})
	return out, nil
}

// Moves returns the moves recorded at or after since (of tenant, when not
// empty), oldest first.
func (m *Memory) Moves(_ context.Context, tenant string, since time.Time) ([]burst.MoveRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []burst.MoveRecord
	for _, x := range m.moves {
		if (tenant == "" || x.Tenant == tenant) && !x.MovedAt.Before(since) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b burst.MoveRecord) int {
		return cmp.Or(a.MovedAt.Compare(b.MovedAt), cmp.Compare(a.JobID, b.JobID))
	})
	return out, nil
}
