//go:build integration

package ingest_test

// The ingest part of the fault suite (see test/fault): each test injects a
// fault for real (a proxy in front of slurmrestd or MariaDB, a daemon
// killed and restarted, a clock off, a time zone, rows deleted under the
// ingest) and ends with the ledger equal to an independent recomputation
// and a second ingest writing nothing. Synthetic rows: ids from
// synth.TestIDs+30000 (a block of 10,000 per test), accounts m4synf-*.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/lease"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmrest/slurmresttest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/bench/synth"
	"github.com/gpubridge/gpubridge/test/fault"
	"github.com/gpubridge/gpubridge/test/fault/proxy"
)

const faultLike = `m4synf-%`

// faultRows is a month (2030-07) of runs of two accounts through the REST
// source's windows: one a day for two weeks, thirty on one morning (a
// dense window), a requeue, a MIG slice and a job still running at asOf.
func faultRows(sy *acctest.Synth) (rows []synth.Row, asOf time.Time) {
	day := func(d, h, m int) string { return fmt.Sprintf("2030-07-%02d %02d:%02d:00", d, h, m) }
	id := uint32(0)
	add := func(acct, start, end string, gpus map[string]int) {
		r := sy.Row(id, acct, "alice", start, start, end, gpus)
		rows = append(rows, r)
		id++
	}
	for d := 1; d <= 14; d++ {
		acct := []string{"m4synf-a", "m4synf-b"}[d%2]
		add(acct, day(d, 9, 0), day(d, 9+d%5, 30), map[string]int{"h100": 1 + d%3})
	}
	for i := 0; i < 30; i++ {
		s := day(15, 8+i/6, (i%6)*10)
		e := day(15, 8+i/6, (i%6)*10+7)
		add("m4synf-a", s, e, map[string]int{"1g.10gb": 1 + i%2})
	}
	add("m4synf-b", day(20, 10, 0), day(20, 12, 0), map[string]int{"3g.40gb": 1, "h100": 2})
	rows[len(rows)-1].State = synth.StateRequeued
	r := sy.Row(id-1, "m4synf-b", "alice", day(20, 12, 5), day(20, 12, 10), day(20, 14, 0), map[string]int{"3g.40gb": 1, "h100": 2}) // the requeued job's second run
	rows = append(rows, r)
	run := sy.Row(id, "m4synf-a", "alice", day(28, 0, 0), day(28, 1, 0), "", map[string]int{"h100": 1})
	run.State = synth.StateRunning
	rows = append(rows, run)
	return rows, time.Date(2030, 8, 5, 0, 0, 0, 0, time.UTC)
}

// faultIT is the state of one ingest fault test.
type faultIT struct {
	t    *testing.T
	env  testbed.Env
	sy   *acctest.Synth
	asOf time.Time
	from ingest.Window
}

func newFaultIT(t *testing.T, block uint32) *faultIT {
	t.Helper()
	env := testbed.Require(t)
	sy := acctest.NewSynth(t, env, synth.TestIDs+30000+block*10000, 10000, []string{"alice"}, "m4synf-a", "m4synf-b")
	rows, asOf := faultRows(sy)
	sy.Insert(rows...)
	return &faultIT{t: t, env: env, sy: sy, asOf: asOf, from: ingest.Window{From: time.Date(2030, 7, 1, 0, 0, 0, 0, time.UTC)}}
}

// ingester reads src into a new scratch ledger as of f.asOf.
func (f *faultIT) ingester(name string, src ingest.Source) (*ingest.Ingester, *sqlx.DB) {
	db, _ := acctest.ScratchDB(f.t, f.env, "f"+name)
	return f.ingesterOn(ledger.NewDB(db, nil), src), db
}

func (f *faultIT) ingesterOn(l ingest.Ledger, src ingest.Source) *ingest.Ingester {
	return &ingest.Ingester{Cluster: f.env.Cluster, Source: src, Ledger: l, Rules: rules, BatchRuns: 3,
		Clock: func() time.Time { return f.asOf }, UseHostClock: true}
}

func (f *faultIT) sqlSource() ingest.Source {
	src, err := ingest.NewSlurmDB(f.sy.RO, f.env.Cluster)
	if err != nil {
		f.t.Fatal(err)
	}
	return src
}

// want is the independent recomputation: plain SQL over the job table.
func (f *faultIT) want() map[acctest.Key]int64 {
	return acctest.Reference(f.t, f.sy.RO, f.env.Cluster, faultLike, acctest.Per(f.t, "2030-07"), acctest.Per(f.t, "2030-08"), f.asOf.Unix(), 0)
}

