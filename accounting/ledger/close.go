package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/interval"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Labeler names the tenant of a Slurm account (a tenant's account has the
// tenant's name); ok is false for an account without a tenant.
type Labeler interface {
	Tenant(account string) (tenant string, ok bool)
}

// Labels is a Labeler backed by a map (account → tenant).
type Labels map[string]string

// Tenant implements Labeler.
func (l Labels) Tenant(account string) (string, bool) {
	t, ok := l[account]
	return t, ok
}

// CloseRequest asks to close one period.
type CloseRequest struct {
	Cluster string
	Period  meter.Period
	Now     time.Time
	Actor   string
	// Card prices the period; Tenants labels its accounts. Both are stored
	// with the closed period.
	Card    pricing.Card
	Tenants Labeler
	// LockWait is how long to wait for a running ingest (default 1 minute).
	LockWait time.Duration
}

// Close closes a period: it must have ended, an ingest must have read past
// its end (finished runs and running runs), and every line booked in it
// (usage lines and booking charges) must have a rate. The record's
// GPUSeconds are the used GPU-seconds (the usage lines); its Lines and
// Amount count the booking charges too. It holds the ledger lock, so no ingest writes while it checks.
func Close(ctx context.Context, s CloseStore, req CloseRequest) (PeriodRecord, error) {
	p := req.Period
	if req.LockWait == 0 {
		req.LockWait = time.Minute
	}
	release, err := s.Lock(ctx, req.Cluster, req.LockWait)
	if err != nil {
		return PeriodRecord{}, fmt.Errorf("close %s: %w", p, err)
	}
	defer release()
	if rec, err := closable(ctx, s, req); err != nil {
		return rec, err
	}
	rec := PeriodRecord{Cluster: req.Cluster, Period: p, ClosedAt: req.Now.UTC().Truncate(time.Microsecond), ClosedBy: req.Actor,
		Amount: money.Zero(req.Card.Unit()), Currency: req.Card.Currency, Snapshot: Snapshot{Card: req.Card, Tenants: map[string]string{}}}
	accounts := map[string]bool{}
	if err := priceBooked(ctx, s, req, &rec, accounts); err != nil {
		return PeriodRecord{}, err
	}
	if err := addCredits(ctx, s, req, &rec, accounts); err != nil {
		return PeriodRecord{}, fmt.Errorf("close %s: credits: %w", p, err)
	}
	snapshotTenants(req.Tenants, &rec, accounts)
	if err := s.MarkClosed(ctx, rec); err != nil {
		return PeriodRecord{}, err
	}
	return rec, nil
}

// closable checks that the period may be closed: not closed already (the
// error then comes with its record), ended, and ingested past its end.
func closable(ctx context.Context, s CloseStore, req CloseRequest) (PeriodRecord, error) {
	p := req.Period
	if rec, ok, err := s.Period(ctx, req.Cluster, p); err != nil {
		return PeriodRecord{}, err
	} else if ok {
		return rec, fmt.Errorf("close %s: %w at %s by %s", p, ErrAlreadyClosed, rec.ClosedAt.Format(time.RFC3339), rec.ClosedBy)
	}
	if end := p.End(); req.Now.Before(end) {
		return PeriodRecord{}, fmt.Errorf("close %s: %w: it ends %s", p, ErrNotEnded, end.Format(time.RFC3339))
	}
	st, err := s.State(ctx, req.Cluster)
	if err != nil {
		return PeriodRecord{}, err
	}
	if !rangeSet(st.Coverage).Covers(interval.Interval{Start: p.StartUnix(), End: p.EndUnix()}) || st.AccrualsAsOf < p.EndUnix() {
		return PeriodRecord{}, fmt.Errorf("close %s: %w: the finished runs ingested so far cover %s and running runs were read at %s; the whole period must be covered and the running runs read after its end (run `gpubridge ingest from=%s` first)",
			p, ErrNotIngested, fmtCoverage(st.Coverage), fmtUnix(st.AccrualsAsOf), p.Start().Format(time.DateOnly))
	}
	return PeriodRecord{}, nil
}

// priceBooked prices every line booked in the period (usage lines, then
// booking charges) at the card into rec, and notes their accounts. A line
// without a rate fails the close, after all of them are counted.
func priceBooked(ctx context.Context, s CloseStore, req CloseRequest, rec *PeriodRecord, accounts map[string]bool) error {
	p := req.Period
	var missing pricing.MissingTracker
	price := func(l meter.Line) error {
		rec.Lines++
		if !l.Charge {
			rec.GPUSeconds += l.GPUSeconds // used GPU-seconds; booked ones are in the charges' lines
		}
		accounts[l.Account] = true
		_, a, err := req.Card.PriceLine(l)
		if errors.Is(err, pricing.ErrNoRate) {
			missing.Add(l.Type, l.Tier, l.GPUSeconds)
			return nil
		}
		if err != nil {
			return err
		}
		rec.Amount, err = rec.Amount.Add(a)
		return err
	}
	err := s.Lines(ctx, req.Cluster, LineQuery{Booked: p}, price)
	if err == nil {
		err = s.Charges(ctx, req.Cluster, LineQuery{Booked: p}, price)
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", p, err)
	}
	if err := missing.Err(); err != nil {
		return fmt.Errorf("close %s: %w", p, err)
	}
	return nil
}

// addCredits adds the credit lines booked in the period to rec's amount
// (they are in the card's currency, or the close fails), and notes their
// accounts.
func addCredits(ctx context.Context, s CloseStore, req CloseRequest, rec *PeriodRecord, accounts map[string]bool) error {
	return s.Credits(ctx, req.Cluster, CreditQuery{Booked: req.Period}, func(c Credit) error {
		accounts[c.Account] = true
		if c.Amount.Currency() != req.Card.Unit() {
			return fmt.Errorf("credit %q is in %s, the rate card in %s: change the card back or re-price the credit", c.Key, c.Amount.Currency(), req.Card.Unit())
		}
		var err error
		rec.Amount, err = rec.Amount.Add(c.Amount)
		return err
	})
}

// snapshotTenants keeps in rec's snapshot the tenant (and profile, when
// the labeler has one) of each account the period's lines were booked to.
func snapshotTenants(tenants Labeler, rec *PeriodRecord, accounts map[string]bool) {
	if tenants == nil {
		return
	}
	for _, a := range slices.Sorted(maps.Keys(accounts)) {
		t, ok := tenants.Tenant(a)
		if !ok {
			continue
		}
		rec.Snapshot.Tenants[a] = t
		if pf, ok := tenants.(Profiler); ok && pf.TenantProfile(a) != (TenantProfile{}) {
			if rec.Snapshot.Profiles == nil {
				rec.Snapshot.Profiles = map[string]TenantProfile{}
			}
			rec.Snapshot.Profiles[a] = pf.TenantProfile(a)
		}
	}
}

func fmtUnix(t int64) string {
	if t == 0 {
		return "never"
	}
	return time.Unix(t, 0).UTC().Format(time.RFC3339)
}

func fmtCoverage(c [][2]int64) string {
	if len(c) == 0 {
		return "nothing"
	}
	var parts []string
	for _, r := range c {
		parts = append(parts, fmtUnix(r[0])+".."+fmtUnix(r[1]))
	}
	return strings.Join(parts, ", ")
}
