//go:build integration

package ledger_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestExportReadsEqualLines: on a scratch ledger holding names LOAD DATA
// and CSV would have to escape (a tab, a comma, a quote, a backslash, a
// newline, non-ASCII, NULL), negative corrections, adjustments of another
// usage period, bookings, and the extremes of every numeric column,
// ExportLines gives exactly the lines Lines gives (in the export order
// when ordered), and SummaryLines the same lines' summary fields, for the
// whole period and for one account.
func TestExportReadsEqualLines(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	db, _ := acctest.ScratchDB(t, env, "exportread")
	store := ledger.NewDB(db, nil)
	const cluster = "exp"
	names := []string{"plain", "tab\there", "comma,here", `quote"here`, `back\slash`, "new\nline", "naïve", "NULL", `\N`, "=cmd", ""}
	r := rand.New(rand.NewPCG(12, 7))
	booked := meter.PeriodOf(ledgertest.TSTime("2026-11-01 00:00:00"))
	var rows [][]any
	for i := range 3000 {
		acct, user := names[r.IntN(len(names))], names[r.IntN(len(names))]
		usage := booked
		if r.IntN(5) == 0 {
			usage = booked - meter.Period(1+r.IntN(3)) // an adjustment
		}
		gs := r.Int64N(1e7)
		rev := 0
		if r.IntN(4) == 0 {
			gs, rev = -gs, 1+r.IntN(65535) // a correction
		}
		start, end := booked.StartUnix()+r.Int64N(30*86400), int64(0)
		end = start + r.Int64N(86400)
		jobID, submit := uint32(1+i), start-int64(r.IntN(1000))
		booking := int64(0)
		switch r.IntN(12) {
		case 0:
			booking = r.Int64N(1 << 62)
		case 1:
			jobID, rev, gs, start, end = 1<<32-1, 65535, -(1<<62 + r.Int64N(1<<61)), 0, 0
		case 2:
			gs, start, end, submit = 1<<62+r.Int64N(1<<61), -r.Int64N(1<<40), 1<<62, -1
		}
		tier := []string{"reserved", "ondemand", "booked"}[r.IntN(3)]
		typ := []string{"h100", "1g.10gb", "3g.40gb", "gpu", "odd,type"}[r.IntN(5)]
		rows = append(rows, []any{cluster, jobID, submit, usage.String(), tier, typ, rev, booked.String(), acct, user, r.Int64N(1 << 31), start, end, gs, 1, booking})
	}
	// Another period and another cluster, which the reads must leave out.
	rows = append(rows, []any{cluster, 1, 1, booked.String(), "reserved", "h100", 0, (booked + 1).String(), "plain", "u", 1, 1, 2, 1, 1, 0},
		[]any{"other", 1, 1, booked.String(), "reserved", "h100", 0, booked.String(), "plain", "u", 1, 1, 2, 1, 1, 0})
	for _, row := range rows {
		if _, err := db.ExecContext(ctx, "INSERT INTO usage_ledger (cluster, job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period, account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, written_at, booking) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row...); err != nil {
			t.Fatal(err)
		}
	}
	read := func(f func(context.Context, string, ledger.LineQuery, func(meter.Line) error) error, q ledger.LineQuery) []meter.Line {
		t.Helper()
		var out []meter.Line
		if err := f(ctx, cluster, q, func(l meter.Line) error { out = append(out, l); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	summaryFields := func(l meter.Line) meter.Line {
		s := meter.Line{Account: l.Account, Booked: l.Booked}
		s.Run.Cluster, s.Type, s.Tier, s.Period, s.Final, s.Start, s.GPUSeconds, s.Booking = l.Run.Cluster, l.Type, l.Tier, l.Period, l.Final, l.Start, l.GPUSeconds, l.Booking
		return s
	}
	sorted := func(ls []meter.Line) []meter.Line {
		ls = slices.Clone(ls)
		slices.SortFunc(ls, func(a, b meter.Line) int { return cmp.Compare(fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b)) })
		return ls
	}
	for _, account := range []string{"", "plain", "tab\there", `quote"here`, "naïve"} {
		q := ledger.LineQuery{Booked: booked, Account: account, Ordered: true}
		want := read(store.Lines, q)
		if account == "" && len(want) != 3000 {
			t.Fatalf("Lines read %d lines, want the 3000 written", len(want))
		}
		if len(want) == 0 {
			t.Fatalf("account %q: no lines", account)
		}
		if d := gocmp.Diff(want, read(store.ExportLines, q)); d != "" {
			t.Errorf("account %q: ExportLines, ordered (-Lines +ExportLines)\n%s", account, d)
		}
		q.Ordered = false
		if d := gocmp.Diff(sorted(want), sorted(read(store.ExportLines, q))); d != "" {
			t.Errorf("account %q: ExportLines (-Lines +ExportLines)\n%s", account, d)
		}
		var wantSum []meter.Line
		for _, l := range want {
			wantSum = append(wantSum, summaryFields(l))
		}
		if d := gocmp.Diff(sorted(wantSum), sorted(read(store.SummaryLines, q))); d != "" {
			t.Errorf("account %q: SummaryLines (-Lines' summary fields +SummaryLines)\n%s", account, d)
		}
	}
}