// converged checks the end of every fault: the ledger equals the
// reference, no run was written twice (no correction), and one more ingest
// writes nothing.
func (f *faultIT) converged(in *ingest.Ingester, db *sqlx.DB, w ingest.Window) {
	f.t.Helper()
	want := f.want()
	if len(want) == 0 {
		f.t.Fatal("the reference is empty: the test proves nothing")
	}
	if d := cmp.Diff(want, acctest.LedgerSums(f.t, db, f.env.Cluster, faultLike)); d != "" {
		f.t.Fatalf("ledger after the fault vs the SQL reference (-want +got)\n%s", d)
	}
	var revised int
	if err := db.Get(&revised, "SELECT COUNT(*) FROM usage_ledger WHERE revision > 0"); err != nil || revised != 0 {
		f.t.Errorf("%d corrections (%v): a run was counted twice", revised, err)
	}
	res, err := in.Ingest(context.Background(), w)
	if err != nil || res.Stats.Lines != 0 {
		f.t.Fatalf("the next ingest wrote %d lines (%v), want 0", res.Stats.Lines, err)
	}
}

func restProxy(t *testing.T, env testbed.Env) *proxy.HTTP {
	p, err := proxy.NewHTTP(env.RestURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

var jobsReads = func(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/slurmdb/") && strings.HasSuffix(r.URL.Path, "/jobs/")
}

// TestFaultSlurmrestdKilledMidIngest kills slurmrestd right after it
// answered the tenth window of a REST ingest (the answer never arrives),
// restarts it, and resumes from the committed watermark.
func TestFaultSlurmrestdKilledMidIngest(t *testing.T) {
	f := newFaultIT(t, 0)
	rest := fault.NewDaemon(t, f.env, "slurmrestd")
	p := restProxy(t, f.env)
	cl := slurmresttest.New(t, f.env, p.URL(), nil)
	in, db := f.ingester("restkill", ingest.NewREST(cl, f.env.Cluster))
	rule := p.Add(&proxy.Rule{Match: jobsReads, After: 9, Times: 1, Fault: proxy.CutAfterForward(rest.Kill)})
	_, err := in.Ingest(context.Background(), f.from)
	if err == nil || rule.Hits() != 1 {
		t.Fatalf("ingest with slurmrestd killed: %v (%d kills)", err, rule.Hits())
	}
	t.Logf("outcome: %v", err)
	wm, ok, err := ledger.NewDB(db, nil).Watermark(context.Background(), f.env.Cluster, "slurmrestd")
	if err != nil || !ok {
		t.Fatalf("no watermark committed before the kill (%v): the test proves nothing", err)
	}
	rest.Start()
	// The default window: from the committed watermark (less the lookback).
	fault.Timed(t, "REST ingest resumed after slurmrestd's restart", func() {
		if _, err := in.Ingest(context.Background(), ingest.Window{}); err != nil {
			t.Fatalf("resumed ingest from %s: %v", time.Unix(wm.Through, 0).UTC(), err)
		}
	})
	f.converged(in, db, ingest.Window{})
}

// TestFaultBadAnswersDuringIngest answers the REST ingest's first window
// wrongly: each is a failure with a clear message, and nothing is
// committed from it.
func TestFaultBadAnswersDuringIngest(t *testing.T) {
	f := newFaultIT(t, 1)
	cases := map[string]struct {
		fault    proxy.Fault
		contains string
	}{
		"500": {proxy.Status(500, `{"errors":[{"error_number":9001,"error":"Unable to query jobs","source":"slurmdb_jobs_get"}]}`),
			"HTTP 500 Internal Server Error: Unable to query jobs (error 9001)"},
		"truncated JSON": {proxy.TruncateJSON(), "HTTP 200 with a body that is not slurmrestd JSON"},
		"200 with errors[]": {proxy.SlurmErrors(200, proxy.SlurmError{Number: 7000, Error: "Unable to connect to database", Source: "slurmdb_jobs_get"}),
			"HTTP 200 OK: Unable to connect to database (error 7000)"},
		"wrong data_parser": {proxy.DataParser("v0.0.42"), "answered with data_parser v0.0.42, not the v0.0.44 that was asked for"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := restProxy(t, f.env)
			cl := slurmresttest.New(t, f.env, p.URL(), func(o *slurmrest.Options) { o.APIVersion = slurmrest.V44; o.Retries = -1 })
			in, db := f.ingester("bad", ingest.NewREST(cl, f.env.Cluster))
			p.Add(&proxy.Rule{Match: jobsReads, Times: 1, Fault: tc.fault})
			_, err := in.Ingest(context.Background(), f.from)
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("ingest: %v; want a failure containing %q", err, tc.contains)
			}
			t.Logf("outcome: %v", err)
			var lines int
			if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger"); err != nil || lines != 0 {
				t.Errorf("%d lines committed from a bad answer (%v)", lines, err)
			}
			if _, ok, _ := ledger.NewDB(db, nil).Watermark(context.Background(), f.env.Cluster, "slurmrestd"); ok {
				t.Error("a watermark was committed from a bad answer")
			}
			if _, err := in.Ingest(context.Background(), f.from); err != nil {
				t.Fatal(err)
			}
			f.converged(in, db, f.from)
		})
	}
}

