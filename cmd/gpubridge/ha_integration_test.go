//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// replica is one `gpubridge serve` process.
type replica struct {
	name string
	addr string
	cmd  *exec.Cmd
	log  *os.File
}

func (r *replica) leader(h *apiIT) (float64, bool) {
	code, body := r.get("/metrics")
	if code != 200 {
		return 0, false
	}
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, "gpubridge_leader "); ok {
			return map[string]float64{"0": 0, "1": 1}[strings.TrimSpace(v)], true
		}
	}
	return 0, false
}

// get gets path from the replica (/metrics from its metrics listener).
func (r *replica) get(path string) (int, string) {
	addr := r.addr
	if path == "/metrics" {
		addr = metricsAddr(addr)
	}
	resp, err := apiClient.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestHAFailover: two `serve` replicas on one database; one leads and
// runs the writers (here the booking projection, every second), both serve
// the API and take bookings. kill -9 of the leader, ten times in a row:
// the other takes over within 2 x the 2 s lock poll interval, every
// booking made through either replica (also during the failover) is stored
// once and projected to exactly one Slurm reservation, created once.
func TestHAFailover(t *testing.T) {
	h := newAPIIT(t)
	h.stop() // the in-process serve of newAPIIT; the replicas are processes
	y := "version: 1\nserver:\n  shutdownTimeout: 15s\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"@every 1s\"\n" +
		"api:\n  refreshInterval: 2s\nbookings:\n  leadTime: 30h\n  defaultPolicy:\n    maxWindow: 30d\n    maxHorizon: 365d\n"
	if err := os.WriteFile(h.config, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("GPUBRIDGE_IT_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "gpubridge")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	var all []*replica
	start := func(name string) *replica {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		f, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config", h.config, "serve")
		cmd.Env = append(os.Environ(), "GPUBRIDGE_LISTEN="+addr, withMetricsListen(t, addr), "GPUBRIDGE_DB_DSN="+h.dsn, "GPUBRIDGE_BOOKINGS_PREFIX="+h.prefix)
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := &replica{name: name, addr: addr, cmd: cmd, log: f}
		all = append(all, r)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if code, _ := r.get("/readyz"); code == 200 {
				return r
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(f.Name())
				t.Fatalf("replica %s not ready within 30 s:\n%s", name, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Cleanup(func() {
		for _, r := range all {
			if r.cmd.ProcessState == nil {
				r.cmd.Process.Signal(syscall.SIGTERM)
				r.cmd.Wait()
			}
			r.log.Close()
		}
	})
	logs := func() string {
		var b strings.Builder
		for _, r := range all {
			s, _ := os.ReadFile(r.log.Name())
			fmt.Fprintf(&b, "--- %s (%s)\n%s", r.name, r.addr, s)
		}
		return b.String()
	}
	// whoLeads waits until exactly one of rs reports gpubridge_leader 1.
	whoLeads := func(limit time.Duration, rs ...*replica) (*replica, time.Duration) {
		t.Helper()
		t0 := time.Now()
		for {
			var leaders []*replica
			for _, r := range rs {
				if v, ok := r.leader(h); ok && v == 1 {
					leaders = append(leaders, r)
				}
			}
			if len(leaders) == 1 {
				return leaders[0], time.Since(t0)
			}
			if len(leaders) > 1 {
				t.Fatalf("%d replicas lead at once\n%s", len(leaders), logs())
			}
			if time.Since(t0) > limit {
				t.Fatalf("no leader within %s\n%s", limit, logs())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	base := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Hour)
	var booked []int64
	book := func(r *replica) {
		t.Helper()
		i := len(booked)
		s := base.Add(time.Duration(i) * 10 * time.Minute).Format(time.RFC3339)
		body := fmt.Sprintf(`{"gpus":"h100:1","start":"%s","duration":"5m","purpose":"ha %d via %s"}`, s, i, r.name)
		req := strings.NewReader(body)
		resp, err := apiClient.Do(mustRequest(t, "POST", "http://"+r.addr+"/api/v1/tenants/"+itA+"/bookings", h.tokens["a-book"], req))
		if err != nil {
			t.Fatalf("book via %s: %v", r.name, err)
		}
		defer resp.Body.Close()
		var b struct{ ID int64 }
		if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || resp.StatusCode != 201 || b.ID == 0 {
			t.Fatalf("book via %s: %d %v\n%s", r.name, resp.StatusCode, err, logs())
		}
		booked = append(booked, b.ID)
	}
	projected := func() map[int64]int {
		out, _ := h.env.Run(context.Background(), "", nil, "scontrol", "show", "reservation", "-o")
		got := map[int64]int{}
		for _, line := range strings.Split(out, "\n") {
			name, ok := strings.CutPrefix(line, "ReservationName="+h.prefix)
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, " ")
			var id int64
			fmt.Sscan(name, &id)
			got[id]++
		}
		return got
	}
	waitProjected := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := projected()
			missing := 0
			for _, id := range booked {
				if got[id] != 1 {
					missing++
				}
			}
			if missing == 0 && len(got) == len(booked) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of %d bookings not projected once (Slurm holds %v)\n%s", what, missing, len(booked), got, logs())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	a, b := start("r0"), start("r1")
	leader, _ := whoLeads(10*time.Second, a, b)
	book(a)
	book(b)
	waitProjected("before the first failover")
	const poll = 2 * time.Second // the daemon's leader campaign interval
	var worst time.Duration
	for i := range 10 {
		standby := a
		if leader == a {
			standby = b
		}
		if err := leader.cmd.Process.Kill(); err != nil { // kill -9
			t.Fatal(err)
		}
		killed := time.Now()
		leader.cmd.Wait()
		book(standby) // the API keeps working on the other replica meanwhile
		next, _ := whoLeads(10*time.Second, standby)
		took := time.Since(killed)
		worst = max(worst, took)
		t.Logf("failover %d: %s killed, %s leads after %s", i+1, leader.name, next.name, took.Round(time.Millisecond))
		if took > 2*poll {
			t.Errorf("failover %d took %s; want at most %s (2 x the lock poll interval)", i+1, took, 2*poll)
		}
		book(next)
		waitProjected(fmt.Sprintf("after failover %d", i+1))
		// The killed one comes back as the standby.
		back := start(fmt.Sprintf("r%d", i+2))
		if v, _ := back.leader(h); v != 0 {
			t.Errorf("the restarted replica %s leads while %s holds the lock", back.name, next.name)
		}
		a, b, leader = next, back, next
	}
	t.Logf("10 failovers, the slowest in %s; %d bookings", worst.Round(time.Millisecond), len(booked))
	// Stored once each; created once each in the audit log; one project
	// row that gave each its reservation.
	db, err := sqldb.Open(context.Background(), h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Get(&n, `SELECT COUNT(*) FROM bookings`); err != nil || n != len(booked) {
		t.Errorf("%d bookings stored (%v); %d were made", n, err, len(booked))
	}
	var dup []string
	if err := db.Select(&dup, `SELECT object_name FROM audit_log WHERE object_kind = 'booking' AND action = 'create' GROUP BY object_name HAVING COUNT(*) > 1`); err != nil || len(dup) > 0 {
		t.Errorf("bookings created twice: %v %v", dup, err)
	}
	var held []struct {
		Name string `db:"object_name"`
		N    int    `db:"n"`
	}
	if err := db.Select(&held, `SELECT object_name, COUNT(*) AS n FROM audit_log WHERE object_kind = 'booking' AND action = 'project'
		AND JSON_VALUE(after_json, '$.held.reservation') IS NOT NULL AND JSON_VALUE(before_json, '$.held.reservation') IS NULL GROUP BY object_name`); err != nil {
		t.Fatal(err)
	}
	if len(held) != len(booked) {
		t.Errorf("%d bookings got their reservation in the audit log; want %d", len(held), len(booked))
	}
	for _, x := range held {
		if x.N != 1 {
			t.Errorf("booking %s got its reservation %d times", x.Name, x.N)
		}
	}
}

func mustRequest(t *testing.T, method, url, tok string, body *strings.Reader) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}
