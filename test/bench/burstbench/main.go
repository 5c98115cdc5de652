// Command burstbench measures one burst-controller cycle.
//
// Synthetic mode (default): a stand-in slurmrestd (httptest) serves
// slurmrestd's real job JSON (testdata/pending-job.json, recorded from the
// testbed's slurmrestd 26.05, v0.0.44) replicated into -pending pending jobs
// and -running running jobs of -tenants tenants; the real slurmrest client,
// adapter and controller run one cycle against it. It prints wall time, the
// REST calls the cycle made (reads, writes), moves, and the process's peak
// RSS.
//
// Live mode (-live): against the testbed's real slurmrestd, it times the
// list call and a dry-run cycle with whatever jobs are queued (the bench
// script submits held jobs first).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "embed"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
)

//go:embed testdata/pending-job.json
var jobTemplate []byte

func main() {
	os.Exit(run())
}

func run() int {
	pending := flag.Int("pending", 10000, "synthetic: pending jobs")
	running := flag.Int("running", 2000, "synthetic: running jobs")
	tenants := flag.Int("tenants", 100, "synthetic: tenants")
	heldPct := flag.Int("held-pct", 30, "synthetic: percent of pending jobs held by their tenant quota")
	live := flag.Bool("live", false, "measure against the testbed's slurmrestd (GPUBRIDGE_SLURMREST_URL, GPUBRIDGE_SLURMREST_JWT_KEY)")
	reps := flag.Int("reps", 3, "repetitions (the median is printed)")
	submit := flag.Int("submit", 0, "live: first submit this many held jobs through slurmrestd")
	account := flag.String("account", "b5bench", "live: account of the submitted jobs")
	user := flag.String("user", "alice", "live: user of the submitted jobs")
	flag.Parse()
	ctx := context.Background()
	if *live {
		return liveBench(ctx, *reps, *submit, *account, *user)
	}
	return syntheticBench(ctx, *pending, *running, *tenants, *heldPct, *reps)
}

// fakeRest is a stand-in slurmrestd serving a fixed jobs body.
type fakeRest struct {
	body   []byte
	writes atomic.Int64
}

func (f *fakeRest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/ping/"):
		fmt.Fprint(w, `{"pings":[{"hostname":"ctl","pinged":"UP","responding":true,"latency":100,"mode":"primary","primary":true}],"meta":{"slurm":{"cluster":"bench"}},"errors":[],"warnings":[]}`)
	case strings.HasSuffix(r.URL.Path, "/jobs/") && r.Method == http.MethodGet:
		w.Write(f.body)
	case strings.Contains(r.URL.Path, "/job/") && r.Method == http.MethodPost:
		f.writes.Add(1)
		fmt.Fprint(w, `{"results":null,"errors":[],"warnings":[]}`)
	default:
		http.NotFound(w, r)
	}
}

// jobsBody replicates the recorded job into pending and running jobs.
func jobsBody(pending, running, tenants, heldPct int) ([]byte, error) {
	var tmpl map[string]any
	if err := json.Unmarshal(jobTemplate, &tmpl); err != nil {
		return nil, err
	}
	reasons := []string{"Priority", "Resources", "Dependency", "JobHeldUser"}
	jobs := make([]map[string]any, 0, pending+running)
	num := func(n int64) map[string]any { return map[string]any{"set": true, "infinite": false, "number": n} }
	now := time.Now().Unix()
	for i := range pending + running {
		j := make(map[string]any, len(tmpl))
		for k, v := range tmpl {
			j[k] = v
		}
		t := fmt.Sprintf("t%03d", i%tenants)
		j["job_id"] = i + 1
		j["account"], j["qos"], j["partition"] = t, t, "pool"
		j["user_name"] = "u" + strconv.Itoa(i%50)
		j["priority"] = num(int64(1000 - i%1000))
		j["submit_time"] = num(now - int64(i))
		j["admin_comment"] = ""
		if i < pending {
			j["job_state"] = []string{"PENDING"}
			if i%100 < heldPct {
				j["state_reason"] = "QOSGrpGRES"
			} else {
				j["state_reason"] = reasons[i%len(reasons)]
			}
		} else {
			j["job_state"] = []string{"RUNNING"}
			j["state_reason"] = "None"
			j["tres_alloc_str"] = "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1,gres/gpu:h100=1"
			j["start_time"] = num(now - 60)
		}
		jobs = append(jobs, j)
	}
	return json.Marshal(map[string]any{"jobs": jobs, "errors": []any{}, "warnings": []any{}})
}