// slurmErrorBody is slurmrestd's answer to a refused slurmdbd query.
func slurmErrorBody(n int, text string) string {
	return fmt.Sprintf(`{"jobs":[],"errors":[{"error_number":%d,"error":%q,"source":"slurmdb_jobs_get","description":"Unable to query jobs"}],"warnings":[]}`, n, text)
}

// width is the time range of a jobs request.
func width(r *http.Request) time.Duration {
	s, _ := strconv.ParseInt(r.URL.Query().Get("start_time"), 10, 64)
	e, _ := strconv.ParseInt(r.URL.Query().Get("end_time"), 10, 64)
	return time.Duration(e-s) * time.Second
}

// TestFaultRESTWindowRefused makes slurmrestd refuse windows as slurmdbd
// does with MaxQueryTimeRange (error 7007) and with result-too-large
// (error 7006, and answers beyond the client's maxBodyBytes): the REST
// source halves its window down to the minimum and the totals stay exact;
// refused even at the minimum, the ingest fails with a clear alert and
// writes nothing.
func TestFaultRESTWindowRefused(t *testing.T) {
	f := newFaultIT(t, 2)
	cases := map[string]struct {
		rule      func(p *proxy.HTTP, refusals *atomic.Int64) proxy.Fault
		maxBody   int64
		minWindow time.Duration
		alert     bool
	}{
		"MaxQueryTimeRange 6h (7007)": {rule: func(p *proxy.HTTP, n *atomic.Int64) proxy.Fault {
			return func(w http.ResponseWriter, r *http.Request, up proxy.Upstream) {
				if width(r) > 6*time.Hour {
					n.Add(1)
					proxy.Status(500, slurmErrorBody(7007, "Too wide of a date range in query"))(w, r, up)
					return
				}
				proxy.Forward()(w, r, up)
			}
		}},
		// (A job record names "job_id" three times: itself, array, het.)
		"result too large beyond 20 jobs (7006)": {rule: func(p *proxy.HTTP, n *atomic.Int64) proxy.Fault {
			return func(w http.ResponseWriter, r *http.Request, up proxy.Upstream) {
				resp, err := up()
				if err == nil && bytes.Count(resp.Body, []byte(`"job_id"`)) > 3*20 {
					n.Add(1)
					proxy.Status(500, slurmErrorBody(7006, "Query result exceeds size limit"))(w, r, up)
					return
				}
				proxy.Forward()(w, r, up)
			}
		}},
		"answers over 64 KiB (maxBodyBytes)": {maxBody: 64 << 10},
		"refused even at the minimum window": {minWindow: time.Minute, alert: true, rule: func(p *proxy.HTTP, n *atomic.Int64) proxy.Fault {
			return func(w http.ResponseWriter, r *http.Request, up proxy.Upstream) {
				if width(r) > 30*time.Second {
					n.Add(1)
					proxy.Status(500, slurmErrorBody(7007, "Too wide of a date range in query"))(w, r, up)
					return
				}
				proxy.Forward()(w, r, up)
			}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := restProxy(t, f.env)
			var refusals atomic.Int64
			if tc.rule != nil {
				p.Add(&proxy.Rule{Match: jobsReads, Fault: tc.rule(p, &refusals)})
			}
			cl := slurmresttest.New(t, f.env, p.URL(), func(o *slurmrest.Options) {
				if tc.maxBody > 0 {
					o.MaxBodyBytes = tc.maxBody
				}
			})
			var log bytes.Buffer
			src := ingest.NewREST(cl, f.env.Cluster)
			src.Log = slog.New(slog.NewTextHandler(&log, nil))
			if tc.minWindow > 0 {
				src.MinWindow = tc.minWindow
			}
			in, db := f.ingester("window", src)
			var err error
			fault.Timed(t, "REST ingest of a month with refused windows ("+name+")", func() { _, err = in.Ingest(context.Background(), f.from) })
			halvings := int64(strings.Count(log.String(), "refused the window; halving"))
			if tc.alert {
				if !errors.Is(err, ingest.ErrWindowRefused) || !strings.Contains(err.Error(), "1m0s at 2030-07-01T00:00:00Z") {
					t.Fatalf("ingest: %v; want ErrWindowRefused naming the 1m window and its start", err)
				}
				if !strings.Contains(log.String(), "level=ERROR") {
					t.Errorf("no error-level alert in the log:\n%s", log.String())
				}
				var lines int
				if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger"); err != nil || lines != 0 {
					t.Errorf("%d lines written (%v)", lines, err)
				}
				t.Logf("outcome: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if halvings == 0 {
				t.Fatalf("no window was refused (%d refusals at the proxy): the test proves nothing\n%s", refusals.Load(), log.String())
			}
			t.Logf("outcome: %d windows refused and halved, %d requests in all", halvings, src.Calls)
			f.converged(in, db, f.from)
		})
	}
}

