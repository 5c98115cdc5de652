package ledger

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// WriteCredits writes the credits whose keys the ledger does not hold yet
// (under the cluster's ledger lock, so that no close runs meanwhile),
// booking each in the first open period from its loss period, and returns
// the credits that were new, as stored. A key already written adds nothing. An invalid credit
// fails the batch before anything is written (ErrBadCredit).
func (m *Memory) WriteCredits(ctx context.Context, cluster string, cs []Credit, now time.Time) ([]Credit, error) {
	if err := checkCredits(cs); err != nil {
		return nil, err
	}
	release, err := m.Lock(ctx, cluster, creditWait)
	if err != nil {
		return nil, fmt.Errorf("write credits: %w", err)
	}
	defer release()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cluster(cluster)
	if c.credits == nil {
		c.credits = map[string]Credit{}
	}
	closed := c.closed()
	var out []Credit
	for _, cr := range cs {
		if _, ok := c.credits[cr.Key]; ok {
			continue
		}
		cr.Booked, cr.WrittenAt, cr.Reason = closed.book(cr.Period), now.Unix(), clip(cr.Reason)
		c.credits[cr.Key] = cr
		out = append(out, cr)
	}
	return out, nil
}

// Credits streams the credits booked in q.Booked (of q.Account, when
// given), in CompareCredits order.
func (m *Memory) Credits(_ context.Context, cluster string, q CreditQuery, fn func(Credit) error) error {
	m.mu.Lock()
	var out []Credit
	for _, c := range m.cluster(cluster).credits {
		if c.Booked == q.Booked && (q.Account == "" || c.Account == q.Account) {
			out = append(out, c)
		}
	}
	m.mu.Unlock()
	for _, c := range sortCredits(out) {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// RunLines streams every line (all revisions, every booked period) of the
// given runs, in CompareLines order.
func (m *Memory) RunLines(_ context.Context, cluster string, runs []meter.RunKey, fn func(meter.Line) error) error {
	want := map[meter.RunKey]bool{}
	for _, k := range runs {
		want[k] = true
	}
	m.mu.Lock()
	var out []meter.Line
	for _, l := range m.cluster(cluster).lines {
		if want[l.Run] {
			out = append(out, l)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, CompareLines)
	for _, l := range out {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}
