//go:build integration

package main

// Acceptance of bookings' second stage on the real testbed: the tenant's
// reservation QOS and the job_submit guard's switch to it (tenants in
// gpubridge's real store, applied as an admin would, like tenant tests:
// names bk*, removed at the end); the booked GPUs free at the window's
// start; the daemon's projection job repairing a reservation deleted with
// scontrol and its metrics, a drained node putting a booking at risk (a
// scratch store, like the first stage's tests). Every test books under a
// reservation prefix of its own.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// bookingPrefix sets a reservation prefix of the test's own.
func bookingPrefix(t *testing.T) string {
	p := fmt.Sprintf("gpubridge-bk%d-", rand.IntN(1_000_000))
	t.Setenv("GPUBRIDGE_BOOKINGS_PREFIX", p)
	return p
}

// addBooking books with the CLI and returns the booking and its reservation's name.
func (h *tenantIT) addBooking(prefix string, args ...string) (reserve.Booking, string) {
	h.t.Helper()
	var b reserve.Booking
	if err := json.Unmarshal([]byte(h.ok(append([]string{"-i", "--json", "add", "booking"}, args...)...)), &b); err != nil {
		h.t.Fatal(err)
	}
	name := prefix + strconv.FormatInt(b.ID, 10)
	// Cancelled and projected at the end (before the tenants go: cleanups
	// run last-in first-out), once the jobs inside are cancelled.
	h.t.Cleanup(func() {
		ctx := context.Background()
		_, _ = h.env.Run(ctx, "", nil, "scancel", "--reservation="+name)
		h.cli("", "-i", "delete", "booking", strconv.FormatInt(b.ID, 10))
		for range 20 {
			if out, _, _ := h.cli("", "project"); !strings.Contains(out, "waiting") {
				break
			}
			time.Sleep(time.Second)
		}
	})
	return b, name
}

// freeH100 waits (up to 2 minutes) until gpu-a has at least need h100
// that no job and no reservation holds, and returns how many it has: jobs
// of other tests may still run there.
func (h *tenantIT) freeH100(need int) int {
	h.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		node := h.env.Exec(h.t, "", "scontrol", "show", "node", "gpu-a")
		res, _ := h.env.Run(context.Background(), "", nil, "scontrol", "show", "reservation")
		total, used, held := 0, 0, 0
		if m := regexp.MustCompile(`Gres=gpu:h100:(\d+)`).FindStringSubmatch(node); m != nil {
			total, _ = strconv.Atoi(m[1])
		}
		if m := regexp.MustCompile(`GresUsed=gpu:h100:(\d+)`).FindStringSubmatch(node); m != nil {
			used, _ = strconv.Atoi(m[1])
		}
		for _, block := range strings.Split(res, "ReservationName=") {
			if m := regexp.MustCompile(`gres/gpu:h100=(\d+)`).FindStringSubmatch(block); m != nil && strings.Contains(block, "State=ACTIVE") {
				n, _ := strconv.Atoi(m[1])
				held += n
			}
		}
		if free := total - used - held; free >= need {
			return free
		} else if time.Now().After(deadline) {
			out, _ := h.env.Run(context.Background(), "", nil, "squeue", "-w", "gpu-a", "-o", "%i %u %a %T %b")
			h.t.Fatalf("gpu-a has %d h100 free (of %d: %d used by jobs, %d held by reservations); the test needs %d. Jobs there:\n%s", free, total, used, held, need, out)
		}
		time.Sleep(2 * time.Second)
	}
}

func (h *tenantIT) squeue(id int64, format string) string {
	out, _ := h.env.Run(context.Background(), "", nil, "squeue", "-h", "-j", strconv.FormatInt(id, 10), "-o", format)
	return strings.TrimSpace(out)
}

