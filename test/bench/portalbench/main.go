package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
)

func main() {
	bin := flag.String("bin", "", "the gpubridge binary")
	tenants := flag.Int("tenants", 1000, "tenants")
	bookings := flag.Int("bookings", 10000, "bookings (over the last 30 and the next 60 days)")
	lines := flag.Int("lines", 100000, "ledger lines this month")
	sessions := flag.Int("sessions", 50, "concurrent sessions")
	dur := flag.Duration("duration", 20*time.Second, "how long the sessions load the pages")
	goal := flag.Duration("goal", 50*time.Millisecond, "the p99 goal of every page")
	think := flag.Duration("think", time.Second, "a session's mean pause between pages (0: none)")
	flag.Parse()
	if err := run(*bin, *tenants, *bookings, *lines, *sessions, *dur, *think, *goal); err != nil {
		fmt.Fprintln(os.Stderr, "portalbench:", err)
		os.Exit(1)
	}
}

func name(i int) string { return fmt.Sprintf("pbench%04d", i) }

var pages = []string{"/", "/jobs", "/nodes", "/usage"}

func run(bin string, nTenants, nBookings, nLines, sessions int, dur, think, goal time.Duration) error {
	ctx := context.Background()
	sc, err := storetest.New(ctx, os.Getenv("GPUBRIDGE_DB_DSN"), "gpubridge_portalbench")
	if err != nil {
		return err
	}
	defer sc.Close()
	t0 := time.Now()
	if err := seedTenants(ctx, sc.DB, nTenants); err != nil {
		return err
	}
	if err := seedLedger(ctx, sc.DB, nTenants, nLines); err != nil {
		return err
	}
	if err := seedBookings(ctx, sc.DB, nTenants, nBookings); err != nil {
		return err
	}
	var toks []string
	for i := range sessions {
		tok, err := addToken(ctx, sc.DB, name(i*(nTenants/sessions)), "bench")
		if err != nil {
			return err
		}
		toks = append(toks, tok)
	}
	rate := exec.Command(bin, "-i", "add", "rate", "type=h100", "tier=reserved", "price=2.10", "from=2020-01-01", "currency=EUR")
	rate.Env = append(os.Environ(), "GPUBRIDGE_DB_DSN="+sc.DSN)
	if out, err := rate.CombinedOutput(); err != nil {
		return fmt.Errorf("add rate: %v: %s", err, out)
	}
	fmt.Printf("setup: %d tenants, %d bookings, %d ledger lines this month in %s\n", nTenants, nBookings, nLines, time.Since(t0).Round(100*time.Millisecond))
	srv, err := serve(bin, sc.DSN)
	if err != nil {
		return err
	}
	defer srv.stop()

	// Each session signs in once (the portal's cookie), then loads pages.
	clients := make([]*http.Client, sessions)
	tenantOf := make([]string, sessions)
	for i, tok := range toks {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		r, _ := http.NewRequest("POST", "http://"+srv.addr+"/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := c.Do(r)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return fmt.Errorf("sign-in of session %d: %d", i, resp.StatusCode)
		}
		clients[i], tenantOf[i] = c, name(i*(nTenants/sessions))
	}
	// Warm: each session loads each page once (the snapshot, the caches).
	for i, c := range clients {
		for _, p := range pages {
			if _, _, code, err := get(c, srv.addr, p+"?tenant="+tenantOf[i]); err != nil || code != 200 {
				return fmt.Errorf("warm-up %s of %s: %d %v", p, tenantOf[i], code, err)
			}
		}
	}
	// Alone: one session, one page at a time (each page's own time, with
	// no queue in front of it).
	fmt.Println("server time: the handler's own time, from the server's Server-Timing header (app;dur=):")
	fmt.Println("  from the request handed to the handler to its status sent (the page is rendered before);")
	fmt.Println("  without the kernel's and client's queues and the transfer. round trip: as the client sees it.")
	fmt.Printf("%-8s %11s %11s %11s   (one request at a time, 20 each)\n", "alone", "server p50", "server max", "trip p50")
	for _, p := range pages {
		var ds, ss []time.Duration
		for range 20 {
			d, st, code, err := get(clients[0], srv.addr, p+"?tenant="+tenantOf[0])
			if err != nil || code != 200 {
				return fmt.Errorf("%s alone: %d %v", p, code, err)
			}
			ds, ss = append(ds, d), append(ss, st)
		}
		fmt.Printf("%-8s %11s %11s %11s\n", p, rd(pct(ss, 50)), rd(pct(ss, 100)), rd(pct(ds, 50)))
	}
	// The goal's run: each session loads a page, reads it for a while
	// (think, uniform in [think/2, 3*think/2]) and loads the next, as a
	// person does. Then the same sessions with no pause (a saturation
	// figure: on a few shared cores its latency is sessions/throughput,
	// whatever the page costs).
	ok := load(clients, tenantOf, srv.addr, sessions, dur, think, goal)
	if think > 0 {
		fmt.Println()
		load(clients, tenantOf, srv.addr, sessions, dur, 0, goal)
	}
	if !ok {
		return fmt.Errorf("the goal is missed")
	}
	return nil
}

