package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
)

// registerAccounting adds the metering and chargeback commands (ingest,
// show usage, close, export chargeback, rate card commands). The daemon's
// ingest and period close are wired in jobs.go.
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
	root.AddCommand(ingestCmd(a), closeCmd(a), chargeCmd(a))
	need("export", "Export entities (chargeback)").AddCommand(exportChargebackCmd(a))
	need("show", "Display entities").AddCommand(showUsageCmd(a), showRatesCmd(a), showRateCardCmd(a), showIngestCmd(a))
	need("add", "Add entities").AddCommand(addRateCmd(a), addGPUTypeCmd(a))
	need("delete", "Delete entities").AddCommand(deleteRateCmd(a))
	need("load", "Load entities from a file").AddCommand(loadRateCardCmd(a))
}

// The accounting's wiring: stores and use cases on the App's connections.

// ledgerStore is the MariaDB ledger on gpubridge's database.
func (a *App) ledgerStore(ctx context.Context) (*ledger.DB, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return ledger.NewDB(db, a.Logger()), nil
}

// cardStore is the rate card store on gpubridge's database.
func (a *App) cardStore(ctx context.Context) (*ratecard.DB, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return ratecard.NewDB(db), nil
}

// tenantLabels labels accounts with the tenant store's tenants.
func (a *App) tenantLabels(ctx context.Context) (ledger.Labeler, error) {
	db, err := a.DB(ctx)
	if err != nil {
		return nil, err
	}
	return billing.TenantLabels(ctx, tenantstore.New(db))
}

// books is the period view on gpubridge's database.
func (a *App) books(ctx context.Context) (billing.Books, error) {
	c, err := a.Config()
	if err != nil {
		return billing.Books{}, err
	}
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return billing.Books{}, err
	}
	cards, err := a.cardStore(ctx)
	if err != nil {
		return billing.Books{}, err
	}
	return billing.Books{Cluster: c.Cluster, Ledger: st, Cards: cards, Labels: a.tenantLabels}, nil
}

// closer closes periods on gpubridge's database; callers that re-read set
// its Reader (acctIngester).
func (a *App) closer(ctx context.Context) (billing.Closer, error) {
	c, err := a.Config()
	if err != nil {
		return billing.Closer{}, err
	}
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return billing.Closer{}, err
	}
	cards, err := a.cardStore(ctx)
	if err != nil {
		return billing.Closer{}, err
	}
	return billing.Closer{Cluster: c.Cluster, Ledger: st, Cards: cards, Labels: a.tenantLabels}, nil
}

// acctIngester builds an ingester over the named source (see
// billing.IngestSetup.Source).
func (a *App) acctIngester(ctx context.Context, source string) (*ingest.Ingester, error) {
	c, err := a.Config()
	if err != nil {
		return nil, err
	}
	st, err := a.ledgerStore(ctx)
	if err != nil {
		return nil, err
	}
	in, err := billing.IngestSetup{
		Config: c, Ledger: st, Log: a.Logger(),
		SlurmDB: a.SlurmDB,
		Slurm:   func(ctx context.Context) (ingest.DBJobLister, error) { return a.Slurm(ctx) },
	}.Ingester(ctx, source)
	if errors.Is(err, billing.ErrUnknownSource) {
		return nil, usageError{err}
	}
	return in, err
}

// quietIngester is acctIngester over the default source, logging only
// with -v (the commands print their own summary line).
func (a *App) quietIngester(ctx context.Context) (*ingest.Ingester, error) {
	in, err := a.acctIngester(ctx, "")
	if err == nil && !a.Verbose {
		in.Log = nil
	}
	return in, err
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

// accountArg is tenant= or its alias account=.
func accountArg(where map[string]string) string {
	if v := where["account"]; v != "" {
		return v
	}
	return where["tenant"]
}

// cardError marks the admin's mistakes about the rate card as usage
// errors (exit 2).
func cardError(err error) error {
	if ratecard.IsInput(err) {
		return usageError{err}
	}
	return err
}
