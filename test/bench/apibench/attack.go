package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// victims is how many clients of other tenants measure their latency
// during the attack, each pausing victimPause between requests.
const (
	victims     = 5
	victimPause = 50 * time.Millisecond
)

// runAttack is issue 25's load test: attackers clients, each with a read
// token of its own tenant, ask the largest answers the API allows (the
// availability of every type at the most steps, from a new start each
// time so that no answer comes from the cache; bookings and pending jobs
// at limit=1000; 100 slots) for d, against a serve with the default
// limits, while victims clients of other tenants use their ordinary
// routes. It prints serve's RSS (start, peak) and the victims' p99, and
// fails when the peak passes boundMiB or the p99 100 ms.
func runAttack(bin string, nTenants, attackers int, d time.Duration, boundMiB int) error {
	ctx := context.Background()
	sc, err := storetest.New(ctx, os.Getenv("GPUBRIDGE_DB_DSN"), "gpubridge_apiattack")
	if err != nil {
		return err
	}
	defer sc.Close()
	n := max(nTenants, attackers+victims*4)
	toks, err := seed(ctx, sc.DB, 0, n, 10_000)
	if err != nil {
		return err
	}
	admin, err := addToken(ctx, sc.DB, "", "bench", token.Admin)
	if err != nil {
		return err
	}
	srv, err := serve(bin, sc.DSN, "")
	if err != nil {
		return err
	}
	defer srv.stop()
	ntypes, err := poolTypes(srv.addr, admin)
	if err != nil {
		return err
	}
	steps := min(1000, 4000/max(ntypes, 1))
	start, _ := rss(srv.cmd.Process.Pid, "VmRSS")
	peak := sampleRSS(srv.cmd.Process.Pid)
	fmt.Printf("attack: %d clients with read tokens of %d tenants for %s (availability of %d types x %d steps, lists at limit=1000, 100 slots), %d other tenants' clients (one request per %s each)\n",
		attackers, attackers, d, ntypes, steps, victims, victimPause)
	var wg sync.WaitGroup
	var att, vic map[string]*stats
	wg.Go(func() {
		att = load(srv.addr, attackers, d, 0, func(rng *rand.Rand) (string, string, string) {
			i := rng.IntN(attackers)
			base := "/api/v1/tenants/" + name(i)
			switch k := rng.IntN(4); k {
			case 0, 1:
				from := time.Now().UTC().Add(time.Duration(rng.IntN(500_000)) * time.Minute).Truncate(time.Minute)
				return fmt.Sprintf("%s/availability?from=%s&to=%s&step=1h", base, from.Format(time.RFC3339), from.Add(time.Duration(steps)*time.Hour).Format(time.RFC3339)), toks[i], "availability"
			case 2:
				return base + []string{"/bookings?limit=1000", "/jobs/pending?limit=1000"}[rng.IntN(2)], toks[i], "lists"
			default:
				return base + "/slots?type=h100&count=1&duration=1h&limit=100", toks[i], "slots"
			}
		})
	})
	wg.Go(func() {
		routes := []string{"", "/quota", "/usage", "/burst", "/bookings"}
		vic = load(srv.addr, victims, d, victimPause, func(rng *rand.Rand) (string, string, string) {
			i := attackers + rng.IntN(n-attackers)
			return "/api/v1/tenants/" + name(i) + routes[rng.IntN(len(routes))], toks[i], "other tenants"
		})
	})
	wg.Wait()
	hwm, _ := rss(srv.cmd.Process.Pid, "VmHWM")
	top := max(peak.Load(), hwm)
	a, v := merge(att), merge(vic)
	fmt.Printf("%-22s %8s %8s %8s %6s %6s\n", "clients", "requests", "p50", "p99", "429", "errors")
	for _, k := range []string{"availability", "lists", "slots"} {
		if s := att[k]; s != nil {
			fmt.Printf("%-22s %8d %8s %8s %6d %6d\n", "attack: "+k, len(s.lat), pct(s.lat, 50).Round(10*time.Microsecond), pct(s.lat, 99).Round(10*time.Microsecond), s.limited, s.errors)
		}
	}
	fmt.Printf("%-22s %8d %8s %8s %6d %6d\n", "attack: all", len(a.lat), pct(a.lat, 50).Round(10*time.Microsecond), pct(a.lat, 99).Round(10*time.Microsecond), a.limited, a.errors)
	vp99 := pct(v.lat, 99)
	fmt.Printf("%-22s %8d %8s %8s %6d %6d\n", "other tenants", len(v.lat), pct(v.lat, 50).Round(10*time.Microsecond), vp99.Round(10*time.Microsecond), v.limited, v.errors)
	fmt.Printf("serve RSS: %d MiB at the start, peak %d MiB (bound %d MiB)\n", start>>20, top>>20, boundMiB)
	okRSS, okP99 := top>>20 < int64(boundMiB), vp99 < 100*time.Millisecond && v.errors == 0 && v.limited == 0
	fmt.Printf("goals: RSS peak %d MiB < %d MiB: %v; other tenants' p99 %s < 100ms without errors: %v\n", top>>20, boundMiB, okRSS, vp99.Round(10*time.Microsecond), okP99)
	if !okRSS || !okP99 {
		return fmt.Errorf("a goal of the attack is missed")
	}
	return nil
}

// poolTypes counts the pool's GPU types (GET /api/v1/pool).
func poolTypes(addr, admin string) (int, error) {
	r, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/pool", nil)
	r.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var p struct{ Types []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return 0, fmt.Errorf("pool: %w", err)
	}
	return len(p.Types), nil
}

// sampleRSS polls pid's resident set every 50 ms while it runs; the
// largest is in the value returned.
func sampleRSS(pid int) *atomic.Int64 {
	var top atomic.Int64
	go func() {
		for {
			v, err := rss(pid, "VmRSS")
			if err != nil {
				return
			}
			if v > top.Load() {
				top.Store(v)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return &top
}

// rss reads a field of /proc/pid/status (VmRSS, VmHWM) in bytes.
func rss(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", f.Name(), field)
}
