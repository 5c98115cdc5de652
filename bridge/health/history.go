package health

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// NodeUse is a span during which a tenant's jobs ran on a node (or the
// node was booked for it).
type NodeUse struct {
	Node  string    `json:"node"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// TenantHistory says where a tenant's jobs ran in a window (slurmdbd's job
// records; a job still running ends at until).
type TenantHistory interface {
	NodeUses(ctx context.Context, tenant string, since, until time.Time) ([]NodeUse, error)
}

// HistoryGrace: lifecycle events and check results this long after a use
// ended still belong to it. The check that finds a fault often runs, and
// the drain follows, just after the job that hit the fault ended.
const HistoryGrace = 15 * time.Minute

// What a history entry is.
const (
	HistUsed  = "used"  // the tenant's jobs ran on the node
	HistState = "state" // a lifecycle change (why it was drained, resumed)
	HistCheck = "check" // a check's result
)

// HistoryEntry is one line of a tenant's view of a node's health: its use
// of the node, the node's lifecycle changes while it used it, and the
// results of the checks that ran then (its own and the scheduled ones,
// never another tenant's).
type HistoryEntry struct {
	At     time.Time     `json:"at"`
	Node   string        `json:"node"`
	What   string        `json:"what"`
	Use    *NodeUse      `json:"use,omitempty"`
	Event  *Event        `json:"event,omitempty"`
	Result *StoredResult `json:"result,omitempty"`
}

// ErrNoHistory: the service has no TenantHistory source.
var ErrNoHistory = errors.New("no tenant history source")

// TenantHistory is the tenant's view of the health of the nodes it used
// since a time: when it used each (merged spans), why a node it used was
// drained or resumed, and the check results of those spans. node, when
// set, keeps one node.
func (s *Service) TenantHistory(ctx context.Context, tenant, node string, since time.Time) ([]HistoryEntry, error) {
	if s.History == nil {
		return nil, ErrNoHistory
	}
	now := s.now()
	uses, err := s.History.NodeUses(ctx, tenant, since, now)
	if err != nil {
		return nil, fmt.Errorf("where tenant %s ran: %w", tenant, err)
	}
	booked, err := s.Bookings.BookedNodes(ctx, tenant, now)
	if err != nil {
		return nil, fmt.Errorf("bookings of tenant %s: %w", tenant, err)
	}
	for _, n := range booked {
		uses = append(uses, NodeUse{Node: n, Start: now, End: now})
	}
	var kept []NodeUse
	for _, u := range uses {
		if s.managed(u.Node) && (node == "" || u.Node == node) {
			kept = append(kept, u)
		}
	}
	spans := MergeUses(kept)
	events := map[string][]Event{}
	results := map[string][]StoredResult{}
	for n, sp := range spans {
		if events[n], err = s.Store.Events(ctx, n, sp[0].Start); err != nil {
			return nil, err
		}
		if results[n], err = s.Store.Results(ctx, ResultFilter{Node: n, Since: sp[0].Start, Limit: 1000}); err != nil {
			return nil, err
		}
	}
	return BuildHistory(tenant, spans, events, results, now), nil
}

// MergeUses groups uses by node and merges the spans of each that overlap
// or lie within HistoryGrace of each other, in time order.
func MergeUses(uses []NodeUse) map[string][]NodeUse {
	by := map[string][]NodeUse{}
	for _, u := range uses {
		if u.End.Before(u.Start) {
			u.End = u.Start
		}
		by[u.Node] = append(by[u.Node], u)
	}
	for n, us := range by {
		sort.Slice(us, func(i, j int) bool { return us[i].Start.Before(us[j].Start) })
		merged := us[:1]
		for _, u := range us[1:] {
			last := &merged[len(merged)-1]
			if !u.Start.After(last.End.Add(HistoryGrace)) {
				if u.End.After(last.End) {
					last.End = u.End
				}
				continue
			}
			merged = append(merged, u)
		}
		by[n] = merged
	}
	return by
}

// BuildHistory lays out a tenant's history, newest first: each span it
// used a node, the node's events within a span (or HistoryGrace after
// it), and the results within a span of the checks the tenant triggered or
// gpubridge scheduled, never those another tenant triggered.
func BuildHistory(tenant string, spans map[string][]NodeUse, events map[string][]Event, results map[string][]StoredResult, now time.Time) []HistoryEntry {
	var out []HistoryEntry
	within := func(n string, at time.Time) bool {
		return slices.ContainsFunc(spans[n], func(u NodeUse) bool { return !at.Before(u.Start) && !at.After(u.End.Add(HistoryGrace)) })
	}
	for n, us := range spans {
		for _, u := range us {
			u := u
			out = append(out, HistoryEntry{At: u.Start, Node: n, What: HistUsed, Use: &u})
		}
		for _, e := range events[n] {
			if within(n, e.At) {
				e := e
				out = append(out, HistoryEntry{At: e.At, Node: n, What: HistState, Event: &e})
			}
		}
		for _, r := range results[n] {
			if (r.Tenant == "" || r.Tenant == tenant) && within(n, r.At) {
				r := r
				out = append(out, HistoryEntry{At: r.At, Node: n, What: HistCheck, Result: &r})
			}
		}
	}
	order := map[string]int{HistState: 0, HistCheck: 1, HistUsed: 2}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case !a.At.Equal(b.At):
			return a.At.After(b.At)
		case a.Node != b.Node:
			return a.Node < b.Node
		}
		return order[a.What] < order[b.What]
	})
	return out
}

// Detail says what a history entry is, in words.
func (h HistoryEntry) Detail() string {
	switch {
	case h.Use != nil:
		return fmt.Sprintf("its jobs ran here %s to %s", h.Use.Start.UTC().Format(time.RFC3339), h.Use.End.UTC().Format(time.RFC3339))
	case h.Event != nil:
		from := string(h.Event.From)
		if from == "" {
			from = "new"
		}
		return from + " -> " + string(h.Event.To) + ": " + h.Event.Reason
	case h.Result != nil:
		var vals []string
		for _, v := range h.Result.Values {
			vals = append(vals, v.String())
		}
		d := fmt.Sprintf("%s %s", h.Result.Check, h.Result.Verdict)
		if h.Result.Reason != "" {
			d += ": " + h.Result.Reason
		}
		if len(vals) > 0 {
			d += " (" + strings.Join(vals, " ") + ")"
		}
		return d + fmt.Sprintf(" [run %d, %s]", h.Result.RunID, h.Result.Purpose)
	}
	return ""
}
