package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/jobs"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/config"
	"github.com/gpubridge/gpubridge/internal/daemon"
	"github.com/gpubridge/gpubridge/internal/kv"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/table"
)

// registerAccounting adds the metering and chargeback commands (ingest,
// show usage, close, export chargeback, rate card commands) and the
// daemon's periodic ingest and period close.
func registerAccounting(a *App, root *cobra.Command) {
	verbs := map[string]*cobra.Command{}
	for _, c := range root.Commands() {
		verbs[c.Name()] = c
	}
	need := func(name, short string) *cobra.Command {
		if v, ok := verbs[name]; ok {
			return v
		}
		v := verb(name, short)
		root.AddCommand(v)
		verbs[name] = v
		return v
	}
	root.AddCommand(ingestCmd(a), closeCmd(a))
	need("export", "Export entities (chargeback)").AddCommand(exportChargebackCmd(a))
	need("show", "Display entities").AddCommand(showUsageCmd(a), showRatesCmd(a), showRateCardCmd(a))
	need("add", "Add entities").AddCommand(addRateCmd(a), addGPUTypeCmd(a))
	need("delete", "Delete entities").AddCommand(deleteRateCmd(a))
	need("load", "Load entities from a file").AddCommand(loadRateCardCmd(a))

	a.addJob(func(ctx context.Context, a *App, c config.Config) (daemon.Scheduled, error) {
		in, err := a.acctIngester(ctx, "")
		if err != nil {
			return daemon.Scheduled{}, err
		}
		return daemon.Scheduled{Spec: c.Schedules.Ingest, Job: &jobs.Ingest{Ingester: in}}, nil
	})
	a.addJob(func(ctx context.Context, a *App, c config.Config) (daemon.Scheduled, error) {
		in, err := a.acctIngester(ctx, "")
		if err != nil {
			return daemon.Scheduled{}, err
		}
		st, err := a.ledgerStore(ctx)
		if err != nil {
			return daemon.Scheduled{}, err
		}
		return daemon.Scheduled{Spec: c.Schedules.ClosePeriod, Job: &jobs.ClosePeriod{
			Cluster: c.Cluster, Ingester: in, Store: st, Actor: "gpubridge serve",
			Tenants: func(ctx context.Context) (ledger.Labeler, error) { return a.tenantLabels(ctx) },
			Log:     a.Logger().With("component", "close-period"),
		}}, nil
	})
}

// ledgerStore is the MariaDB ledger on gpubridge's database.
func (a *App) ledgerStore(ctx context.Context) (*ledger.DB, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return ledger.NewDB(db, a.Logger()), nil
}

// acctSlurmDB opens slurmdbd's database with the read-only DSN.
func (a *App) acctSlurmDB(ctx context.Context) (*sqlx.DB, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	if err := c.RequireSlurmDB(); err != nil {
		return nil, err
	}
	return sqldb.Open(ctx, c.SlurmDB.DSN)
}

// acctIngester builds an ingester over the named source: "slurmdb" (the
// database; the default when a DSN is configured) or "slurmrestd".
func (a *App) acctIngester(ctx context.Context, source string) (*ingest.Ingester, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	if source == "" {
		source = "slurmdb"
		if c.SlurmDB.DSN == "" {
			source = "slurmrestd"
		}
	}
	var src ingest.Source
	switch source {
	case "slurmdb":
		db, err := a.acctSlurmDB(ctx)
		if err != nil {
			return nil, err
		}
		if src, err = ingest.NewSlurmDB(db, c.Cluster); err != nil {
			return nil, err
		}
	case "slurmrestd", "rest":
		cl, err := a.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		r := ingest.NewREST(cl, c.Cluster)
		r.Log = a.Logger()
		src = r
	default:
		return nil, usagef("source=%s: want slurmdb or slurmrestd", source)
	}
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return nil, err
	}
	return &ingest.Ingester{
		Cluster: c.Cluster, Source: src, Ledger: st,
		Rules: meter.TierRules{OnDemandPartition: c.Tenants.OnDemandPartition, OnDemandQOS: c.Tenants.OnDemandQOS},
		Log:   a.Logger(),
	}, nil
}

// tenantLabels maps accounts to tenants from the tenant store: a tenant's
// Slurm account has the tenant's name (compared case-insensitively, as the
// store and Slurm do).
func (a *App) tenantLabels(ctx context.Context) (ledger.Labeler, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	names, err := tenantstore.New(db).Names(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenant names: %w", err)
	}
	l := ledger.Labels{}
	for _, n := range names {
		l[strings.ToLower(n)] = n
	}
	return lowerLabels{l}, nil
}

// lowerLabels looks accounts up case-insensitively.
type lowerLabels struct{ ledger.Labels }

func (l lowerLabels) Tenant(account string) (string, bool) {
	return l.Labels.Tenant(strings.ToLower(account))
}

// periodArg reads period=YYYY-MM; empty means the current month (UTC).
func periodArg(v string) (meter.Period, error) {
	if v == "" {
		return meter.PeriodOf(time.Now()), nil
	}
	p, err := meter.ParsePeriod(v)
	if err != nil {
		return 0, usagef("%v", err)
	}
	return p, nil
}