// TestFaultMariaDBRestartMidIngest kills MariaDB (slurm_acct_db and the
// ledger alike) after the third batch of an ingest has been committed,
// starts it again, and resumes from the committed watermark.
func TestFaultMariaDBRestartMidIngest(t *testing.T) {
	env := testbed.Require(t)
	maria := fault.NewDaemon(t, env, "mariadb")
	fault.NewDaemon(t, env, "slurmdbd") // if it gave up on its database, it is started again
	lo := uint32(synth.TestIDs + 30000 + 3*10000)
	sy := acctest.NewSynth(t, env, lo, 10000, nil)
	month := time.Date(2030, 9, 1, 0, 0, 0, 0, time.UTC)
	spec := synth.Month{Start: month, Jobs: 6000, Accounts: 5, Seed: 3, FirstID: lo, Prefix: "m4synf", GPUShare: 0.5, MIGShare: 0.1, QOS: sy.QOS}
	var rows []synth.Row
	if err := spec.Generate(sy.TRES, func(r synth.Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	sy.Insert(rows...)
	db, _ := acctest.ScratchDB(t, env, "fmaria")
	asOf := month.AddDate(0, 1, 4)
	in := &ingest.Ingester{Cluster: env.Cluster, Source: mustSlurmDB(t, sy.RO, env.Cluster), Ledger: ledger.NewDB(db, nil), Rules: rules,
		BatchRuns: 200, Clock: func() time.Time { return asOf }, UseHostClock: true}
	var batches atomic.Int64
	in.Progress = func(p ingest.Progress) {
		if batches.Add(1) == 3 {
			maria.Kill()
		}
	}
	_, err := in.Ingest(context.Background(), ingest.Window{})
	if err == nil || batches.Load() < 3 {
		t.Fatalf("ingest with MariaDB killed after 3 batches: %v (%d batches)", err, batches.Load())
	}
	t.Logf("outcome: %v", err)
	fault.Timed(t, "MariaDB start after a kill", maria.Start)
	waitDB(t, db)
	var partial int
	if err := db.Get(&partial, "SELECT COUNT(*) FROM usage_ledger"); err != nil || partial == 0 {
		t.Fatalf("%d lines committed before the kill (%v): the test proves nothing", partial, err)
	}
	in.Progress = nil
	if _, err := in.Ingest(context.Background(), ingest.Window{}); err != nil {
		t.Fatalf("resumed ingest: %v", err)
	}
	want := acctest.Reference(t, sy.RO, env.Cluster, "m4synf%", meter.PeriodOf(month).Prev(), meter.PeriodOf(asOf), asOf.Unix(), 0)
	got := acctest.LedgerSums(t, db, env.Cluster, "m4synf%")
	if len(want) == 0 {
		t.Fatal("the reference is empty")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ledger after MariaDB's restart vs the SQL reference (-want +got)\n%s", d)
	}
	var revised, lines, keys int
	if err := db.Get(&revised, "SELECT COUNT(*) FROM usage_ledger WHERE revision > 0"); err != nil || revised != 0 {
		t.Errorf("%d corrections (%v)", revised, err)
	}
	if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger"); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&keys, "SELECT COUNT(*) FROM (SELECT DISTINCT job_id, submit_time, usage_period, tier, gpu_type FROM usage_ledger) k"); err != nil || lines != keys {
		t.Errorf("%d lines for %d keys (%v): duplicates", lines, keys, err)
	}
	res, err := in.Ingest(context.Background(), ingest.Window{})
	if err != nil || res.Stats.Lines != 0 {
		t.Fatalf("the next ingest wrote %d lines (%v)", res.Stats.Lines, err)
	}
	t.Logf("figure: %d of %d lines were committed before the kill", partial, lines)
}

func mustSlurmDB(t *testing.T, db *sqlx.DB, cluster string) *ingest.SlurmDB {
	src, err := ingest.NewSlurmDB(db, cluster)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// waitDB waits until db answers again.
func waitDB(t *testing.T, db *sqlx.DB) {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := db.Ping(); err == nil {
			return
		} else if time.Now().After(end) {
			t.Fatalf("MariaDB did not come back: %v", err)
		}
	}
}

// TestFaultMariaDBResetAroundCommit resets the ledger's connection at the
// COMMIT of the second batch, once before the COMMIT is sent (rolled back)
// and once after it ran but before its answer (committed, the client never
// learns it): the next ingest resumes from the committed watermark with
// nothing twice.
func TestFaultMariaDBResetAroundCommit(t *testing.T) {
	f := newFaultIT(t, 4)
	for name, afterExec := range map[string]bool{"before COMMIT": false, "after COMMIT ran": true} {
		t.Run(name, func(t *testing.T) {
			p, err := proxy.NewTCP("127.0.0.1:3306", true)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			_, dsn := acctest.ScratchDB(t, f.env, "freset")
			cfg, err := mysql.ParseDSN(dsn)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Addr = p.Addr()
			viaProxy, err := sqldb.Open(context.Background(), cfg.FormatDSN())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { viaProxy.Close() })
			// COMMITs: the accruals' first, then one per batch; reset at the second batch's.
			rule := p.AddStatementRule(&proxy.StatementRule{Match: func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "COMMIT") },
				After: 2, Times: 1, AfterExec: afterExec})
			in := f.ingesterOn(ledger.NewDB(viaProxy, nil), f.sqlSource())
			_, err = in.Ingest(context.Background(), f.from)
			if err == nil || rule.Hits() != 1 {
				t.Fatalf("ingest with the ledger connection reset %s: %v (%d resets)", name, err, rule.Hits())
			}
			t.Logf("outcome: %v", err)
			if _, err := in.Ingest(context.Background(), ingest.Window{}); err != nil {
				t.Fatalf("resumed ingest: %v", err)
			}
			f.converged(in, viaProxy, ingest.Window{})
		})
	}
}