type memStore struct{}

func (memStore) RecordMoves(_ context.Context, _ time.Time, ms []burst.MoveRecord) (int, error) {
	return len(ms), nil
}
func (memStore) SyncRefusals(_ context.Context, _ time.Time, rs []burst.Refusal) ([]burst.Refusal, error) {
	return rs, nil
}

type tenantList []burst.Tenant

func (t tenantList) BurstTenants(context.Context) ([]burst.Tenant, error) { return t, nil }

type zeroSpend struct{}

func (zeroSpend) OnDemandSpend(context.Context, time.Time, time.Time) (map[string]int64, error) {
	return map[string]int64{}, nil
}

type rates struct{}

func (rates) OnDemandRates(context.Context, time.Time) (burst.Rates, error) {
	return burst.Rates{PerGPUHour: map[string]int64{"h100": 6_000_000_000}, Minor: 2}, nil
}

func keyFile() (string, error) {
	f, err := os.CreateTemp("", "burstbench-jwt-*")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.WriteString("0123456789abcdef0123456789abcdef")
	return f.Name(), err
}

func syntheticBench(ctx context.Context, pending, running, ntenants, heldPct, reps int) int {
	body, err := jobsBody(pending, running, ntenants, heldPct)
	if err != nil {
		fmt.Fprintln(os.Stderr, "burstbench:", err)
		return 1
	}
	fake := &fakeRest{body: body}
	size := len(body)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	key, err := keyFile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "burstbench:", err)
		return 1
	}
	defer os.Remove(key)
	var ts tenantList
	for i := range ntenants {
		b := int64(1_000_000_00)
		n := fmt.Sprintf("t%03d", i)
		ts = append(ts, burst.Tenant{Name: n, QOS: n, Policy: burst.Policy{Enabled: true, MaxGPUs: 1000, Budget: &b}})
	}
	body = nil
	runtime.GC()
	debug.FreeOSMemory()
	before := rss("VmRSS:")
	resetPeakRSS()
	var walls, lists, decides []time.Duration
	var last burst.Result
	var reads, writes int64
	for range reps {
		cl, err := slurmrest.New(ctx, slurmrest.Options{URL: srv.URL, JWTKeyFile: key, APIVersion: slurmrest.V44, Timeout: time.Minute})
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		base := cl.Stats()
		jobs := &slurmjobs.Jobs{Client: cl}
		c := &burst.Controller{
			Config: burst.Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"},
			Jobs:   jobs, Mover: jobs, Tenants: ts, Spend: zeroSpend{}, Rates: rates{}, Store: memStore{},
			Logger: slog.New(slog.DiscardHandler),
		}
		// The phases alone: one list (REST read, decode, convert), one decision.
		t0 := time.Now()
		js, err := jobs.ListJobs(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: list:", err)
			return 1
		}
		t1 := time.Now()
		burst.Decide(burst.Input{Now: t1, Config: c.Config, Tenants: ts, Jobs: js, Rates: burst.Rates{PerGPUHour: map[string]int64{"h100": 6_000_000_000}, Minor: 2}})
		lists, decides = append(lists, t1.Sub(t0)), append(decides, time.Since(t1))
		js = nil
		base = cl.Stats()
		start := time.Now()
		res, err := c.Cycle(ctx)
		walls = append(walls, time.Since(start))
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: cycle:", err)
			return 1
		}
		st := cl.Stats()
		reads, writes = st.Reads-base.Reads, st.Writes-base.Writes
		last = res
	}
	held := 0
	for _, p := range last.Plan.Refusals {
		if p.Reason == burst.Deferred {
			held++
		}
	}
	fmt.Printf("synthetic cycle: pending=%d running=%d tenants=%d body=%.1fMB\n", pending, running, ntenants, float64(size)/1e6)
	fmt.Printf("  wall (median of %d)=%s  rest_reads=%d rest_writes=%d  moved=%d deferred=%d refused=%d ignored=%v\n",
		reps, median(walls).Round(time.Millisecond), reads, writes, len(last.Moved), held, len(last.Plan.Refusals), last.Plan.Ignored)
	fmt.Printf("  phases (median): list+decode=%s decide=%s moves=%d writes\n", median(lists).Round(time.Millisecond), median(decides).Round(time.Millisecond), writes)
	fmt.Printf("  rss before cycles=%s peak during cycles=%s (this process; the stand-in server's %.0fMB body included)\n", before, rss("VmHWM:"), float64(size)/1e6)
	return 0
}