// TestBookingReservationQOSOnTestbed: apply gives each tenant its
// reservation QOS (REQUIRED_RESERVATION, no limits) on its users'
// associations and the guard table its bookings record; with acme's quota
// full, acme's jobs naming its booking run in it (the guard switched them
// to the reservation QOS), up to the booking's size; a globex job naming
// it is refused; the reservation QOS outside a booking is refused; globex
// jobs outside cannot land on the booked GPUs.
func TestBookingReservationQOSOnTestbed(t *testing.T) {
	h := newTenantIT(t, "bkqacme", "bkqglobex")
	prefix := bookingPrefix(t)
	h.ok("-i", "add", "tenant", "bkqacme", "gpus=h100:1", "users=erin", "booking.maxgpus=h100:64")
	h.ok("-i", "add", "tenant", "bkqglobex", "gpus=h100:4", "users=frank")
	r := h.apply()
	got := mine(r.Changes, "bkqacme-resv")
	if len(got) != 1 || got[0] != "+ qos bkqacme-resv  GrpTRES=(none) Flags=REQUIRED_RESERVATION" {
		t.Errorf("apply: reservation QOS changes %v", got)
	}
	if q := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "qos", "bkqacme-resv", "format=name,flags,grptres")); q != "bkqacme-resv|RequiresReservation|" {
		t.Errorf("sacctmgr show qos: %q", q)
	}
	if a := strings.TrimSpace(h.sacctmgr("-n", "-P", "show", "assoc", "where", "account=bkqacme", "user=erin", "format=qos,defaultqos")); a != "bkqacme,bkqacme-resv,ondemand|bkqacme" {
		t.Errorf("erin's association: %q", a)
	}
	table, err := os.ReadFile(os.Getenv("GPUBRIDGE_GUARD_FILE"))
	if err != nil || !strings.Contains(string(table), "\nbookings bkqacme bkqacme bkqacme-resv "+prefix+"\n") {
		t.Fatalf("guard table (%v) lacks acme's bookings record:\n%s", err, table)
	}
	if r := h.apply(); len(mine(r.Changes, "bkqacme", "bkqacme-resv", "bkqglobex")) != 0 {
		t.Errorf("second apply is not a no-op: %v", mine(r.Changes, "bkqacme", "bkqacme-resv", "bkqglobex"))
	}

	free := h.freeH100(3) // the booking's 2 and one for acme's quota
	b, name := h.addBooking(prefix, "tenant=bkqacme", "gpus=h100:2", "start=now", "duration=30m", "purpose=quota-free")
	if out := h.ok("project"); !strings.Contains(out, "create reservation "+name) {
		t.Fatalf("project:\n%s", out)
	}
	// acme's quota (1 h100) full: one job runs, the next waits on it.
	q1 := h.mustSbatch("erin", "-A", "bkqacme", "-p", "pool", "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600")
	q2 := h.mustSbatch("erin", "-A", "bkqacme", "-p", "pool", "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600")
	h.waitCount([]int64{q1, q2}, map[string]int{"RUNNING": 1, "PENDING/QOSGrpGRES": 1}, 60*time.Second)
	// Inside the booking: runs, in the reservation QOS, up to its 2 GPUs.
	in1 := h.mustSbatch("erin", "-A", "bkqacme", "-p", "pool", "--reservation="+name, "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600")
	in2 := h.mustSbatch("erin", "-A", "bkqacme", "-p", "pool", "--reservation="+name, "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600")
	h.waitCount([]int64{in1, in2}, map[string]int{"RUNNING": 2}, 60*time.Second)
	for _, j := range []int64{in1, in2} {
		if q := h.squeue(j, "%q|%v"); q != "bkqacme-resv|"+name {
			t.Errorf("job %d inside the booking: QOS|reservation %q; want bkqacme-resv|%s", j, q, name)
		}
	}
	in3 := h.mustSbatch("erin", "-A", "bkqacme", "-p", "pool", "--reservation="+name, "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600")
	h.waitCount([]int64{in3}, map[string]int{"PENDING": 1}, 20*time.Second)
	if s := h.squeue(in3, "%r"); strings.Contains(s, "QOS") {
		t.Errorf("a third job in the 2-GPU booking waits on a QOS limit (%s), not on the booking's size", s)
	}
	if s := h.states(q2)[q2]; s != "PENDING/QOSGrpGRES" {
		t.Errorf("the quota-held job: %s", s)
	}
	// globex naming acme's booking: refused by Slurm (account not in it).
	if id, msg := h.sbatch("frank", "-A", "bkqglobex", "-p", "pool", "--reservation="+name, "--gres=gpu:h100:1", "--wrap", "sleep 5"); id != 0 || !strings.Contains(msg, "Access denied to requested reservation") {
		t.Errorf("globex job naming acme's booking: job %d, %s", id, msg)
	}
	// The reservation QOS outside a booking: refused by Slurm (2066).
	if id, msg := h.sbatch("erin", "-A", "bkqacme", "-q", "bkqacme-resv", "-p", "pool", "--gres=gpu:h100:1", "--wrap", "sleep 5"); id != 0 || !strings.Contains(msg, "Invalid qos specification") {
		t.Errorf("reservation QOS without a reservation: job %d, %s", id, msg)
	}
	// Outside: of the free h100, q1 holds one and the booking two. With in2
	// (and in3) cancelled the booking has one idle GPU, which globex's jobs
	// cannot use: of free-3+1 of them, free-3 run (on what is left outside)
	// and one waits.
	h.env.Exec(t, "", "scancel", strconv.FormatInt(in3, 10), strconv.FormatInt(in2, 10))
	var outside []int64
	for range free - 3 + 1 {
		outside = append(outside, h.mustSbatch("frank", "-A", "bkqglobex", "-p", "pool", "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 600"))
	}
	want := map[string]int{"RUNNING": free - 3, "PENDING": 1}
	h.waitCount(outside, want, 60*time.Second)
	time.Sleep(12 * time.Second) // two more scheduler passes
	h.waitCount(outside, want, 5*time.Second)
	// The booking is shown active with its reservation.
	var bs []reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", strconv.FormatInt(b.ID, 10))), &bs); err != nil || len(bs) != 1 ||
		bs[0].State != reserve.StateActive || bs[0].Held.Reservation != name {
		t.Errorf("show bookings: %v %+v", err, bs)
	}
}

