package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/wire"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The accounting's wiring: stores and use cases on the Env's connections.

// Ledger is the MariaDB ledger on gpubridge's database.
func (e *Env) Ledger(ctx context.Context) (*ledger.DB, error) {
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	return ledger.NewDB(db, e.Logger()), nil
}

// RateCards is the rate card store on gpubridge's database.
func (e *Env) RateCards(ctx context.Context) (*ratecard.DB, error) {
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	return ratecard.NewDB(db), nil
}

// TenantLabels labels accounts with the tenant store's tenants.
func (e *Env) TenantLabels(ctx context.Context) (ledger.Labeler, error) {
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	return billing.TenantLabels(ctx, tenantProfiles{tenantstore.New(db)})
}

// tenantProfiles is the tenant store with the tenants' profiles
// (billing.TenantProfiles) for the chargeback exports.
type tenantProfiles struct{ *tenantstore.Store }

// Profiles returns each tenant's description, organization and cost
// centre by name.
func (s tenantProfiles) Profiles(ctx context.Context) (map[string]export.Profile, error) {
	ts, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]export.Profile, len(ts))
	for _, t := range ts {
		out[t.Name] = export.Profile{Description: t.Description, Organization: t.Organization, CostCenter: t.CostCenter}
	}
	return out, nil
}

// Books is the period view on gpubridge's database.
func (e *Env) Books(ctx context.Context) (billing.Books, error) {
	k, err := e.on(ctx, false)
	if err != nil {
		return billing.Books{}, err
	}
	return billing.Books{Cluster: k.Cluster, Ledger: ledger.NewDB(k.DB, e.Logger()), Cards: ratecard.NewDB(k.DB), Labels: e.TenantLabels}, nil
}

// Closer closes periods on gpubridge's database; callers that re-read set
// its Reader (Ingester).
func (e *Env) Closer(ctx context.Context) (billing.Closer, error) {
	k, err := e.on(ctx, false)
	if err != nil {
		return billing.Closer{}, err
	}
	return billing.Closer{Cluster: k.Cluster, Ledger: ledger.NewDB(k.DB, e.Logger()), Cards: ratecard.NewDB(k.DB), Labels: e.TenantLabels}, nil
}

// Ingester builds an ingester over the named source (see
// wire.IngestSource); an unknown source is an input error.
func (e *Env) Ingester(ctx context.Context, source string) (*ingest.Ingester, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	st, err := e.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	h, err := e.Cluster()
	if err != nil {
		return nil, err
	}
	in, err := wire.Ingester(ctx, c, h, st, e.Logger(), source)
	if errors.Is(err, wire.ErrUnknownSource) {
		return nil, Input(err)
	}
	return in, err
}

// QuietIngester is Ingester over the default source, logging only when
// Verbose (the commands print their own summary line).
func (e *Env) QuietIngester(ctx context.Context) (*ingest.Ingester, error) {
	in, err := e.Ingester(ctx, "")
	if err == nil && !e.Verbose {
		in.Log = nil
	}
	return in, err
}

// UsageRequest is show usage: the summary of each of Periods, of one
// account when Account names one.
type UsageRequest struct {
	Periods []meter.Period
	Account string
}

// ParseUsage reads show usage's keys: period=, or start= and end=
// (ParsePeriods), and tenant= (its alias account=).
func ParseUsage(where map[string]string) (UsageRequest, error) {
	periods, err := ParsePeriods(where)
	if err != nil {
		return UsageRequest{}, err
	}
	return UsageRequest{Periods: periods, Account: ParseAccount(where)}, nil
}

// Usage is the summary of each period r names, of r.Account's rows when
// it names one (every account's otherwise).
func (e *Env) Usage(ctx context.Context, r UsageRequest) ([]export.Summary, error) {
	books, err := e.Books(ctx)
	if err != nil {
		return nil, err
	}
	return UsageCases{Books: books}.Summaries(ctx, r)
}

// UsagePrintout is what show usage prints of sums for the output options
// o (export.UsageViews): a note per period without use, the usage table
// and, when there is one to show, the booking utilization table after its
// heading.
func UsagePrintout(sums []export.Summary, o table.Options) Printout {
	notes, usage, heading, util := export.UsageViews(sums, o)
	p := Printout{}.Notes(notes...).Table(usage)
	if heading == "" {
		return p
	}
	return p.Text(heading).Table(util)
}

