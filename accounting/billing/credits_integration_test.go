//go:build integration

package billing_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/credit"
	"github.com/gpubridge/gpubridge/bridge/health/credit/ledgeradapter"
	hstore "github.com/gpubridge/gpubridge/bridge/health/store"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/table"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestNodeFailCredit runs a real job of a test tenant (account m16credit)
// on gpu-a, kills gpu-a's slurmd and marks the node DOWN (what a fatal
// gpubridge check does; slurmctld would notice the dead slurmd only after
// SlurmdTimeout), so the job ends NODE_FAIL; it records the drain as
// gpubridge's health event, ingests the job into a scratch ledger and runs
// the credit job: exactly one credit line, equal to the job's charge
// recomputed independently from slurmdbd's job row (GPU-seconds × the
// card's rate, rounded once), linked to the event; in CSV, JSON and FOCUS
// (summary and detail, FOCUS conformant, ChargeCategory=Credit) exactly
// once; a rerun adds nothing. gpu-a's slurmd is started again and the
// node resumed whatever happens.
func TestNodeFailCredit(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	ro := acctest.SlurmDB(t, env)
	const acct, user = "m16credit", "alice"
	acctest.EnsureAccounts(t, env, ro, []string{user}, acct)
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Second)

	daemon := filepath.Join(filepath.Dir(env.ExecScript), "daemon.sh")
	// daemon.sh's exit status is not what counts (for slurmd-* it exits 1
	// after the kill, at its port lookup): gpu-a's slurmd port is.
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, daemon, args...).CombinedOutput(); err != nil {
			t.Logf("%s %s: %v: %s", daemon, strings.Join(args, " "), err, out)
		}
	}
	slurmdUp := func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:17001", time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	nodeState := func() string {
		out, _ := env.Run(ctx, "", nil, "sinfo", "-h", "-n", "gpu-a", "-o", "%T")
		return strings.TrimSpace(out)
	}
	id := acctest.Sbatch(t, env, user, "-A", acct, "-p", "pool", "-w", "gpu-a", "--no-requeue", "-t", "5", "-J", "m16-credit",
		"--gres=gpu:h100:2", "--wrap", "sleep 120")
	t.Cleanup(func() { _, _ = env.Run(context.Background(), "", nil, "scancel", id) })
	acctest.WaitFor(t, "job "+id+" to run on gpu-a", 2*time.Minute, func() bool { return acctest.JobState(env, id) == "RUNNING" })
	time.Sleep(20 * time.Second) // GPU time worth some cents

	run("kill", "slurmd-gpu-a")
	t.Cleanup(func() {
		run("start", "slurmd-gpu-a")
		acctest.WaitFor(t, "gpu-a's slurmd to listen again", time.Minute, slurmdUp)
		_, _ = env.Run(context.Background(), "", nil, "scontrol", "update", "nodename=gpu-a", "state=resume")
		acctest.WaitFor(t, "gpu-a back in service", 2*time.Minute, func() bool {
			s := nodeState()
			if strings.Contains(s, "*") { // not responding yet
				return false
			}
			if strings.Contains(s, "down") || strings.Contains(s, "drain") {
				_, _ = env.Run(context.Background(), "", nil, "scontrol", "update", "nodename=gpu-a", "state=resume")
				return false
			}
			return s != ""
		})
		// The NODE_FAIL job holds its two GPUs while it is completing (until
		// the restarted slurmd confirms its end): the next test that needs
		// the whole of gpu-a must not find them taken.
		_, _ = env.Run(context.Background(), "", nil, "scancel", id)
		acctest.WaitFor(t, "job "+id+" to be gone from gpu-a", 2*time.Minute, func() bool {
			out, err := env.Run(context.Background(), "", nil, "squeue", "-h", "-j", id, "-o", "%T")
			return err == nil && strings.TrimSpace(out) == "" || strings.Contains(out, "Invalid job id")
		})
	})
	acctest.WaitFor(t, "gpu-a's slurmd to be gone", 30*time.Second, func() bool { return !slurmdUp() })
	downAt := time.Now().UTC()
	env.Exec(t, "", "scontrol", "update", "nodename=gpu-a", "state=down", "reason=m16 credit test: slurmd killed")
	var row acctest.JobRow
	acctest.WaitFor(t, "slurmdbd to record job "+id+" as NODE_FAIL", 2*time.Minute, func() bool {
		rows := acctest.JobRows(t, ro, env.Cluster, id, start.Unix()-60)
		if len(rows) != 1 || rows[0].End == 0 {
			return false
		}
		row = rows[0]
		return true
	})
	if name := billing.JobStateName(int64(row.State)); name != "NODE_FAIL" {
		t.Fatalf("job %s ended %s, want NODE_FAIL", id, name)
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	asOf := time.Now().UTC().Truncate(time.Second)

	db, _ := acctest.ScratchDB(t, env, "credits")
	store := ledger.NewDB(db, nil)
	src, err := ingest.NewSlurmDB(ro, env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest.Ingester{Cluster: env.Cluster, Source: src, Ledger: store, Rules: meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"},
		Clock: func() time.Time { return asOf }, UseHostClock: true}
	if _, err := in.Ingest(ctx, ingest.Window{From: start}); err != nil {
		t.Fatal(err)
	}
	cards := ratecard.NewDB(db)
	card := ledgertest.Card(t) // h100 reserved at 2.10 per GPU-hour
	if err := cards.Save(ctx, card, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	// gpubridge's drain of gpu-a, as the health lifecycle records it.
	hs := hstore.New(db, env.Cluster)
	if _, err := hs.PutNode(ctx, health.Node{Name: "gpu-a", State: health.Drained, Since: downAt, Reason: "m16 test: slurmd killed", Fatal: true},
		&health.Event{Node: "gpu-a", At: downAt, From: health.Serving, To: health.Drained, Reason: "m16 test: slurmd killed", Fatal: true}); err != nil {
		t.Fatal(err)
	}
	evs, err := hs.Events(ctx, "gpu-a", start)
	if err != nil || len(evs) != 1 {
		t.Fatalf("health events %+v, %v", evs, err)
	}
	labels := func(context.Context) (ledger.Labeler, error) { return ledger.Labels{acct: acct}, nil }
	c := config.Default()
	c.Cluster, c.SlurmDB.DSN = env.Cluster, env.SlurmDBDSN
	c.Health.Credits.Lookback = config.Span{Duration: time.Since(start) + time.Hour}
	// The job as the daemon wires it for a slurmdb source (the minimum
	// loss of the default configuration is 0).
	h := c.Health.Credits
	ends := billing.SlurmDBEnds{DB: ro, Cluster: c.Cluster}
	job := &credit.Job{
		Source:   ledgeradapter.CreditSource{Cluster: c.Cluster, Ledger: store, Cards: cards, Labels: labels, Ends: ends, Health: hs},
		Ledger:   ledgeradapter.CreditWriter{Cluster: c.Cluster, Ledger: store},
		Policy:   credit.Policy{Enabled: true, KillWindow: h.KillWindow.Duration},
		Lookback: h.Lookback.Duration,
	}

	// The independent recomputation: two H100s for the run's seconds at
	// 2.10 per hour, rounded half away from zero once.
	sec := row.End - row.Start
	want := (2*sec*210*2 + 3600) / 7200
	if want <= 0 {
		t.Fatalf("job %s ran %d s: charged nothing, nothing to credit", id, sec)
	}
	p := meter.PeriodOfUnix(row.End)
	for i, wantNew := range []int{1, 0} {
		rep, err := job.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Written) != wantNew {
			ends, err := billing.SlurmDBEnds{DB: ro, Cluster: env.Cluster}.AbnormalEnds(ctx, rep.From, rep.To)
			st, _ := store.State(ctx, env.Cluster)
			t.Fatalf("run %d of the credit job wrote %d credit(s) (%d owed of %d runs), want %d: %+v\nabnormal ends %+v (%v)\ncoverage %v",
				i, len(rep.Written), rep.Computed, rep.Runs, wantNew, rep.Written, ends, err, st.Coverage)
		}
	}
	credits := ledgertest.AllCredits(t, store, env.Cluster, p)
	if len(credits) != 1 {
		t.Fatalf("credits in %s: %+v, want exactly one", p, credits)
	}
	cr := credits[0]
	if strconv.FormatUint(uint64(cr.JobID), 10) != id || cr.Amount.Units() != -want || cr.Kind != "node-fail" || cr.EventID != evs[0].ID ||
		cr.Account != acct || cr.Node != "gpu-a" {
		t.Fatalf("credit %+v; want job %s, -%d cents (2 GPUs x %d s at 2.10/h), linked to event %d", cr, id, want, sec, evs[0].ID)
	}
	var charged int64
	for _, l := range ledgertest.AllLines(t, store, env.Cluster, p) {
		if strconv.FormatUint(uint64(l.Run.JobID), 10) == id {
			_, a, err := card.PriceLine(l)
			if err != nil {
				t.Fatal(err)
			}
			charged += a.Units()
		}
	}
	if charged != want {
		t.Errorf("the ledger charged %d cents for job %s, the recomputation %d", charged, id, want)
	}
	t.Logf("job %s: %d s on two H100s, charged %d cents, credited %s (event %d)", id, sec, charged, cr.Amount, cr.EventID)

	books := billing.Books{Cluster: env.Cluster, Ledger: store, Cards: cards, Labels: labels, Clock: time.Now}
	s, err := books.Summary(ctx, p, acct)
	if err != nil {
		t.Fatal(err)
	}
	var rows, total int64
	for _, r := range s.Rows {
		if r.IsCredit() {
			rows++
			total += r.Amount.Units()
		}
	}
	if rows != 1 || total != -want {
		t.Errorf("show usage: %d credit row(s) of %d cents, want one of -%d", rows, total, want)
	}
	var tb bytes.Buffer
	if err := table.Write(&tb, table.Options{}, export.UsageTable([]export.Summary{s}, true)); err != nil {
		t.Fatal(err)
	}
	t.Logf("show usage tenant=%s:\n%s", acct, tb.String())
	for _, f := range []export.Format{export.CSV, export.JSON, export.FOCUS} {
		for _, detail := range []bool{false, true} {
			name := string(f) + map[bool]string{true: "-detail"}[detail]
			var b bytes.Buffer
			if err := books.Export(ctx, billing.ExportRequest{Period: p, Account: acct, Options: export.Options{Format: f, Detail: detail}}, &b); err != nil {
				t.Fatal(err)
			}
			var n int
			var sum string
			switch f {
			case export.JSON:
				var v struct {
					Credits []struct {
						JobID       uint32 `json:"jobId"`
						EventID     int64  `json:"eventId"`
						AmountMinor int64  `json:"amountMinor"`
					} `json:"credits"`
				}
				if err := json.Unmarshal(b.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				n = len(v.Credits)
				if i := bytes.Index(b.Bytes(), []byte(`"credits":`)); i >= 0 {
					t.Logf("%s: %s", name, b.Bytes()[i:min(len(b.Bytes()), i+600)])
				}
				if n == 1 && (strconv.FormatUint(uint64(v.Credits[0].JobID), 10) != id || v.Credits[0].EventID != cr.EventID) {
					t.Errorf("%s: credit %+v", name, v.Credits[0])
				}
				if n == 1 {
					sum = strconv.FormatInt(v.Credits[0].AmountMinor, 10)
				}
			default:
				recs, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				col := map[string]int{}
				for i, h := range recs[0] {
					col[h] = i
				}
				for _, r := range recs[1:] {
					if f == export.CSV && r[col["kind"]] == "credit" {
						n, sum = n+1, r[col["amount"]]
						t.Logf("%s credit row: %s", name, strings.Join(r, ","))
					}
					if f == export.FOCUS && r[col["ChargeCategory"]] == "Credit" {
						n, sum = n+1, r[col["BilledCost"]]
						t.Logf("%s credit row: %s", name, strings.Join(r, ","))
						if detail && r[col["x_JobId"]] != id {
							t.Errorf("%s: credit row of job %q, want %s", name, r[col["x_JobId"]], id)
						}
					}
				}
			}
			wantSum := cr.Amount.String()
			if f == export.JSON {
				wantSum = strconv.FormatInt(cr.Amount.Units(), 10)
			}
			if n != 1 || sum != wantSum {
				t.Errorf("%s: %d credit row(s), amount %s; want one of %s", name, n, sum, wantSum)
			}
			if f == export.FOCUS {
				m, _, err := books.View(ctx, p, acct)
				if err != nil {
					t.Fatal(err)
				}
				mb, err := export.MetadataJSON(m)
				if err != nil {
					t.Fatal(err)
				}
				exporttest.Conforms(t, name, b.Bytes(), exporttest.Options(card, mb, nil))
			}
		}
	}
}
