package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
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

var types = []string{"h100", "1g.10gb", "3g.40gb", "a100", "l40s"}

func main() {
	bin := flag.String("bin", "", "the gpubridge binary")
	tenants := flag.Int("tenants", 100, "tenants for the route benchmark")
	lines := flag.Int("lines", 10_000, "ledger lines over those tenants")
	clients := flag.Int("clients", 50, "concurrent clients")
	dur := flag.Duration("duration", 20*time.Second, "how long the clients send")
	scaleTenants := flag.Int("scale-tenants", 1000, "tenants (x 5 types) for the /metrics scrape")
	scrapes := flag.Int("scrapes", 30, "timed /metrics scrapes")
	attack := flag.Duration("attack", time.Minute, "how long the attackers ask the largest answers (0: no attack phase)")
	attackers := flag.Int("attackers", 50, "attacking clients, each with a read token of its own")
	rssBound := flag.Int("rss-bound", 256, "the bound on serve's peak RSS in MiB under the attack")
	flag.Parse()
	err := run(*bin, *tenants, *lines, *clients, *dur, *scaleTenants, *scrapes)
	if *attack > 0 { // measured whatever the routes' goals gave
		err = errors.Join(err, runAttack(*bin, *tenants, *attackers, *attack, *rssBound))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		os.Exit(1)
	}
}

func run(bin string, nTenants, nLines, clients int, dur time.Duration, scaleTenants, scrapes int) error {
	ctx := context.Background()
	sc, err := storetest.New(ctx, os.Getenv("GPUBRIDGE_DB_DSN"), "gpubridge_apibench")
	if err != nil {
		return err
	}
	defer sc.Close()
	toks, err := seed(ctx, sc.DB, 0, nTenants, nLines)
	if err != nil {
		return err
	}
	admin, err := addToken(ctx, sc.DB, "", "bench", token.Admin)
	if err != nil {
		return err
	}
	rate := exec.Command(bin, "-i", "add", "rate", "type=h100", "tier=reserved", "price=2.10", "from=2020-01-01", "currency=EUR")
	rate.Env = append(os.Environ(), "GPUBRIDGE_DB_DSN="+sc.DSN)
	if out, err := rate.CombinedOutput(); err != nil {
		return fmt.Errorf("add rate: %v: %s", err, out)
	}
	// The route benchmark measures the routes, not the rate limits: they
	// are lifted (the attack phase keeps the defaults).
	srv, err := serve(bin, sc.DSN, "api:\n  tokenRequestsPerSecond: 100000\n  tokenRequestBurst: 100000\n")
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("data: %d tenants, %d ledger lines this month; %d clients for %s on loopback\n", nTenants, nLines, clients, dur)

	// Tenant routes: each client is one tenant's token on its own routes.
	routes := []string{"", "/quota", "/usage", "/burst", "/jobs/pending", "/bookings", "/availability?type=h100", "/slots?type=h100&count=1&duration=1h"}
	res := load(srv.addr, clients, dur, 0, func(rng *rand.Rand) (string, string, string) {
		i := rng.IntN(nTenants)
		r := routes[rng.IntN(len(routes))]
		return "/api/v1/tenants/" + name(i) + r, toks[i], "tenant" + strings.SplitN(r, "?", 2)[0]
	})
	peer := load(srv.addr, clients, dur/2, 0, func(*rand.Rand) (string, string, string) { return "/healthz", "", "healthz" })
	fmt.Printf("%-28s %8s %8s %8s %9s %6s\n", "route", "requests", "p50", "p99", "vs peer", "errors")
	worst := time.Duration(0)
	pp := pct(peer["healthz"].lat, 99)
	for _, k := range slices.Sorted(func(y func(string) bool) {
		for k := range res {
			if !y(k) {
				return
			}
		}
	}) {
		s := res[k]
		p99 := pct(s.lat, 99)
		worst = max(worst, p99)
		fmt.Printf("%-28s %8d %8s %8s %8.1fx %6d\n", k, len(s.lat), pct(s.lat, 50).Round(10*time.Microsecond), p99.Round(10*time.Microsecond), float64(p99)/float64(max(pp, 1)), s.errors)
	}
	all := merge(res)
	fmt.Printf("%-28s %8d %8s %8s %8.1fx %6d\n", "all tenant routes", len(all.lat), pct(all.lat, 50).Round(10*time.Microsecond), pct(all.lat, 99).Round(10*time.Microsecond), float64(pct(all.lat, 99))/float64(max(pp, 1)), all.errors)
	fmt.Printf("%-28s %8d %8s %8s %8s %6d   (peer: the same server's /healthz under the same load)\n", "peer /healthz", len(peer["healthz"].lat), pct(peer["healthz"].lat, 50).Round(10*time.Microsecond), pp.Round(10*time.Microsecond), "1.0x", peer["healthz"].errors)
	ok := pct(all.lat, 99) < 50*time.Millisecond && all.errors == 0

	// /metrics at scale: more tenants of 5 types, then timed scrapes.
	if _, err := seed(ctx, sc.DB, nTenants, scaleTenants, scaleTenants*len(types)); err != nil {
		return err
	}
	if err := srv.waitTenants(admin, scaleTenants); err != nil {
		return err
	}
	var scrapesLat, peerLat []time.Duration
	var size int
	for range scrapes {
		d, n, err := timed(srv.maddr, "/metrics")
		if err != nil {
			return err
		}
		scrapesLat, size = append(scrapesLat, d), n
		d, _, _ = timed(srv.addr, "/healthz")
		peerLat = append(peerLat, d)
	}
	mp99, hp99 := pct(scrapesLat, 99), pct(peerLat, 99)
	fmt.Printf("/metrics at %d tenants x %d types: %d scrapes of %d KiB, p50 %s, p99 %s (peer /healthz p99 %s: %.0fx)\n",
		scaleTenants, len(types), scrapes, size>>10, pct(scrapesLat, 50).Round(100*time.Microsecond), mp99.Round(100*time.Microsecond), hp99.Round(10*time.Microsecond), float64(mp99)/float64(max(hp99, 1)))
	okm := mp99 < 200*time.Millisecond
	fmt.Printf("goals: tenant routes p99 %s < 50ms: %v; /metrics p99 %s < 200ms: %v\n", pct(all.lat, 99).Round(10*time.Microsecond), ok, mp99.Round(100*time.Microsecond), okm)
	if !ok || !okm {
		return fmt.Errorf("a goal is missed")
	}
	return nil
}