// TestFaultClockOff runs the daemon's clock 10 minutes behind and ahead:
// the ingest measures as of the accounting side's clock, so the ledger is
// the same; through slurmrestd the JWTs, minted by the host clock, are
// corrected to slurmctld's clock instead of being refused.
func TestFaultClockOff(t *testing.T) {
	env := testbed.Require(t)
	lo := uint32(synth.TestIDs + 30000 + 5*10000)
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4synf-a", "m4synf-b")
	now := time.Now().UTC().Truncate(time.Second)
	at := func(d time.Duration) string { return now.Add(d).Format(time.DateTime) }
	rows := []synth.Row{
		sy.Row(0, "m4synf-a", "alice", at(-30*time.Hour), at(-30*time.Hour), at(-28*time.Hour), map[string]int{"h100": 2}),
		sy.Row(1, "m4synf-b", "alice", at(-5*time.Hour), at(-5*time.Hour), at(-4*time.Hour), map[string]int{"1g.10gb": 1}),
		sy.Row(2, "m4synf-a", "alice", at(-2*time.Hour), at(-2*time.Hour), at(-3*time.Minute), map[string]int{"3g.40gb": 1}), // ended 3 minutes ago
		sy.Row(3, "m4synf-b", "alice", at(-time.Hour), at(-time.Hour), "", map[string]int{"h100": 1}),                        // running
	}
	rows[3].State = synth.StateRunning
	sy.Insert(rows...)
	from := ingest.Window{From: now.Add(-48 * time.Hour)}
	for _, source := range []string{"slurmdb", "slurmrestd"} {
		var base []string
		for _, off := range []time.Duration{0, -10 * time.Minute, 10 * time.Minute} {
			t.Run(fmt.Sprintf("%s host clock %+v", source, off), func(t *testing.T) {
				host := func() time.Time { return time.Now().Add(off) }
				var src ingest.Source = mustSlurmDB(t, sy.RO, env.Cluster)
				if source == "slurmrestd" {
					cl := slurmresttest.New(t, env, "", func(o *slurmrest.Options) { o.Now = host; o.TokenLifetime = 5 * time.Minute })
					src = ingest.NewREST(cl, env.Cluster)
				}
				db, _ := acctest.ScratchDB(t, env, "fclock")
				in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: ledger.NewDB(db, nil), Rules: rules, Clock: host}
				res, err := in.Ingest(context.Background(), from)
				if err != nil {
					t.Fatalf("ingest with the host clock %s off: %v", off, err)
				}
				if d := time.Since(res.AsOf); d < -5*time.Second || d > 5*time.Second {
					t.Errorf("measured as of %s, %s from the real time; want the accounting side's clock", res.AsOf, d.Round(time.Second))
				}
				lines := acctest.LedgerLines(t, db, env.Cluster, faultLike)
				runs := map[string]bool{} // a run across a month end has a line per month
				for _, l := range lines {
					f := strings.Fields(l)
					runs[f[0]+" "+f[1]] = true
				}
				if len(runs) != 3 {
					t.Errorf("%d runs in the ledger, want the 3 finished runs:\n%s", len(runs), strings.Join(lines, "\n"))
				}
				// The running run is accrued from its start to the accounting side's now.
				var accrual struct {
					Start int64 `db:"usage_start"`
					End   int64 `db:"usage_end"`
				}
				if err := db.Get(&accrual, "SELECT MIN(usage_start) AS usage_start, MAX(usage_end) AS usage_end FROM usage_accrual WHERE job_id = ?", lo+3); err != nil {
					t.Fatal(err)
				}
				if accrual.Start != rows[3].Start || accrual.End != res.AsOf.Unix() {
					t.Errorf("running run accrued %d..%d, want %d..%d", accrual.Start, accrual.End, rows[3].Start, res.AsOf.Unix())
				}
				if base == nil {
					base = lines
					return
				}
				if d := cmp.Diff(base, lines); d != "" {
					t.Errorf("ledger with the host clock %s off vs in step (-in step +off)\n%s", off, d)
				}
				t.Logf("outcome: as of %s, skew %s", res.AsOf.Format(time.RFC3339), res.ClockSkew)
			})
		}
	}
}