// ParseExportChargeback reads export chargeback's keys (ParseExport),
// its file from -f (flag) or file= (ParseFileArg): two files are refused
// before period= is read.
func ParseExportChargeback(where map[string]string, asJSON bool, flag string) (billing.ExportRequest, error) {
	path, err := ParseFileArg(flag, where)
	if err != nil {
		return billing.ExportRequest{}, err
	}
	return ParseExport(where, asJSON, path)
}

// ExportChargeback writes the chargeback export r asks for to w, or to
// r.Path when it names a file, naming the configuration's chargeback
// parties in a FOCUS export.
func (e *Env) ExportChargeback(ctx context.Context, r billing.ExportRequest, w io.Writer) error {
	c, err := e.Config()
	if err != nil {
		return err
	}
	books, err := e.Books(ctx)
	if err != nil {
		return err
	}
	cb := c.Chargeback
	books.Parties = export.Parties{Provider: cb.ProviderName, Publisher: cb.PublisherName, InvoiceIssuer: cb.InvoiceIssuerName}
	return books.Export(ctx, r, w)
}

// ParseFileArg is a command's -f FILE (flag) or its alias file=PATH; both,
// naming different files, are refused.
func ParseFileArg(flag string, where map[string]string) (string, error) {
	v, ok := where["file"]
	switch {
	case !ok:
		return flag, nil
	case flag != "" && flag != v:
		return "", Inputf("-f %s and file=%s name two files; give one", flag, v)
	}
	return v, nil
}

// ParsePeriod reads period=YYYY-MM; empty means the current month (UTC).
func ParsePeriod(v string) (meter.Period, error) {
	if v == "" {
		return meter.PeriodOf(time.Now()), nil
	}
	p, err := meter.ParsePeriod(v)
	if err != nil {
		return 0, Inputf("%v", err)
	}
	return p, nil
}

// ParseTime reads a UTC time: 2026-11-01, 2026-11-01T10:00:00, an RFC 3339
// time, or a period (its first second).
func ParseTime(key, v string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, "2006-01-02T15:04:05", "2006-01-02T15:04", time.RFC3339, "2006-01"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, Inputf("%s=%q: want a UTC time such as 2026-11-01 or 2026-11-01T10:00:00", key, v)
}

// ParsePeriods reads period=, or start= and end= (months; end exclusive,
// default through this month).
func ParsePeriods(w map[string]string) ([]meter.Period, error) {
	_, hasStart := w["start"]
	_, hasEnd := w["end"]
	if !hasStart && !hasEnd {
		p, err := ParsePeriod(w["period"])
		return []meter.Period{p}, err
	}
	if _, ok := w["period"]; ok {
		return nil, Inputf("give period= or start=/end=, not both")
	}
	if !hasStart {
		return nil, Inputf("end=%s needs start= (e.g. start=2026-09 end=%s)", w["end"], w["end"])
	}
	from, err := parseMonth("start", w["start"])
	if err != nil {
		return nil, err
	}
	to := meter.PeriodOf(time.Now()).Next()
	if hasEnd {
		if to, err = parseMonth("end", w["end"]); err != nil {
			return nil, err
		}
	}
	if to <= from {
		return nil, Inputf("end=%s is not after start=%s (end is exclusive: start=%s end=%s shows %s)", to, from, from, from.Next(), from)
	}
	if to-from > 120 {
		return nil, Inputf("start=%s end=%s spans %d periods; at most 120", from, to, to-from)
	}
	var ps []meter.Period
	for p := from; p < to; p++ {
		ps = append(ps, p)
	}
	return ps, nil
}

// parseMonth reads a month (2026-09) or its first day (2026-09-01): usage
// is kept per calendar month.
func parseMonth(key, v string) (meter.Period, error) {
	if p, err := meter.ParsePeriod(v); err == nil {
		return p, nil
	}
	t, err := ParseTime(key, v)
	if err != nil {
		return 0, err
	}
	p := meter.PeriodOf(t)
	if !t.Equal(p.Start()) {
		return 0, Inputf("%s=%s: usage is kept per calendar month (UTC); give a month such as %s=%s or %s=%s", key, v, key, p, key, p.Next())
	}
	return p, nil
}

// ParseAccount is tenant= or its alias account=.
func ParseAccount(where map[string]string) string {
	if v := where["account"]; v != "" {
		return v
	}
	return where["tenant"]
}