// get loads path: the round trip, the server's own time (Server-Timing)
// and the status.
func get(c *http.Client, addr, path string) (time.Duration, time.Duration, int, error) {
	start := time.Now()
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, 0, 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	trip := time.Since(start)
	st, err := serverTime(resp.Header.Get("Server-Timing"))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return trip, st, resp.StatusCode, nil
}

// serverTime reads "app;dur=MS" of a Server-Timing header.
func serverTime(h string) (time.Duration, error) {
	for m := range strings.SplitSeq(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(m), ";")
		if name != "app" {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				ms, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, fmt.Errorf("Server-Timing %q: %w", h, err)
				}
				return time.Duration(ms * float64(time.Millisecond)), nil
			}
		}
	}
	return 0, fmt.Errorf("no Server-Timing app;dur= in the answer (%q)", h)
}

func rd(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

func pct(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// seedTenants adds n tenants, each with a user and a quota of h100.
func seedTenants(ctx context.Context, db *sqlx.DB, n int) error {
	var ts []tenant.Tenant
	for i := range n {
		ts = append(ts, tenant.Tenant{Name: name(i), Description: "portal bench tenant", Users: []string{fmt.Sprintf("pu%04d", i)}, GPUs: tenant.Quota{"h100": 4}, State: tenant.Active})
	}
	for chunk := range slices.Chunk(ts, 200) {
		if _, err := tenantstore.New(db).Put(ctx, "bench", chunk); err != nil {
			return err
		}
	}
	return nil
}

// bulk inserts rows of cols values each, 1,000 rows a statement.
type bulk struct {
	db     *sqlx.DB
	head   string
	cols   int
	b      strings.Builder
	args   []any
	rowsIn int
}

func (b *bulk) add(ctx context.Context, vals ...any) error {
	b.b.WriteString("(" + strings.TrimSuffix(strings.Repeat("?,", b.cols), ",") + "),")
	b.args = append(b.args, vals...)
	if b.rowsIn++; b.rowsIn == 1000 {
		return b.flush(ctx)
	}
	return nil
}

func (b *bulk) flush(ctx context.Context) error {
	if b.rowsIn == 0 {
		return nil
	}
	_, err := b.db.ExecContext(ctx, b.head+strings.TrimSuffix(b.b.String(), ","), b.args...)
	b.b.Reset()
	b.args, b.rowsIn = b.args[:0], 0
	return err
}

// seedLedger adds lines usage lines of this month over the tenants.
func seedLedger(ctx context.Context, db *sqlx.DB, n, lines int) error {
	now := time.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	period := month.Format("2006-01")
	span := max(now.Unix()-month.Unix()-7200, 3600)
	rng := rand.New(rand.NewPCG(1, 7))
	cluster := os.Getenv("GPUBRIDGE_CLUSTER")
	b := &bulk{db: db, cols: 15, head: `INSERT INTO usage_ledger (cluster, job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period,
		account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, written_at) VALUES `}
	for i := range lines {
		start := month.Unix() + rng.Int64N(span)
		secs := 60 + rng.Int64N(3600)
		if err := b.add(ctx, cluster, uint32(2_000_000+i), start-60, period, "reserved", "h100", 0, period, name(i%n), "bench", 1, start, start+secs, secs, now.Unix()); err != nil {
			return fmt.Errorf("ledger lines: %w", err)
		}
	}
	if err := b.flush(ctx); err != nil {
		return fmt.Errorf("ledger lines: %w", err)
	}
	return nil
}

// seedBookings adds count bookings of one h100 over the tenants, from 30
// days ago to 60 days ahead: those over are ended, the others requested.
func seedBookings(ctx context.Context, db *sqlx.DB, n, count int) error {
	now := time.Now().UTC().Truncate(time.Hour)
	rng := rand.New(rand.NewPCG(2, 9))
	cluster := os.Getenv("GPUBRIDGE_CLUSTER")
	b := &bulk{db: db, cols: 12, head: `INSERT INTO bookings (cluster, tenant, kind, resource, count, start_at, end_at, purpose, state, created_by, created_at, updated_at) VALUES `}
	for i := range count {
		start := now.Add(time.Duration(rng.IntN(90*24)-30*24) * time.Hour)
		end := start.Add(time.Duration(1+rng.IntN(12)) * time.Hour)
		state := "requested"
		if end.Before(now) {
			state = "ended"
		}
		if err := b.add(ctx, cluster, name(i%n), "gpu", "gpu:h100", 1, start, end, "bench", state, "bench", now, now); err != nil {
			return fmt.Errorf("bookings: %w", err)
		}
	}
	if err := b.flush(ctx); err != nil {
		return fmt.Errorf("bookings: %w", err)
	}
	return nil
}

func addToken(ctx context.Context, db *sqlx.DB, tenantName, n string) (string, error) {
	plain, h, err := token.New(nil)
	if err != nil {
		return "", err
	}
	_, err = tokenstore.New(db).Add(ctx, "bench", token.Token{Tenant: tenantName, Name: n, Scope: token.Book, CreatedAt: time.Now(), CreatedBy: "bench", Hash: h})
	return plain, err
}

type server struct {
	addr string
	cmd  *exec.Cmd
	cfg  string
}

// serve starts `gpubridge serve` on dsn with the request rates lifted (the
// bench measures the pages, not the limits).
func serve(bin, dsn string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr, maddr := ln.Addr().String(), mln.Addr().String()
	ln.Close()
	mln.Close()
	f, err := os.CreateTemp("", "portalbench-*.yaml")
	if err != nil {
		return nil, err
	}
	f.WriteString("version: 1\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"\"\n" +
		"api:\n  tokenRequestsPerSecond: 100000\n  tokenRequestBurst: 100000\n  addressRequestsPerSecond: 100000\n  addressRequestBurst: 100000\n")
	f.Close()
	cmd := exec.Command(bin, "--config", f.Name(), "serve")
	cmd.Env = append(os.Environ(), "GPUBRIDGE_DB_DSN="+dsn, "GPUBRIDGE_LISTEN="+addr, "GPUBRIDGE_METRICS_LISTEN="+maddr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{addr: addr, cmd: cmd, cfg: f.Name()}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("serve not ready within 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	_ = s.cmd.Wait()
	os.Remove(s.cfg)
}

// load runs the sessions for dur and prints each page's figures; true
// when every page's server-time p99 is under goal without errors.
func load(clients []*http.Client, tenantOf []string, addr string, sessions int, dur, think, goal time.Duration) bool {
	fmt.Printf("load: %d sessions for %s on loopback, think time %s (machine: load %s)\n", sessions, dur, think, loadavg())
	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	srvLat := map[string][]time.Duration{}
	errs := map[string]int{}
	var wg sync.WaitGroup
	end := time.Now().Add(dur)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			for time.Now().Before(end) {
				p := pages[rng.IntN(len(pages))]
				d, st, code, err := get(c, addr, p+"?tenant="+tenantOf[i])
				mu.Lock()
				if err != nil || code != 200 {
					errs[p]++
				} else {
					lat[p] = append(lat[p], d)
					srvLat[p] = append(srvLat[p], st)
				}
				mu.Unlock()
				if think > 0 {
					time.Sleep(think/2 + time.Duration(rng.Int64N(int64(think))))
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("machine after the load: load %s\n", loadavg())
	fmt.Printf("%-8s %8s %11s %11s %9s %9s %9s %6s\n", "page", "requests", "server p50", "server p99", "p99/goal", "trip p50", "trip p99", "errors")
	ok := true
	for _, p := range pages {
		p99 := pct(srvLat[p], 99)
		fmt.Printf("%-8s %8d %11s %11s %8.2fx %9s %9s %6d\n", p, len(lat[p]), rd(pct(srvLat[p], 50)), rd(p99), float64(p99)/float64(goal),
			rd(pct(lat[p], 50)), rd(pct(lat[p], 99)), errs[p])
		ok = ok && p99 < goal && errs[p] == 0 && len(lat[p]) > 0
	}
	fmt.Printf("goal: every page's server-time p99 < %s with %d sessions (think %s): %v\n", goal, sessions, think, ok)
	return ok
}