// TestFaultTimeZoneAcrossDST ingests and shows the weekend of 31 October -
// 2 November 2026 (America/New_York leaves daylight saving time on 1
// November, the day the month starts in UTC) with the gpubridge binary
// under TZ=America/New_York and TZ=UTC: the ledger, the periods and the
// report are identical, and equal to the UTC reference.
func TestFaultTimeZoneAcrossDST(t *testing.T) {
	env := testbed.Require(t)
	lo := uint32(synth.TestIDs + 30000 + 6*10000)
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4synf-a", "m4synf-b")
	rows := []synth.Row{
		// Across the UTC month boundary (20:00 EDT on 31 October).
		sy.Row(0, "m4synf-a", "alice", "2026-10-31 22:00:00", "2026-10-31 22:00:00", "2026-11-01 02:00:00", map[string]int{"h100": 2}),
		// Across the local hour that happens twice (01:00-02:00 EDT, then EST): 05:00-07:00 UTC.
		sy.Row(1, "m4synf-b", "alice", "2026-11-01 04:30:00", "2026-11-01 04:30:00", "2026-11-01 07:30:00", map[string]int{"1g.10gb": 1}),
		// Across local midnight of 31 October (04:00 UTC on 1 November).
		sy.Row(2, "m4synf-a", "alice", "2026-11-01 03:00:00", "2026-11-01 03:00:00", "2026-11-01 05:00:00", map[string]int{"3g.40gb": 1}),
		// The local month boundary that is not one: 1 November 00:00 EDT = 04:00 UTC.
		sy.Row(3, "m4synf-b", "alice", "2026-10-31 23:30:00", "2026-10-31 23:30:00", "2026-11-02 00:30:00", map[string]int{"h100": 1}),
	}
	sy.Insert(rows...)
	bin := filepath.Join(t.TempDir(), "gpubridge")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpubridge/gpubridge/cmd/gpubridge").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	type result struct {
		Lines   []string
		Reports map[string]string
	}
	run := func(tz string) result {
		db, dsn := acctest.ScratchDB(t, env, "ftz")
		cli := func(args ...string) string {
			c := exec.Command(bin, args...)
			c.Env = append(os.Environ(), "TZ="+tz, "GPUBRIDGE_DB_DSN="+dsn)
			var out, errb bytes.Buffer
			c.Stdout, c.Stderr = &out, &errb
			if err := c.Run(); err != nil {
				t.Fatalf("TZ=%s gpubridge %s: %v\n%s", tz, strings.Join(args, " "), err, errb.String())
			}
			return out.String()
		}
		cli("ingest", "from=2026-10-31", "to=2026-11-03")
		r := result{Lines: acctest.LedgerLines(t, db, env.Cluster, faultLike), Reports: map[string]string{}}
		for _, p := range []string{"2026-10", "2026-11"} {
			var keep []string
			for _, line := range strings.Split(cli("-P", "show", "usage", "period="+p), "\n") {
				if strings.Contains(line, "m4synf-") || strings.HasPrefix(line, "Period") {
					keep = append(keep, line)
				}
			}
			r.Reports[p] = strings.Join(keep, "\n")
		}
		return r
	}
	utc, ny := run("UTC"), run("America/New_York")
	if d := cmp.Diff(utc, ny); d != "" {
		t.Fatalf("TZ=UTC vs TZ=America/New_York (-utc +ny)\n%s", d)
	}
	want := map[acctest.RunKey]int64{
		{Job: lo, Submit: acctest.TS(t, "2026-10-31 22:00:00"), Period: "2026-10", Tier: meter.Reserved, Type: "h100"}:        2 * 2 * 3600,
		{Job: lo, Submit: acctest.TS(t, "2026-10-31 22:00:00"), Period: "2026-11", Tier: meter.Reserved, Type: "h100"}:        2 * 2 * 3600,
		{Job: lo + 1, Submit: acctest.TS(t, "2026-11-01 04:30:00"), Period: "2026-11", Tier: meter.Reserved, Type: "1g.10gb"}: 3 * 3600,
		{Job: lo + 2, Submit: acctest.TS(t, "2026-11-01 03:00:00"), Period: "2026-11", Tier: meter.Reserved, Type: "3g.40gb"}: 2 * 3600,
		{Job: lo + 3, Submit: acctest.TS(t, "2026-10-31 23:30:00"), Period: "2026-10", Tier: meter.Reserved, Type: "h100"}:    1800,
		{Job: lo + 3, Submit: acctest.TS(t, "2026-10-31 23:30:00"), Period: "2026-11", Tier: meter.Reserved, Type: "h100"}:    24*3600 + 1800,
	}
	db, _ := acctest.ScratchDB(t, env, "ftzref")
	in := &ingest.Ingester{Cluster: env.Cluster, Source: mustSlurmDB(t, sy.RO, env.Cluster), Ledger: ledger.NewDB(db, nil), Rules: rules}
	if _, err := in.Ingest(context.Background(), ingest.Window{From: time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, acctest.RunSums(t, db, env.Cluster, faultLike)); d != "" {
		t.Fatalf("per run and UTC month (-want +got)\n%s", d)
	}
	if d := cmp.Diff(utc.Lines, acctest.LedgerLines(t, db, env.Cluster, faultLike)); d != "" {
		t.Errorf("the binary's ledger vs the in-process one (-binary +in-process)\n%s", d)
	}
	t.Logf("outcome: identical under both TZs; 2026-10 report:\n%s", ny.Reports["2026-10"])
}

