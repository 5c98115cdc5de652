package export

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/atomicfile"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Format is an export format.
type Format string

const (
	CSV   Format = "csv"
	JSON  Format = "json"
	FOCUS Format = "focus"
)

// ParseFormat accepts csv, json or focus (FOCUS 1.2).
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case CSV, JSON, FOCUS:
		return Format(s), nil
	case "focus-1.2":
		return FOCUS, nil
	case "focus-1.0":
		return "", fmt.Errorf("format %q: format=focus is FOCUS %s (the FOCUS 1.0 shape is no longer written: it broke the ListCost rule)", s, FocusVersion)
	}
	return "", fmt.Errorf("format %q: want csv, json or focus", s)
}

// Options select what Write writes.
type Options struct {
	Format Format
	// Detail adds job line items (one per ledger line) to the summary:
	// CSV and FOCUS then hold line items instead of summary rows.
	Detail bool
	// NoUntenanted leaves out the accounts without a tenant (shown as
	// NoTenant): their lines, credits and totals.
	NoUntenanted bool
}

// Write prices the period and writes it to w. The lines are read once for
// the summary (which finds missing rates before anything is written) and,
// with Detail, once more in export order, streamed: memory does not grow
// with the number of lines.
func Write(ctx context.Context, w io.Writer, m Meta, lines Lines, o Options) error {
	if o.NoUntenanted {
		m, lines = tenantedOnly(m, lines)
	}
	s, err := Summarize(ctx, m, lines, false)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	switch o.Format {
	case CSV:
		err = writeCSV(ctx, bw, s, lines, o.Detail)
	case JSON:
		err = writeJSON(ctx, bw, s, lines, o.Detail)
	case FOCUS:
		err = writeFOCUS(ctx, bw, s, lines, o.Detail)
	default:
		err = fmt.Errorf("unknown format %q", o.Format)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// tenantedOnly narrows m's credits and lines to accounts with a tenant.
func tenantedOnly(m Meta, lines Lines) (Meta, Lines) {
	has := map[string]bool{}
	tenanted := func(account string) bool {
		ok, seen := has[account]
		if !seen {
			if m.Tenants != nil {
				_, ok = m.Tenants.Tenant(account)
			}
			has[account] = ok
		}
		return ok
	}
	var credits []Credit
	for _, c := range m.Credits {
		if tenanted(c.Account) {
			credits = append(credits, c)
		}
	}
	m.Credits = credits
	return m, func(ctx context.Context, ordered bool, fn func(meter.Line) error) error {
		return lines(ctx, ordered, func(l meter.Line) error {
			if !tenanted(l.Account) {
				return nil
			}
			return fn(l)
		})
	}
}

// detail streams the priced lines in export order.
func detail(ctx context.Context, m Meta, lines Lines, fn func(Item) error) error {
	p := newPricer(m)
	err := lines(ctx, true, func(l meter.Line) error {
		it, priced, err := p.item(l)
		if err != nil {
			return err
		}
		if !priced {
			return p.missing.Err() // Summarize found none; the ledger changed under us
		}
		return fn(it)
	})
	if err != nil {
		return fmt.Errorf("export %s lines: %w", m.Period, err)
	}
	return nil
}

func rfc(t time.Time) string { return t.UTC().Format(rfcLayout) }
func unixRFC(s int64) string {
	var buf [32]byte
	return string(appendUnixRFC(buf[:0], s))
}
func i64(v int64) string { return strconv.FormatInt(v, 10) }
func status(m Meta) string {
	if m.Closed {
		return "closed"
	}
	return "open"
}

func rateString(r Row) string {
	if r.Rate < 0 || r.IsCredit() {
		return ""
	}
	return r.Rate.String()
}

// The CSV's row types (column row_type): a summary row or line item, the
// subtotal of one tenant (account), and the grand total. A spreadsheet's
// SUMIF over row_type "line" adds up to the total row.
const (
	RowLine     = "line"
	RowSubtotal = "subtotal"
	RowTotal    = "total"
)

var summaryHeader = []string{"row_type", "period", "status", "cluster", "tenant", "has_tenant", "tenant_description", "organization", "cost_center",
	"account", "gpu_type", "tier", "kind", "usage_period", "gpu_seconds", "gpu_hours", "booked_gpu_seconds", "booked_gpu_hours",
	"rate_per_gpu_hour", "rate_basis", "currency", "amount", "lines", "booking"}

var detailHeader = []string{"row_type", "period", "status", "cluster", "tenant", "has_tenant", "tenant_description", "organization", "cost_center",
	"account", "user", "job_id", "submit_time", "usage_period", "kind", "revision", "tier", "gpu_type", "gpu_count", "start", "end",
	"gpu_seconds", "gpu_hours", "booked_gpu_seconds", "booked_gpu_hours", "rate_per_gpu_hour", "rate_basis", "currency", "amount", "booking"}

// tenantCells are the tenant columns of a CSV row: name, has_tenant and
// the tenant's profile.
func tenantCells(rec []string, tenant string, has bool, p Profile) []string {
	return append(rec, tenant, strconv.FormatBool(has), p.Description, p.Organization, p.CostCenter)
}

// secondsCells are the used and booked GPU-seconds and GPU-hours columns.
func secondsCells(rec []string, used, booked int64) []string {
	return append(rec, secondsCell(used), hoursCell(used), secondsCell(booked), hoursCell(booked))
}

// secondsCell and hoursCell write GPU-seconds and GPU-hours; 0, the
// other column of most rows, without formatting it again.
func secondsCell(sec int64) string {
	if sec == 0 {
		return "0"
	}
	return i64(sec)
}

func hoursCell(sec int64) string {
	if sec == 0 {
		return zeroHours
	}
	return GPUHours(sec)
}

// zeroHours is GPUHours(0).
const zeroHours = "0.000000"

// writeCSV writes the summary (each tenant's rows followed by its
// subtotal) or, with detail, the line items and credits followed by every
// tenant's subtotal; the grand total comes last. Used and booked
// GPU-seconds are in columns of their own, so each column adds up.
func writeCSV(ctx context.Context, w io.Writer, s Summary, lines Lines, withDetail bool) error {
	m := s.Meta
	c := &csvSummary{cw: newCellWriter(w), s: s, withDetail: withDetail, period: m.Period.String(), status: status(m), cur: m.Card.Currency,
		before: len(summaryHeader) - 10, rec: make([]string, 0, len(detailHeader))}
	if withDetail {
		c.before = len(detailHeader) - 9
	}
	var err error
	if withDetail {
		err = c.writeDetail(ctx, lines)
	} else {
		err = c.writeSummary()
	}
	if err != nil {
		return err
	}
	if err := c.total(); err != nil {
		return err
	}
	c.cw.Flush()
	return c.cw.Error()
}

// csvSummary writes one summary CSV: the cells every row starts with,
// the number of columns before the seconds columns (before), and the
// record it reuses for each row.
type csvSummary struct {
	cw                  *cellWriter
	s                   Summary
	withDetail          bool
	period, status, cur string
	before              int
	rec                 []string
}

// head starts a row of type typ: its type, period, status and cluster.
func (c *csvSummary) head(typ string) []string {
	return append(c.rec[:0], typ, c.period, c.status, c.s.Meta.Cluster)
}

// writeSummary writes the header and each tenant's rows, each tenant's
// followed by its subtotal.
func (c *csvSummary) writeSummary() error {
	if err := c.cw.Write(summaryHeader); err != nil {
		return err
	}
	tenants := c.s.Tenants()
	next := 0 // the tenant whose rows are being written
	for i, r := range c.s.Rows {
		used, booked := r.Split()
		rec := tenantCells(c.head(RowLine), r.Tenant, r.HasTenant, r.Profile)
		rec = append(rec, r.Account, r.Type, string(r.Tier), string(r.Kind), r.Usage.String())
		rec = secondsCells(rec, used, booked)
		c.rec = append(rec, rateString(r), r.Basis, c.cur, r.Amount.String(), strconv.Itoa(r.Lines), bookingCell(r.Booking))
		if err := c.cw.Write(c.rec); err != nil {
			return err
		}
		if i+1 == len(c.s.Rows) || c.s.Rows[i+1].Account != r.Account || c.s.Rows[i+1].Tenant != r.Tenant {
			if err := c.subtotal(tenants[next]); err != nil {
				return err
			}
			next++
		}
	}
	return nil
}

// writeDetail writes the header, the line items and the credits, then
// every tenant's subtotal.
func (c *csvSummary) writeDetail(ctx context.Context, lines Lines) error {
	if err := c.cw.Write(detailHeader); err != nil {
		return err
	}
	m := c.s.Meta
	periods := periodNames{}
	err := detail(ctx, m, lines, func(it Item) error {
		job, submit := jobCells(it.Line)
		used, booked := it.GPUSeconds, int64(0)
		if it.Charge {
			used, booked = 0, it.GPUSeconds
		}
		rec := tenantCells(c.head(RowLine), it.Tenant, it.HasTenant, it.Profile)
		rec = append(rec, it.Account, it.User, job, submit, periods.get(it.Period), string(it.Kind()),
			strconv.Itoa(it.Revision), string(it.Tier), it.Type, i64(it.Count), unixRFC(it.Start), unixRFC(it.End))
		rec = secondsCells(rec, used, booked)
		c.rec = append(rec, it.Quote.UnitPrice().String(), it.Quote.Basis, c.cur, it.Amount.String(), bookingCell(it.Booking))
		return c.cw.Write(c.rec)
	})
	if err != nil {
		return err
	}
	if err := writeCSVCredits(c.cw, m); err != nil {
		return err
	}
	for _, t := range c.s.Tenants() {
		if err := c.subtotal(t); err != nil {
			return err
		}
	}
	return nil
}

// subtotal writes tenant t's subtotal row (the columns of no tenant
// total, such as type, tier or rate, empty).
func (c *csvSummary) subtotal(t TenantTotal) error {
	rec := tenantCells(c.head(RowSubtotal), t.Tenant, t.HasTenant, t.Profile)
	rec = append(rec, t.Account)
	rec = padTo(rec, c.before)
	rec = secondsCells(rec, t.GPUSeconds, t.BookedGPUSeconds)
	rec = append(rec, "", "", c.cur, t.Amount.String())
	if !c.withDetail {
		rec = append(rec, strconv.Itoa(t.Lines))
	}
	c.rec = rec
	return c.cw.Write(append(rec, ""))
}

// total writes the grand total row.
func (c *csvSummary) total() error {
	rec := padTo(c.head(RowTotal), c.before)
	rec = secondsCells(rec, c.s.GPUSeconds, c.s.BookedGPUSeconds)
	rec = append(rec, "", "", c.cur, c.s.Amount.String())
	if !c.withDetail {
		rec = append(rec, strconv.Itoa(c.s.Lines))
	}
	c.rec = rec
	return c.cw.Write(append(rec, ""))
}

// padTo appends empty cells to rec until it has n.
func padTo(rec []string, n int) []string {
	for len(rec) < n {
		rec = append(rec, "")
	}
	return rec
}

// bookingCell is a booking id, or empty for none.
func bookingCell(id int64) string {
	if id == 0 {
		return ""
	}
	return i64(id)
}

// jobCells are a line's job id and submit time; empty for a booking
// charge, which is no job's.
func jobCells(l meter.Line) (string, string) {
	if l.Charge {
		return "", ""
	}
	return strconv.FormatUint(uint64(l.Run.JobID), 10), unixRFC(l.Run.Submit)
}

// jsonProfile is a tenant's profile in JSON.
type jsonProfile struct {
	Description  string `json:"tenantDescription"`
	Organization string `json:"organization"`
	CostCenter   string `json:"costCenter"`
}

func profileJSON(p Profile) jsonProfile { return jsonProfile(p) }

type jsonRow struct {
	Tenant    string `json:"tenant"`
	HasTenant bool   `json:"hasTenant"`
	jsonProfile
	Account          string `json:"account"`
	GPUType          string `json:"gpuType"`
	Tier             string `json:"tier"`
	Kind             string `json:"kind"`
	UsagePeriod      string `json:"usagePeriod"`
	GPUSeconds       int64  `json:"gpuSeconds"`
	GPUHours         string `json:"gpuHours"`
	BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
	BookedGPUHours   string `json:"bookedGpuHours"`
	Rate             string `json:"ratePerGPUHour"`
	RateBasis        string `json:"rateBasis"`
	Amount           string `json:"amount"`
	AmountMinor      int64  `json:"amountMinor"`
	Lines            int    `json:"lines"`
	Booking          int64  `json:"booking,omitempty"`
}

type jsonTenant struct {
	Tenant    string `json:"tenant"`
	HasTenant bool   `json:"hasTenant"`
	jsonProfile
	Account string `json:"account"`
	jsonFigures
}

// jsonFigures are the sums of a tenant's lines and of the whole export.
type jsonFigures struct {
	GPUSeconds       int64  `json:"gpuSeconds"`
	GPUHours         string `json:"gpuHours"`
	BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
	BookedGPUHours   string `json:"bookedGpuHours"`
	Amount           string `json:"amount"`
	AmountMinor      int64  `json:"amountMinor"`
	Lines            int    `json:"lines"`
}

func figuresJSON(gpuSeconds, bookedSeconds int64, amount money.Amount, lines int) jsonFigures {
	return jsonFigures{gpuSeconds, GPUHours(gpuSeconds), bookedSeconds, GPUHours(bookedSeconds), amount.String(), amount.Units(), lines}
}

type jsonLine struct {
	Tenant    string `json:"tenant"`
	HasTenant bool   `json:"hasTenant"`
	jsonProfile
	Account          string `json:"account"`
	User             string `json:"user"`
	JobID            uint32 `json:"jobId,omitempty"`
	Submit           string `json:"submitTime,omitempty"`
	UsagePeriod      string `json:"usagePeriod"`
	Kind             string `json:"kind"`
	Revision         int    `json:"revision"`
	Tier             string `json:"tier"`
	GPUType          string `json:"gpuType"`
	GPUCount         int64  `json:"gpuCount"`
	Start            string `json:"start"`
	End              string `json:"end"`
	GPUSeconds       int64  `json:"gpuSeconds"`
	BookedGPUSeconds int64  `json:"bookedGpuSeconds"`
	Rate             string `json:"ratePerGPUHour"`
	RateBasis        string `json:"rateBasis"`
	Amount           string `json:"amount"`
	AmountMinor      int64  `json:"amountMinor"`
	Booking          int64  `json:"booking,omitempty"`
}

// writeJSON writes one object; line items, when asked, are streamed into
// its "lines" array.
func writeJSON(ctx context.Context, w io.Writer, s Summary, lines Lines, withDetail bool) error {
	m, minor := s.Meta, s.Meta.Card.Minor()
	head := struct {
		Period     string `json:"period"`
		Status     string `json:"status"`
		ClosedAt   string `json:"closedAt,omitempty"`
		Cluster    string `json:"cluster"`
		Currency   string `json:"currency"`
		MinorUnits int    `json:"minorUnits"`
	}{m.Period.String(), status(m), "", m.Cluster, m.Card.Currency, minor}
	if m.Closed {
		head.ClosedAt = rfc(m.ClosedAt)
	}
	hb, err := json.Marshal(head)
	if err != nil {
		return err
	}
	w.Write(hb[:len(hb)-1])
	rows := make([]jsonRow, 0, len(s.Rows))
	for _, r := range s.Rows {
		used, booked := r.Split()
		rows = append(rows, jsonRow{r.Tenant, r.HasTenant, profileJSON(r.Profile), r.Account, r.Type, string(r.Tier), string(r.Kind), r.Usage.String(),
			used, GPUHours(used), booked, GPUHours(booked), rateString(r), r.Basis, r.Amount.String(), r.Amount.Units(), r.Lines, r.Booking})
	}
	var tenants []jsonTenant
	for _, t := range s.Tenants() {
		tenants = append(tenants, jsonTenant{t.Tenant, t.HasTenant, profileJSON(t.Profile), t.Account,
			figuresJSON(t.GPUSeconds, t.BookedGPUSeconds, t.Amount, t.Lines)})
	}
	for _, part := range []struct {
		key string
		v   any
	}{{"summary", rows}, {"tenants", tenants}, {"total", figuresJSON(s.GPUSeconds, s.BookedGPUSeconds, s.Amount, s.Lines)}} {
		b, err := json.Marshal(part.v)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, ",%q:%s", part.key, b)
	}
	if err := writeJSONCredits(w, m); err != nil {
		return err
	}
	if withDetail {
		io.WriteString(w, `,"lines":[`)
		first := true
		var buf []byte
		periods := periodNames{}
		err := detail(ctx, m, lines, func(it Item) error {
			jl := jsonLine{it.Tenant, it.HasTenant, profileJSON(it.Profile), it.Account, it.User, it.Run.JobID, unixRFC(it.Run.Submit), periods.get(it.Period),
				string(it.Kind()), it.Revision, string(it.Tier), it.Type, it.Count, unixRFC(it.Start), unixRFC(it.End), it.GPUSeconds, 0,
				it.Quote.UnitPrice().String(), it.Quote.Basis, it.Amount.String(), it.Amount.Units(), it.Booking}
			if it.Charge {
				jl.JobID, jl.Submit = 0, ""
				jl.GPUSeconds, jl.BookedGPUSeconds = 0, it.GPUSeconds
			}
			buf = buf[:0]
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, '\n')
			buf = jl.appendJSON(buf)
			_, err := w.Write(buf)
			return err
		})
		if err != nil {
			return err
		}
		io.WriteString(w, "]")
	}
	_, err = io.WriteString(w, "}\n")
	return err
}

// FileMode is the mode of an exported file: readable by its group (finance)
// and no one else.
const FileMode = 0o640

// WriteFile writes the export to path through a temporary file in the same
// directory, fsynced and renamed over path only once complete (mode
// FileMode): an export that fails, at any line, leaves the previous file
// at path as it was and no temporary file behind.
func WriteFile(ctx context.Context, path string, m Meta, lines Lines, o Options) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Write(ctx, pw, m, lines, o)
		pw.CloseWithError(err) // nil: EOF for the reader
		done <- err
	}()
	err := atomicfile.WriteFrom(path, pr, atomicfile.Options{Mode: FileMode})
	pr.CloseWithError(errors.New("export file not written")) // unblocks Write if WriteFrom gave up early
	if werr := <-done; werr != nil {
		return werr
	}
	return err
}