func name(i int) string { return fmt.Sprintf("bench%04d", i) }

// seed adds tenants [from, from+n) with a quota of every type (the first
// 100 of h100 and 1g.10gb only), lines ledger lines of this month spread
// over them, and a read token each (returned by index).
func seed(ctx context.Context, db *sqlx.DB, from, n, lines int) ([]string, error) {
	var ts []tenant.Tenant
	for i := from; i < from+n; i++ {
		q := tenant.Quota{"h100": 8, "1g.10gb": 14}
		if from > 0 {
			for _, t := range types {
				q[t] = 4
			}
		}
		ts = append(ts, tenant.Tenant{Name: name(i), Description: "bench tenant", Users: []string{fmt.Sprintf("u%04d", i)}, GPUs: q, State: tenant.Active})
	}
	for chunk := range slices.Chunk(ts, 200) {
		if _, err := tenantstore.New(db).Put(ctx, "bench", chunk); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	period := month.Format("2006-01")
	span := max(now.Unix()-month.Unix()-7200, 3600)
	rng := rand.New(rand.NewPCG(uint64(from), 7))
	var b strings.Builder
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := db.ExecContext(ctx, `INSERT INTO usage_ledger (cluster, job_id, submit_time, usage_period, tier, gpu_type, revision, booked_period,
			account, user_name, gpu_count, usage_start, usage_end, gpu_seconds, written_at) VALUES `+strings.TrimSuffix(b.String(), ","), args...)
		b.Reset()
		args = args[:0]
		return err
	}
	cluster := os.Getenv("GPUBRIDGE_CLUSTER")
	for i := range lines {
		t := from + i%n
		typ := "h100"
		if from > 0 {
			typ = types[(i/n)%len(types)]
		} else if i%3 == 0 {
			typ = "1g.10gb"
		}
		start := month.Unix() + rng.Int64N(span)
		secs := 60 + rng.Int64N(3600)
		b.WriteString("(?,?,?,?,?,?,0,?,?,?,1,?,?,?,?),")
		args = append(args, cluster, uint32(1_000_000+from*100+i), start-60, period, "reserved", typ, period, name(t), "bench", start, start+secs, secs, now.Unix())
		if len(args) >= 15*1000 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, fmt.Errorf("ledger lines: %w", err)
	}
	var toks []string
	for i := from; i < from+n; i++ {
		if from > 0 {
			break
		}
		tok, err := addToken(ctx, db, name(i), "bench", token.Read)
		if err != nil {
			return nil, err
		}
		toks = append(toks, tok)
	}
	return toks, nil
}