// TestFaultPurgedRows deletes a run from the job table after a first
// ingest, before the run was ingested, as slurmdbd's PurgeJobAfter would,
// while slurmdbd's hourly rollups still hold its use: the ingest refuses
// (nothing written) and names the account, the hours and the GPU-seconds;
// with AcceptMissing it ingests the rest and reports the gap; once the row
// is back the ledger equals the reference.
func TestFaultPurgedRows(t *testing.T) {
	env := testbed.Require(t)
	lo := uint32(synth.TestIDs + 30000 + 7*10000)
	sy := acctest.NewSynth(t, env, lo, 10000, []string{"alice"}, "m4synf-p")
	// Hours of a day before this testbed started, so that no real job is there.
	rows := []synth.Row{
		sy.Row(0, "m4synf-p", "alice", "2026-11-20 10:00:00", "2026-11-20 10:00:00", "2026-11-20 11:00:00", map[string]int{"h100": 2}),
		sy.Row(1, "m4synf-p", "alice", "2026-11-20 12:00:00", "2026-11-20 12:00:00", "2026-11-20 13:30:00", map[string]int{"1g.10gb": 1}),
		sy.Row(2, "m4synf-p", "alice", "2026-11-20 14:00:00", "2026-11-20 14:00:00", "2026-11-20 15:00:00", map[string]int{"h100": 1}),
	}
	sy.Insert(rows...)
	assoc := sy.Assoc[[2]string{"m4synf-p", "alice"}]
	dropRollups := func() {
		for _, tbl := range []string{"hour", "day", "month"} {
			if _, err := sy.RW.Exec("DELETE FROM `"+env.Cluster+"_assoc_usage_"+tbl+"_table` WHERE id = ?", assoc); err != nil {
				t.Errorf("cleanup of the rollups: %v", err)
			}
		}
	}
	dropRollups()
	t.Cleanup(dropRollups)
	db, _ := acctest.ScratchDB(t, env, "fpurge")
	var now time.Time
	in := &ingest.Ingester{Cluster: env.Cluster, Source: mustSlurmDB(t, sy.RO, env.Cluster), Ledger: ledger.NewDB(db, nil), Rules: rules,
		Clock: func() time.Time { return now }, UseHostClock: true}
	from := ingest.Window{From: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	now = time.Date(2026, 11, 20, 11, 30, 0, 0, time.UTC)
	if _, err := in.Ingest(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	// slurmdbd rolls the hours up (as it does every hour), then the second
	// run's row goes before anyone ingested it.
	env.Exec(t, "", "sacctmgr", "-i", "rollup", "2026-11-20T10:00:00", "2026-11-20T16:00:00")
	var rolled int64
	if err := sy.RO.Get(&rolled, "SELECT CAST(COALESCE(SUM(alloc_secs), 0) AS SIGNED) FROM `"+env.Cluster+"_assoc_usage_hour_table` WHERE id = ? AND id_tres = ?", assoc, sy.TRES.GPU); err != nil || rolled != 2*3600+5400+3600 {
		t.Fatalf("rollups hold %d GPU-seconds (%v), want %d", rolled, err, 2*3600+5400+3600)
	}
	sy.Delete(1)
	now = time.Date(2026, 11, 20, 17, 0, 0, 0, time.UTC)
	var lines0 int
	_ = db.Get(&lines0, "SELECT COUNT(*) FROM usage_ledger")
	_, err := in.Ingest(context.Background(), ingest.Window{})
	var me *ingest.MissingError
	if !errors.Is(err, ingest.ErrMissingRows) || !errors.As(err, &me) {
		t.Fatalf("ingest after the purge: %v; want ErrMissingRows", err)
	}
	// The hours checked are 12:00-17:00 (past the watermark); the missing
	// use lies in 12:00-14:00, where the rollups hold the purged run.
	if d := cmp.Diff([]ingest.Missing{{Account: "m4synf-p", User: "alice", From: acctest.TS(t, "2026-11-20 12:00:00"), To: acctest.TS(t, "2026-11-20 14:00:00"),
		RollupSeconds: 5400}}, me.Missing); d != "" {
		t.Errorf("missing use (-want +got)\n%s", d)
	}
	var lines1 int
	if err := db.Get(&lines1, "SELECT COUNT(*) FROM usage_ledger"); err != nil || lines1 != lines0 {
		t.Errorf("the refused ingest wrote lines: %d -> %d (%v)", lines0, lines1, err)
	}
	t.Logf("outcome: %v", err)

	// A gap accepted for other hours does not let it through.
	in.AcceptMissing = &ingest.Accept{From: time.Date(2026, 11, 20, 13, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 20, 17, 0, 0, 0, time.UTC), Actor: "test"}
	if _, err := in.Ingest(context.Background(), ingest.Window{}); !errors.Is(err, ingest.ErrMissingRows) {
		t.Fatalf("ingest with a gap accepted for 13:00-17:00: %v; want ErrMissingRows", err)
	}
	// Accepted for the hours the refusal named: the rest is ingested and
	// the gap reported and audited, not billed.
	in.AcceptMissing.From = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	res, err := in.Ingest(context.Background(), ingest.Window{})
	if err != nil || len(res.Missing) != 1 || res.Missing[0].Seconds() != 5400 {
		t.Fatalf("ingest with AcceptMissing: %+v, %v", res.Missing, err)
	}
	var audited int
	if err := db.Get(&audited, "SELECT COUNT(*) FROM audit_log WHERE action = 'accept-missing' AND actor = 'test' AND after_json LIKE '%m4synf-p%'"); err != nil || audited != 1 {
		t.Errorf("%d audit entries for the accepted gap (%v), want 1", audited, err)
	}
	// The row comes back (sacctmgr archive load): the lookback picks it up.
	in.AcceptMissing = nil
	sy.Insert(rows[1])
	now = time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC)
	if _, err := in.Ingest(context.Background(), ingest.Window{}); err != nil {
		t.Fatal(err)
	}
	want := acctest.Reference(t, sy.RO, env.Cluster, "m4synf-p", acctest.Per(t, "2026-11"), acctest.Per(t, "2026-11"), now.Unix(), 0)
	if d := cmp.Diff(want, acctest.LedgerSums(t, db, env.Cluster, "m4synf-p")); d != "" {
		t.Fatalf("ledger after the row came back vs the SQL reference (-want +got)\n%s", d)
	}
	if res, err := in.Ingest(context.Background(), ingest.Window{}); err != nil || res.Stats.Lines != 0 {
		t.Fatalf("the next ingest wrote %d lines (%v)", res.Stats.Lines, err)
	}
}

// TestFaultLedgerLockLost takes the ledger's lease away from an ingest
// while it writes, as a pause past the lease's TTL would (a stopped
// process, a partition): the lease is expired in the database and taken
// by another holder (epoch + 1). The ingest must stop with ErrLockLost at
// its next write (its fence is refused) and write nothing more. The next
// ingest, once the other holder lets go, completes the ledger.
func TestFaultLedgerLockLost(t *testing.T) {
	f := newFaultIT(t, 8)
	in, db := f.ingester("lock", f.sqlSource())
	ctx := context.Background()
	var killed atomic.Bool
	var linesAtKill int
	var thief *lease.Lease
	in.Progress = func(p ingest.Progress) {
		if p.Done || killed.Load() {
			return
		}
		name := "gpubridge.ledger." + f.env.Cluster
		if err := db.Get(&linesAtKill, "SELECT COUNT(*) FROM usage_ledger"); err != nil {
			t.Error(err)
		}
		if _, err := db.Exec("UPDATE leases SET expires_at = UTC_TIMESTAMP(6) WHERE name = ?", name); err != nil {
			t.Errorf("expire the ledger lease: %v", err)
		}
		thief = lease.New(db.DB, name, lease.Options{Info: "TestFaultLedgerLockLost", TTL: time.Minute})
		if err := thief.Take(ctx); err != nil {
			t.Errorf("take the expired ledger lease: %v", err)
		}
		killed.Store(true)
	}
	_, err := in.Ingest(ctx, f.from)
	if !killed.Load() {
		t.Fatal("the ingest ended before its lease was taken over: the test proves nothing")
	}
	if !errors.Is(err, ledger.ErrLockLost) {
		t.Fatalf("ingest whose lease was taken over: %v; want ErrLockLost", err)
	}
	t.Logf("outcome: %v", err)
	var lines int
	if err := db.Get(&lines, "SELECT COUNT(*) FROM usage_ledger"); err != nil || lines != linesAtKill || lines == 0 {
		t.Errorf("%d lines after the kill, %d before it (%v): want the same, and some", lines, linesAtKill, err)
	}
	in.Progress = nil
	if err := thief.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Ingest(ctx, ingest.Window{}); err != nil {
		t.Fatalf("next ingest: %v", err)
	}
	f.converged(in, db, ingest.Window{})
}
