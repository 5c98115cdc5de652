package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/slurmjobs"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
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

// fakeRest is a stand-in slurmrestd serving a fixed jobs body. It keeps
// slurmctld's last job change (lastUpdate): a GET with update_time after it
// gets no jobs, as from slurmctld, and a move is a change.
type fakeRest struct {
	body       []byte
	lastUpdate atomic.Int64
	writes     atomic.Int64
}

func (f *fakeRest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/ping/"):
		fmt.Fprint(w, `{"pings":[{"hostname":"ctl","pinged":"UP","responding":true,"latency":100,"mode":"primary","primary":true}],"meta":{"slurm":{"cluster":"bench"}},"errors":[],"warnings":[]}`)
	case strings.HasSuffix(r.URL.Path, "/jobs/") && r.Method == http.MethodGet:
		if ut, err := strconv.ParseInt(r.URL.Query().Get("update_time"), 10, 64); err == nil && ut-1 >= f.lastUpdate.Load() {
			fmt.Fprintf(w, `{"jobs":[],"last_update":{"set":true,"infinite":false,"number":0},"errors":[],"warnings":[{"description":"No job changes since update_time[%d]","source":"op_handler_jobs"}]}`, ut)
			return
		}
		// slurmctld's pack time closes the body (jobsBody leaves it open).
		tail := fmt.Sprintf(`,"last_update":{"set":true,"infinite":false,"number":%d}}`, time.Now().Unix())
		w.Header().Set("Content-Length", strconv.Itoa(len(f.body)+len(tail)))
		w.Write(f.body)
		io.WriteString(w, tail)
	case strings.Contains(r.URL.Path, "/job/") && r.Method == http.MethodPost:
		f.writes.Add(1)
		f.lastUpdate.Store(time.Now().Unix())
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
	b, err := json.Marshal(map[string]any{"jobs": jobs, "errors": []any{}, "warnings": []any{}})
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil // without its closing brace: the server adds last_update
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
	return burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 6_000_000_000}, Minor: 2}, nil
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
	fake.lastUpdate.Store(time.Now().Unix() - 1)
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
		b := money.MustParse("1000000.00")
		n := fmt.Sprintf("t%03d", i)
		ts = append(ts, burst.Tenant{Name: n, QOS: n, Policy: burst.Policy{Enabled: true, MaxGPUs: 1000, Budget: &b}})
	}
	cfg := burst.Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}
	rts := burst.Rates{PerGPUHour: map[string]pricing.Price{"h100": 6_000_000_000}, Minor: 2}
	body = nil
	runtime.GC()
	debug.FreeOSMemory()
	before := rssMiB("VmRSS:")
	resetPeakRSS()
	var fetches, decodes, converts, decides, ours, quiet, walls []time.Duration
	var quietBytes int
	var last burst.Result
	var reads, writes int64
	for range reps {
		cl, err := slurmrest.New(ctx, slurmrest.Options{URL: srv.URL, JWTKeyFile: key, APIVersion: slurmrest.V44, Timeout: time.Minute})
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		// update_time has a resolution of one second: a read in the second
		// of the last move sees that move as a change.
		time.Sleep(time.Until(time.Unix(fake.lastUpdate.Load()+1, 0)))
		// A full read (the first of an adapter), then the decision.
		jobs := &slurmjobs.Jobs{Client: cl}
		js, err := jobs.ListJobs(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: list:", err)
			return 1
		}
		r := jobs.LastRead()
		t1 := time.Now()
		burst.Decide(burst.Input{Now: t1, Config: cfg, Tenants: ts, Jobs: js, Rates: rts})
		d := time.Since(t1)
		fetches, decodes, converts, decides = append(fetches, r.Fetch), append(decodes, r.Decode), append(converts, r.Convert), append(decides, d)
		ours = append(ours, r.Decode+r.Convert+d)
		// Nothing changed since: the read is reused.
		t2 := time.Now()
		js, err = jobs.ListJobs(ctx)
		if err != nil || !jobs.LastRead().Unchanged {
			fmt.Fprintln(os.Stderr, "burstbench: second read: not unchanged:", err)
			return 1
		}
		burst.Decide(burst.Input{Now: time.Now(), Config: cfg, Tenants: ts, Jobs: js, Rates: rts})
		quiet, quietBytes = append(quiet, time.Since(t2)), jobs.LastRead().Bytes
		js = nil
		// One whole cycle of a fresh controller: full read, decision, moves.
		fresh := &slurmjobs.Jobs{Client: cl}
		c := &burst.Controller{
			Config: cfg, Jobs: fresh, Mover: fresh, Tenants: ts, Spend: zeroSpend{}, Rates: rates{}, Store: memStore{},
			Logger: slog.New(slog.DiscardHandler),
		}
		base := cl.Stats()
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
	peak := rssMiB("VmHWM:")

	// The peer: the same read through ListJobs, which decodes the body twice.
	runtime.GC()
	debug.FreeOSMemory()
	peerBefore := rssMiB("VmRSS:")
	resetPeakRSS()
	var peer []time.Duration
	for range reps {
		cl, err := slurmrest.New(ctx, slurmrest.Options{URL: srv.URL, JWTKeyFile: key, APIVersion: slurmrest.V44, Timeout: time.Minute})
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		start := time.Now()
		if _, err := cl.ListJobs(ctx, slurmrest.JobFilter{States: []string{"PENDING", "RUNNING"}}); err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: ListJobs:", err)
			return 1
		}
		peer = append(peer, time.Since(start))
	}
	peerPeak := rssMiB("VmHWM:")

	held := 0
	for _, p := range last.Plan.Refusals {
		if p.Reason == burst.Deferred {
			held++
		}
	}
	read := median(fetches) + median(decodes) + median(converts)
	fmt.Printf("synthetic cycle: pending=%d running=%d tenants=%d body=%.1fMB (medians of %d)\n", pending, running, ntenants, float64(size)/1e6, reps)
	fmt.Printf("  full read: stand-in serving+transfer=%s  decode (one pass)=%s  convert=%s;  decide=%s\n",
		ms(median(fetches)), ms(median(decodes)), ms(median(converts)), ms(median(decides)))
	fmt.Printf("  ours (decode+convert+decide)=%s  (goal <= 300ms)\n", ms(median(ours)))
	fmt.Printf("  read when nothing changed (update_time): %d bytes, with the decision %s\n", quietBytes, ms(median(quiet)))
	fmt.Printf("  cycle wall=%s  rest_reads=%d rest_writes=%d  moved=%d deferred=%d refused=%d ignored=%v\n",
		ms(median(walls)), reads, writes, len(last.Moved), held, len(last.Plan.Refusals), last.Plan.Ignored)
	fmt.Printf("  peak RSS beyond the stand-in's body: %.0fMiB (before %.0fMiB, peak %.0fMiB; goal <= 128MiB)\n", peak-before, before, peak)
	fmt.Printf("  peer, ListJobs (decodes twice): read=%s, peak RSS beyond the body %.0fMiB;  ratio ours/peer: read %.2f, RSS %.2f\n",
		ms(median(peer)), peerPeak-peerBefore, float64(read)/float64(median(peer)), (peak-before)/max(peerPeak-peerBefore, 1))
	return 0
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

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
	cfg := burst.Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}
	ts := tenantList{{Name: account, QOS: account, Policy: burst.Policy{Enabled: true, MaxGPUs: 1000}}}
	var fetches, ours, quiet, states, one []time.Duration
	var n, pend, bytes, quietBytes, stateBytes, nstates int
	var quietOK bool
	var someID int64
	base := cl.Stats()
	for range reps {
		// A full read (a fresh adapter), then the decision.
		jobs := &slurmjobs.Jobs{Client: cl}
		js, err := jobs.ListJobs(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		r := jobs.LastRead()
		t0 := time.Now()
		burst.Decide(burst.Input{Now: t0, Config: cfg, Tenants: ts, Jobs: js, Rates: rates{}.must()})
		ours = append(ours, r.Decode+r.Convert+time.Since(t0))
		fetches, bytes = append(fetches, r.Fetch), r.Bytes
		n, pend = len(js), 0
		for _, j := range js {
			if j.Pending() {
				pend++
				someID = j.ID
			}
		}
		// The same adapter again: update_time (unchanged unless another
		// user changed a job in between).
		t1 := time.Now()
		if _, err := jobs.ListJobs(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "burstbench:", err)
			return 1
		}
		quiet, quietBytes, quietOK = append(quiet, time.Since(t1)), jobs.LastRead().Bytes, jobs.LastRead().Unchanged
		// The lighter states read, and one job's details.
		t2 := time.Now()
		st, err := cl.ListJobStates(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "burstbench: jobs/state:", err)
			return 1
		}
		states, nstates = append(states, time.Since(t2)), len(st)
		stateBytes = 0
		for _, x := range st {
			stateBytes += len(x.ID) + 8*len(x.State)
		}
		if someID > 0 {
			t3 := time.Now()
			if _, err := cl.GetJob(ctx, someID); err != nil {
				fmt.Fprintln(os.Stderr, "burstbench: get job:", err)
				return 1
			}
			one = append(one, time.Since(t3))
		}
	}
	st := cl.Stats()
	fmt.Printf("live cycle (testbed slurmrestd %s): jobs=%d pending=%d body=%.1fMB (medians of %d; %d reads in all)\n",
		cl.APIVersion(), n, pend, float64(bytes)/1e6, reps, st.Reads-base.Reads)
	fmt.Printf("  full read: slurmrestd (request to last byte)=%s  ours (decode+convert+decide)=%s  ratio ours/slurmrestd=%.3f\n",
		ms(median(fetches)), ms(median(ours)), float64(median(ours))/float64(median(fetches)))
	fmt.Printf("  GET jobs/?update_time=last: %s, %d bytes, unchanged=%v (no job changed in between: the read is reused)\n", ms(median(quiet)), quietBytes, quietOK)
	if len(one) > 0 {
		fmt.Printf("  GET jobs/state/: %s for %d jobs (ids and states only, ~%dkB: no reason, so no way to find the quota-held ones);"+
			" GET job/{id}: %s per job, %s for the %d pending ones\n",
			ms(median(states)), nstates, stateBytes/1000, ms(median(one)), ms(time.Duration(pend)*median(one)), pend)
	}
	fmt.Printf("  peak_rss=%.0fMiB\n", rssMiB("VmHWM:"))
	return 0
}

func (rates) must() burst.Rates {
	r, _ := rates{}.OnDemandRates(context.Background(), time.Time{})
	return r
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

// rssMiB reads a line of /proc/self/status (VmRSS:, VmHWM:), in MiB; the
// Go runtime's view where there is no /proc.
func rssMiB(key string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.Sys) / (1 << 20)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key) {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return float64(kb) / 1024
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