func addToken(ctx context.Context, db *sqlx.DB, tenantName, n string, scope token.Scope) (string, error) {
	plain, h, err := token.New(nil)
	if err != nil {
		return "", err
	}
	_, err = tokenstore.New(db).Add(ctx, "bench", token.Token{Tenant: tenantName, Name: n, Scope: scope, CreatedAt: time.Now(), CreatedBy: "bench", Hash: h})
	return plain, err
}

type server struct {
	addr, maddr string // the API's, the metrics'
	cmd         *exec.Cmd
	cfg         string
}

// serve starts `gpubridge serve` on dsn, with extra configuration (YAML).
func serve(bin, dsn, extra string) (*server, error) {
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
	f, err := os.CreateTemp("", "apibench-*.yaml")
	if err != nil {
		return nil, err
	}
	f.WriteString("version: 1\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"\"\n" + extra)
	f.Close()
	cmd := exec.Command(bin, "--config", f.Name(), "serve")
	cmd.Env = append(os.Environ(), "GPUBRIDGE_DB_DSN="+dsn, "GPUBRIDGE_LISTEN="+addr, "GPUBRIDGE_METRICS_LISTEN="+maddr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{addr: addr, maddr: maddr, cmd: cmd, cfg: f.Name()}
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
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
	os.Remove(s.cfg)
}

// waitTenants waits until the API's snapshot holds n tenants more.
func (s *server) waitTenants(admin string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		r, _ := http.NewRequest("GET", "http://"+s.addr+"/api/v1/tenants", nil)
		r.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(r)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Count(string(b), `"name":"bench`) >= n {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("the snapshot did not take the scale tenants")
}

type stats struct {
	lat    []time.Duration
	errors int
	// limited counts 429 answers (not errors: the rate limits at work).
	limited int
}

// load runs clients that send next()'s requests until d has passed, each
// pausing pause between its requests.
func load(addr string, clients int, d, pause time.Duration, next func(*rand.Rand) (path, tok, key string)) map[string]*stats {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	out := map[string]*stats{}
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 99))
			local := map[string]*stats{}
			for time.Now().Before(end) {
				path, tok, key := next(rng)
				r, _ := http.NewRequest("GET", "http://"+addr+path, nil)
				if tok != "" {
					r.Header.Set("Authorization", "Bearer "+tok)
				}
				t0 := time.Now()
				resp, err := cl.Do(r)
				s := local[key]
				if s == nil {
					s = &stats{}
					local[key] = s
				}
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				s.lat = append(s.lat, time.Since(t0))
				switch {
				case err == nil && resp.StatusCode == http.StatusTooManyRequests:
					s.limited++
				case err != nil || resp.StatusCode != 200:
					s.errors++
				}
				time.Sleep(pause)
			}
			mu.Lock()
			for k, s := range local {
				o := out[k]
				if o == nil {
					o = &stats{}
					out[k] = o
				}
				o.lat, o.errors, o.limited = append(o.lat, s.lat...), o.errors+s.errors, o.limited+s.limited
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func merge(m map[string]*stats) stats {
	var s stats
	for _, x := range m {
		s.lat, s.errors, s.limited = append(s.lat, x.lat...), s.errors+x.errors, s.limited+x.limited
	}
	return s
}

func timed(addr, path string) (time.Duration, int, error) {
	t0 := time.Now()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, 0, err
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), int(n), nil
}

func pct(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