func liveBench(ctx context.Context, reps, submit int, account, user string) int {
	url, key := os.Getenv("GPUBRIDGE_SLURMREST_URL"), os.Getenv("GPUBRIDGE_SLURMREST_JWT_KEY")
	if url == "" || key == "" {
		fmt.Fprintln(os.Stderr, "burstbench -live: source .testbed/env first")
		return 2
	}
	cl, err := slurmrest.New(ctx, slurmrest.Options{URL: url, JWTKeyFile: key, User: "root", Timeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, "burstbench:", err)
		return 1
	}
	if submit > 0 {
		start := time.Now()
		if err := submitHeld(ctx, cl.As(user), submit, account); err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: submit:", err)
			return 1
		}
		fmt.Printf("  submitted %d held jobs through slurmrestd in %s\n", submit, time.Since(start).Round(100*time.Millisecond))
	}
	jobs := &slurmjobs.Jobs{Client: cl}
	var walls []time.Duration
	var n, pend int
	base := cl.Stats()
	for range reps {
		start := time.Now()
		js, err := jobs.ListJobs(ctx)
		walls = append(walls, time.Since(start))
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		n, pend = len(js), 0
		for _, j := range js {
			if j.Pending() {
				pend++
			}
		}
	}
	st := cl.Stats()
	fmt.Printf("live list (testbed slurmrestd %s): jobs=%d pending=%d  wall (median of %d)=%s  rest_reads=%d (one per list)\n",
		cl.APIVersion(), n, pend, reps, median(walls).Round(time.Millisecond), st.Reads-base.Reads)
	fmt.Printf("  peak_rss=%s\n", rss("VmHWM:"))
	return 0
}

// submitHeld submits n held 1-GPU jobs, 8 at a time.
func submitHeld(ctx context.Context, cl *slurmrest.Client, n int, account string) error {
	ids := make(chan int, n)
	for i := range n {
		ids <- i
	}
	close(ids)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range ids {
				if _, err := cl.SubmitJob(ctx, slurmrest.JobSpec{Name: "b5bench", Account: account, TRESPerNode: "gres/gpu:h100:1",
					Script: "#!/bin/sh\nsleep 1\n", TimeLimitMinutes: 5, Hold: true, StdOut: "/dev/null"}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range 8 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// rss reads a line of /proc/self/status (VmRSS:, VmHWM:).
func rss(key string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return fmt.Sprintf("%.0fMiB (Go heap sys)", float64(m.Sys)/(1<<20))
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key) {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return fmt.Sprintf("%.0fMiB", float64(kb)/1024)
		}
	}
	return "?"
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