// TestBookingGPUsFreeAtWindowStart: a booking made while another tenant's
// jobs run on the node, starting in 90 s: its reservation is created at
// once (IGNORE_JOBS, on the idle GPUs), jobs submitted then whose time
// limits reach into the window do not start on the booked GPUs, and at the
// start the tenant's job takes them, beyond its quota.
func TestBookingGPUsFreeAtWindowStart(t *testing.T) {
	h := newTenantIT(t, "bkwacme", "bkwglobex")
	prefix := bookingPrefix(t)
	h.ok("-i", "add", "tenant", "bkwacme", "gpus=h100:1", "users=erin", "booking.maxgpus=h100:64")
	h.ok("-i", "add", "tenant", "bkwglobex", "gpus=h100:4", "users=frank")
	h.apply()
	// Other jobs fill all but two of the free h100.
	free := h.freeH100(3)
	var busy []int64
	for range free - 2 {
		busy = append(busy, h.mustSbatch("frank", "-A", "bkwglobex", "-p", "pool", "--gres=gpu:h100:1", "-t", "15", "--wrap", "sleep 900"))
	}
	h.waitCount(busy, map[string]int{"RUNNING": free - 2}, 60*time.Second)
	start := time.Now().UTC().Truncate(time.Second).Add(90 * time.Second)
	b, name := h.addBooking(prefix, "tenant=bkwacme", "gpus=h100:2", "start="+start.Format(time.RFC3339), "duration=10m")
	if out := h.ok("project"); !strings.Contains(out, "create reservation "+name+" (booking "+strconv.FormatInt(b.ID, 10)+"): missing in Slurm done") {
		t.Fatalf("project:\n%s", out)
	}
	res := h.env.Exec(t, "", "scontrol", "show", "reservation", name)
	for _, w := range []string{"Accounts=bkwacme", "gres/gpu:h100=2", "Flags=IGNORE_JOBS", "StartTime=" + start.Format("2006-01-02T15:04:05")} {
		if !strings.Contains(res, w) {
			t.Errorf("reservation lacks %q:\n%s", w, res)
		}
	}
	// Jobs into the window may not take the booked GPUs.
	var late []int64
	for range 2 {
		late = append(late, h.mustSbatch("frank", "-A", "bkwglobex", "-p", "pool", "--gres=gpu:h100:1", "-t", "15", "--wrap", "sleep 900"))
	}
	inside := h.mustSbatch("erin", "-A", "bkwacme", "-p", "pool", "--reservation="+name, "--gres=gpu:h100:2", "-t", "5", "--wrap", "sleep 300")
	time.Sleep(12 * time.Second)
	h.waitCount(late, map[string]int{"PENDING": 2}, 5*time.Second)
	h.waitCount([]int64{inside}, map[string]int{"PENDING": 1}, 5*time.Second)
	// At the start the booked GPUs are free: the tenant's job starts at once.
	time.Sleep(time.Until(start))
	st := h.waitCount([]int64{inside}, map[string]int{"RUNNING": 1}, 30*time.Second)
	t.Logf("job %d inside the booking: %v at %s (window start %s)", inside, st, time.Now().UTC().Format(time.TimeOnly), start.Format(time.TimeOnly))
	if q := h.squeue(inside, "%q"); q != "bkwacme-resv" {
		t.Errorf("inside job's QOS %q", q)
	}
	h.waitCount(late, map[string]int{"PENDING": 2}, 5*time.Second)
}