// timeArg reads a UTC time: 2026-11-01, 2026-11-01T10:00:00, an RFC 3339
// time, or a period (its first second).
func timeArg(key, v string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, "2006-01-02T15:04:05", "2006-01-02T15:04", time.RFC3339, "2006-01"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, usagef("%s=%q: want a UTC time such as 2026-11-01 or 2026-11-01T10:00:00", key, v)
}

// periodView is what reports need of one period: its meta (card and labels,
// from the close snapshot when closed) and its lines (with accruals when open).
func (a *App) periodView(ctx context.Context, p meter.Period, account string) (export.Meta, export.Lines, error) {
	c, err := a.Config()
	if err != nil {
		return export.Meta{}, nil, err
	}
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return export.Meta{}, nil, err
	}
	m := export.Meta{Cluster: c.Cluster, Period: p}
	rec, closed, err := st.Period(ctx, c.Cluster, p)
	if err != nil {
		return m, nil, err
	}
	if closed {
		m.Closed, m.ClosedAt, m.Card, m.Tenants = true, rec.ClosedAt, rec.Snapshot.Card, ledger.Labels(rec.Snapshot.Tenants)
	} else {
		card, ok, err := st.RateCard(ctx)
		if err != nil {
			return m, nil, err
		}
		if !ok {
			card = pricing.Card{Version: pricing.CurrentVersion}
		}
		m.Card = card
		if m.Tenants, err = a.tenantLabels(ctx); err != nil {
			return m, nil, err
		}
	}
	lines := func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
		q := ledger.LineQuery{Booked: p, Account: account, Ordered: ordered}
		if err := st.Lines(ctx, c.Cluster, q, fn); err != nil {
			return err
		}
		if closed {
			return nil
		}
		return st.Accruals(ctx, c.Cluster, q, fn)
	}
	return m, lines, nil
}

func showUsageCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "usage [tenant=NAME] [period=YYYY-MM]",
		Short: "GPU use and cost per tenant, GPU type and tier (default: this month to date)",
		Long: `Shows the ledger of one billing period (a calendar month, UTC) per tenant,
GPU type and tier: GPU-seconds, GPU-hours, rate and amount. For the current
(open) period it includes the accrued use of jobs still running, as of the
last ingest (run "gpubridge ingest" first for the latest figures).
Adjustments are use of an earlier, already closed period that arrived late.
A GPU type without a rate shows no amount; "gpubridge close" refuses such a
period. An account that is no tenant's is shown as "(no tenant)".`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ka, err := kv.Parse(args, kv.Spec{Keys: []string{"tenant", "account", "period"}})
			if err != nil {
				return usagef("%v", err)
			}
			if len(ka.Names) > 0 {
				return usagef("unexpected %q: use tenant=NAME", ka.Names[0])
			}
			p, err := periodArg(ka.Where["period"])
			if err != nil {
				return err
			}
			account := ka.Where["tenant"]
			if v := ka.Where["account"]; v != "" {
				account = v
			}
			ctx := cmd.Context()
			m, lines, err := a.periodView(ctx, p, account)
			if err != nil {
				return err
			}
			s, err := export.Summarize(ctx, m, lines, true)
			if err != nil {
				return err
			}
			return a.printUsage(s)
		},
	}
}

func (a *App) printUsage(s export.Summary) error {
	t := table.Table{
		Header: []string{"Period", "Status", "Tenant", "Account", "GPUType", "Tier", "Kind", "UsagePeriod", "GPUHours", "GPUSeconds", "Rate", "Amount", "Currency"},
		Keys:   []string{"period", "status", "tenant", "account", "gpuType", "tier", "kind", "usagePeriod", "gpuHours", "gpuSeconds", "rate", "amount", "currency"},
	}
	status := "open"
	if s.Meta.Closed {
		status = "closed"
	}
	cur := s.Meta.Card.Currency
	for _, r := range s.Rows {
		rate, amount := r.Rate.String(), r.Amount.String()
		if r.Rate < 0 {
			rate, amount = "no rate", "-"
		}
		t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, r.Tenant, r.Account, r.Type, string(r.Tier), string(r.Kind),
			r.Usage.String(), export.GPUHours(r.GPUSeconds), fmt.Sprint(r.GPUSeconds), rate, amount, cur})
	}
	if !a.output.JSON && !a.output.Parsable {
		// Totals; a total that leaves out use without a rate says so.
		unpriced := map[string]bool{}
		for _, r := range s.Rows {
			if r.Rate < 0 {
				unpriced[r.Account], unpriced["*"] = true, true
			}
		}
		amount := func(account string, v money.Amount) string {
			if unpriced[account] {
				return v.String() + " + unpriced"
			}
			return v.String()
		}
		for _, tt := range s.Tenants() {
			t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, tt.Tenant, tt.Account, "*", "*", "total", "",
				export.GPUHours(tt.GPUSeconds), fmt.Sprint(tt.GPUSeconds), "", amount(tt.Account, tt.Amount), cur})
		}
		t.Rows = append(t.Rows, []string{s.Meta.Period.String(), status, "*", "*", "*", "*", "total", "",
			export.GPUHours(s.GPUSeconds), fmt.Sprint(s.GPUSeconds), "", amount("*", s.Amount), cur})
	}
	if len(s.Rows) == 0 && !a.output.JSON {
		fmt.Fprintf(a.err, "no GPU use booked in %s yet\n", s.Meta.Period)
	}
	return a.Print(t)
}