// ParseExport reads export chargeback's keys into a request: period=
// (required), format= (csv, json or focus; asJSON is --json, which is
// format=json), detail=jobs, tenant= and metadata=; path is the file
// (-f FILE or file=), empty for stdout.
func ParseExport(where map[string]string, asJSON bool, path string) (billing.ExportRequest, error) {
	pv, ok := where["period"]
	if !ok {
		return billing.ExportRequest{}, Inputf("export chargeback needs period=YYYY-MM")
	}
	p, err := ParsePeriod(pv)
	if err != nil {
		return billing.ExportRequest{}, err
	}
	f := export.CSV
	if asJSON {
		f = export.JSON
	}
	if v, ok := where["format"]; ok {
		if f, err = export.ParseFormat(v); err != nil {
			return billing.ExportRequest{}, Inputf("%v", err)
		}
		if asJSON && f != export.JSON {
			return billing.ExportRequest{}, Inputf("--json and format=%s: --json is format=json; give one of them", v)
		}
	}
	opts := export.Options{Format: f}
	switch where["detail"] {
	case "", "none", "summary":
	case "jobs":
		opts.Detail = true
	default:
		return billing.ExportRequest{}, Inputf("detail=%s: want jobs", where["detail"])
	}
	switch where["untenanted"] {
	case "", "yes", "include":
	case "no", "exclude":
		opts.NoUntenanted = true
	default:
		return billing.ExportRequest{}, Inputf("untenanted=%s: want yes (include accounts without a tenant, flagged has_tenant=false) or no (leave them out)", where["untenanted"])
	}
	if where["metadata"] != "" && f != export.FOCUS {
		return billing.ExportRequest{}, Inputf("metadata=%s: %v", where["metadata"], billing.ErrMetadataFormat)
	}
	return billing.ExportRequest{Period: p, Account: ParseAccount(where), Options: opts, Path: path, MetadataPath: where["metadata"]}, nil
}

// ParseClose reads close's keys: period=YYYY-MM (required) and
// ingest=yes|no (default yes: re-read the period first).
func ParseClose(where map[string]string) (billing.CloseOptions, error) {
	pv, ok := where["period"]
	if !ok {
		return billing.CloseOptions{}, Inputf("close needs period=YYYY-MM")
	}
	p, err := ParsePeriod(pv)
	if err != nil {
		return billing.CloseOptions{}, err
	}
	o := billing.CloseOptions{Period: p, Actor: Actor()}
	switch where["ingest"] {
	case "", "yes":
		o.Reread = true
	case "no":
	default:
		return o, Inputf("ingest=%s: want yes or no", where["ingest"])
	}
	return o, nil
}

// ClosedPeriod is what close recorded of its period.
type ClosedPeriod struct {
	Period meter.Period
	Record ledger.PeriodRecord
}

// Text is what close says once the period is closed.
func (c ClosedPeriod) Text() string { return billing.ClosedLine(c.Period, c.Record) }

// ClosePeriod closes the period o names (ParseClose; gpubridge close),
// asking o.Confirm and saying on reread (when given) what the re-read
// wrote (billing.RereadLine): the booking charges are brought up to date
// first (BookingCharger), and with o.Reread the period and everything
// since are re-read from the default source. A period that has not ended
// is an input error.
func (e *Env) ClosePeriod(ctx context.Context, o billing.CloseOptions, reread io.Writer) (ClosedPeriod, error) {
	if reread != nil {
		o.OnReread = func(res ingest.Result) { fmt.Fprint(reread, billing.RereadLine(res)) }
	}
	rec, err := e.closePeriod(ctx, o)
	return ClosedPeriod{Period: o.Period, Record: rec}, err
}

func (e *Env) closePeriod(ctx context.Context, o billing.CloseOptions) (ledger.PeriodRecord, error) {
	cl, err := e.Closer(ctx)
	if err != nil {
		return ledger.PeriodRecord{}, err
	}
	if cl.Charger, err = e.BookingCharger(ctx); err != nil {
		return ledger.PeriodRecord{}, err
	}
	if o.Reread {
		if cl.Reader, err = e.QuietIngester(ctx); err != nil {
			return ledger.PeriodRecord{}, err
		}
	}
	rec, err := cl.Close(ctx, o)
	if errors.Is(err, ledger.ErrNotEnded) {
		return rec, Input(err)
	}
	return rec, err
}