// TestBookingDaemonRepairsAndReports: `gpubridge serve` with only the
// bookings job (every 2 s) creates a due booking's reservation, recreates
// it after `scontrol delete reservation`, and exports the pool per type;
// a drained node under the booking makes it at risk (no other node has
// h100 to move it to), in the metric and in `show bookings`, until the
// node is back.
func TestBookingDaemonRepairsAndReports(t *testing.T) {
	ctx := context.Background()
	h := newBookingIT(t, "bkdaemon")
	h.ok("-i", "add", "tenant", "bkdaemon", "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")
	var b reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("-i", "--json", "add", "booking", "tenant=bkdaemon", "gpus=h100:2", "start=now", "duration=20m")), &b); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s%d", h.prefix, b.ID)
	cfg := filepath.Join(t.TempDir(), "serve.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nbookings:\n  leadTime: 1h\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"@every 2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, log := serveInBackground(t, ctx, cfg)
	metric := func(series string) float64 { return metricValue(addr, series) }
	exists := func() bool { _, err := h.slurm.GetReservation(ctx, name); return err == nil }
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v\nserve's log:\n%s", what, d, log)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitFor("the daemon creates the reservation", 30*time.Second, exists)
	waitFor("the booked metric", 10*time.Second, func() bool { return metric(`gpubridge_bookings_booked{resource="gpu:h100",type="h100"}`) == 2 })
	if c := metric(`gpubridge_bookings_capacity{resource="gpu:h100",type="h100"}`); c < 2 || c > 4 {
		t.Errorf("h100 capacity metric %v", c)
	}
	h.env.Exec(t, "", "scontrol", "delete", "reservation="+name)
	t0 := time.Now()
	waitFor("the daemon recreates the deleted reservation", 15*time.Second, exists)
	t.Logf("reservation %s recreated %.1f s after scontrol delete", name, time.Since(t0).Seconds())
	if !strings.Contains(log.String(), "missing in Slurm") {
		t.Errorf("serve's log does not say why it created the reservation:\n%s", log)
	}

	// A drained node under the booking: at risk, and nothing to move to.
	h.env.Exec(t, "", "scontrol", "update", "nodename=gpu-a", "state=drain", "reason=bk-daemon-test")
	t.Cleanup(func() { h.env.Run(ctx, "", nil, "scontrol", "update", "nodename=gpu-a", "state=resume") })
	waitFor("the at-risk metric", 15*time.Second, func() bool { return metric(`gpubridge_bookings_at_risk{resource="gpu:h100",type="h100"}`) == 1 })
	var bs []reserve.Booking
	// slurmctld moved the reservation off gpu-a, to a node without h100.
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", "state=at-risk")), &bs); err != nil || len(bs) != 1 ||
		!strings.Contains(bs[0].Note, "Slurm holds 0 of its 2 h100") || !strings.Contains(bs[0].Note, "cannot move: 0 healthy h100 free") {
		t.Errorf("show bookings state=at-risk: %v %+v", err, bs)
	}
	if out := h.ok("show", "bookings", "format=id,state,note"); !strings.Contains(out, "at-risk") {
		t.Errorf("show bookings:\n%s", out)
	}
	if r, err := h.slurm.GetReservation(ctx, name); err != nil || strings.Contains(r.TRES, "gpu") {
		t.Errorf("while gpu-a is drained, %s: %+v, %v (the projector must keep it: recreating it would fail)", name, r, err)
	}
	h.env.Exec(t, "", "scontrol", "update", "nodename=gpu-a", "state=resume")
	waitFor("the at-risk metric back to 0", 15*time.Second, func() bool { return metric(`gpubridge_bookings_at_risk{resource="gpu:h100",type="h100"}`) == 0 })
	if r, err := h.slurm.GetReservation(ctx, name); err != nil || !strings.Contains(r.TRES, "gres/gpu:h100=2") {
		t.Errorf("after gpu-a is back, %s: %+v, %v; want it recreated with its 2 h100", name, r, err)
	}
	if st := metric(`gpubridge_bookings{state="active"}`); st != 1 {
		t.Errorf("active bookings metric %v", st)
	}
}
