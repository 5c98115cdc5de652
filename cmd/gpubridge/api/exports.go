package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/meter"
)

// The chargeback download: a tenant's chargeback of a closed month, in
// CSV, JSON or FOCUS, written by the use case `gpubridge export
// chargeback period=P format=F tenant=T` runs (Options.Exports), so that
// the bytes are the admin export's filtered to the tenant.

// Exports writes chargeback exports (app: ExportChargeback).
type Exports interface {
	// Chargeback writes the chargeback of period in format (csv, json or
	// focus), of tenant's rows only, to w: what export chargeback
	// period=P format=F tenant=T writes.
	Chargeback(ctx context.Context, tenant string, period meter.Period, format export.Format, w io.Writer) error
	// Daily is the tenant's use (not its booking charges) in period per
	// UTC day and GPU type, from the same ledger lines.
	Daily(ctx context.Context, tenant string, period meter.Period) ([]DayUse, error)
}

// maxExportBytes bounds an export answered at once (a month of one
// tenant's summary is a few KiB).
const maxExportBytes = 32 << 20

// exportContentType is the media type of each format (FOCUS is CSV).
var exportContentType = map[export.Format]string{
	export.CSV:   "text/csv; charset=utf-8",
	export.FOCUS: "text/csv; charset=utf-8",
	export.JSON:  "application/json",
}

// chargebackFile checks the request (period= a closed month, format=)
// and writes the tenant's export into a buffer: nothing is sent before it
// is complete.
func (s *Server) chargebackFile(ctx context.Context, tenant, periodArg, formatArg string) ([]byte, export.Format, meter.Period, error) {
	if s.o.Exports == nil || s.o.Usage == nil {
		return nil, "", 0, &httpError{http.StatusServiceUnavailable, errorBody{Error: "the chargeback export is not available here"}}
	}
	if periodArg == "" {
		return nil, "", 0, InputError(errors.New("period: missing; give a closed month, period=YYYY-MM"))
	}
	p, err := meter.ParsePeriod(periodArg)
	if err != nil {
		return nil, "", 0, InputError(fmt.Errorf("period=%s: %w", periodArg, err))
	}
	if formatArg == "" {
		formatArg = string(export.CSV)
	}
	f, err := export.ParseFormat(formatArg)
	if err != nil {
		return nil, "", 0, InputError(err)
	}
	sum, err := s.o.Usage.Summary(ctx, p, tenant)
	if err != nil {
		return nil, "", 0, err
	}
	if !sum.Meta.Closed {
		return nil, "", 0, &httpError{http.StatusConflict, errorBody{Error: fmt.Sprintf("period %s is not closed yet: its chargeback is final (and downloadable) once the site closes it", p)}}
	}
	var b bytes.Buffer
	if err := s.o.Exports.Chargeback(ctx, tenant, p, f, &b); err != nil {
		return nil, "", 0, err
	}
	if b.Len() > maxExportBytes {
		return nil, "", 0, tooBig(b.Len())
	}
	return b.Bytes(), f, p, nil
}

// writeExport sends an export's bytes as a download named after the
// tenant, the period and the format.
func writeExport(w http.ResponseWriter, tenant string, p meter.Period, f export.Format, b []byte) {
	h := w.Header()
	h.Set("Content-Type", exportContentType[f])
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	ext := "csv"
	if f == export.JSON {
		ext = "json"
	}
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("chargeback-%s-%s-%s.%s", tenant, p, f, ext)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// chargeback answers GET /tenants/{tenant}/chargeback?period=&format=.
func (s *Server) chargeback(q *req) (int, any, error) {
	qv := q.r.URL.Query()
	b, f, p, err := s.chargebackFile(q.r.Context(), q.tenant, qv.Get("period"), qv.Get("format"))
	if err != nil {
		return 0, nil, err
	}
	writeExport(q.w, q.tenant, p, f, b)
	return http.StatusOK, written{}, nil
}

// written tells the route's caller that the handler answered itself.
type written struct{}

// closedMonths are the closed periods among the last n months before
// now's, newest first (the usage page's downloads).
func (s *Server) closedMonths(ctx context.Context, tenant string, now time.Time, n int) []meter.Period {
	var out []meter.Period
	if s.o.Usage == nil {
		return nil
	}
	p := meter.PeriodOf(now)
	for range n {
		p--
		sum, err := s.o.Usage.Summary(ctx, p, tenant)
		if err == nil && sum.Meta.Closed {
			out = append(out, p)
		}
	}
	return out
}
