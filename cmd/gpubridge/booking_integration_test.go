//go:build integration

package main

// Acceptance of bookings on the real testbed (make testbed-up; source
// .testbed/env). Each test books into a scratch database of its own (so no
// run sees another's bookings), under a reservation prefix of its own
// (gpubridge-bk<n>-, so its reservations are told apart from anybody
// else's), with tenants named bk*; the Slurm accounts it needs are made
// with sacctmgr and removed. Tenants are added to the scratch store only:
// never `apply` from a scratch store (it would remove every other tenant).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/bridge/reserve/store"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

type bookingIT struct {
	t       *testing.T
	env     testbed.Env
	scratch *storetest.Scratch
	prefix  string
	slurm   *slurmrest.Client
}

// newBookingIT sets up a scratch store, a reservation prefix and a config
// file (maxWindow 30d, horizon 365d, lead time 1h) for one test.
func newBookingIT(t *testing.T, accounts ...string) *bookingIT {
	t.Helper()
	env := testbed.Require(t)
	if env.DBDSN == "" {
		t.Fatal("GPUBRIDGE_DB_DSN is unset: `source .testbed/env`")
	}
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_bkit")
	if err != nil {
		t.Fatal(err)
	}
	h := &bookingIT{t: t, env: env, scratch: sc, prefix: fmt.Sprintf("gpubridge-bk%d-", rand.IntN(1_000_000))}
	cfg := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nbookings:\n  leadTime: 1h\n  defaultPolicy:\n    maxWindow: 30d\n    maxHorizon: 365d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", cfg)
	t.Setenv("GPUBRIDGE_DB_DSN", sc.DSN)
	t.Setenv("GPUBRIDGE_BOOKINGS_PREFIX", h.prefix)
	t.Setenv("GPUBRIDGE_SLURMREST_TIMEOUT", "120s")
	t.Setenv("TZ", "")
	if h.slurm, err = slurmrest.New(ctx, slurmrest.Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, acct := range accounts {
		h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", acct) // an interrupted run's
		h.env.Exec(t, "", "sacctmgr", "-i", "add", "account", acct, "Description=bookings-test")
	}
	t.Cleanup(func() {
		for _, n := range h.reservations() {
			if err := h.slurm.DeleteReservation(ctx, n.Name); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
		for _, acct := range accounts {
			if _, err := h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", acct); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
		sc.Close()
	})
	return h
}

// cli runs gpubridge in-process, as run does (cliClosed).
func (h *bookingIT) cli(args ...string) (string, string, int) { return cliClosed(args...) }

func (h *bookingIT) ok(args ...string) string {
	h.t.Helper()
	out, errs, code := h.cli(args...)
	if code != 0 {
		h.t.Fatalf("gpubridge %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// reservations are the test's reservations in Slurm.
func (h *bookingIT) reservations() []slurmrest.Reservation {
	h.t.Helper()
	all, err := h.slurm.ListReservations(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []slurmrest.Reservation
	for _, r := range all {
		if strings.HasPrefix(r.Name, h.prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (h *bookingIT) stored() []reserve.Booking {
	h.t.Helper()
	bs, err := store.New(h.scratch.DB, h.env.Cluster).List(context.Background(), reserve.Filter{})
	if err != nil {
		h.t.Fatal(err)
	}
	return bs
}

// at is a whole minute t from now, in UTC RFC 3339.
func at(base time.Time, d time.Duration) string {
	return base.Add(d).UTC().Format(time.RFC3339)
}

// TestBookingRaceFiftyProcesses: 50 `gpubridge add booking` processes race
// for the testbed's 4 h100 over overlapping windows. Exactly the bookings
// that fit are admitted: 30 identical 1-GPU requests admit exactly 4; for
// the 20 mixed ones, a sweep over what was stored shows committed <= 4 at
// every instant, and every refused request does not fit what was stored.
func TestBookingRaceFiftyProcesses(t *testing.T) {
	h := newBookingIT(t)
	h.ok("-i", "add", "tenant", "bkrace", "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")
	h.ok("-i", "add", "tenant", "bkrace2", "users=bob", "gpus=h100:0", "booking.maxgpus=h100:64")
	bin := filepath.Join(t.TempDir(), "gpubridge")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	base := time.Now().UTC().Truncate(time.Hour).Add(40 * 24 * time.Hour)
	type req struct {
		tenant string
		n      int
		from   time.Time
		to     time.Time
	}
	var reqs []req
	for i := range 30 {
		reqs = append(reqs, req{tenant: []string{"bkrace", "bkrace2"}[i%2], n: 1, from: base, to: base.Add(6 * time.Hour)})
	}
	rng := rand.New(rand.NewPCG(11, 5))
	for i := range 20 {
		from := base.Add(24*time.Hour + time.Duration(rng.IntN(12))*time.Hour)
		reqs = append(reqs, req{tenant: []string{"bkrace", "bkrace2"}[i%2], n: 1 + rng.IntN(3), from: from, to: from.Add(time.Duration(1+rng.IntN(8)) * time.Hour)})
	}
	type result struct {
		code   int
		stdout string
		stderr string
	}
	results := make([]result, len(reqs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cmd := exec.Command(bin, "-i", "--json", "add", "booking", "tenant="+r.tenant, fmt.Sprintf("gpus=h100:%d", r.n),
				"start="+r.from.Format(time.RFC3339), "end="+r.to.Format(time.RFC3339), fmt.Sprintf("purpose=race %d", i))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			results[i] = result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
			if err != nil && results[i].code <= 0 {
				results[i].stderr += err.Error()
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	t.Logf("50 processes in %v", time.Since(t0).Round(time.Millisecond))
	stored := h.stored()
	byPurpose := map[string]reserve.Booking{}
	for _, b := range stored {
		byPurpose[b.Purpose] = b
	}
	s, inv := reserve.Settings{Prefix: h.prefix}, reserve.Inventory{Nodes: []reserve.Node{{Name: "gpu-a", GPUs: map[string]int{"h100": 4}}}}
	admittedSame := 0
	for i, r := range results {
		b, isStored := byPurpose[fmt.Sprintf("race %d", i)]
		switch r.code {
		case 0:
			var got reserve.Booking
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.ID == 0 {
				t.Errorf("request %d: exit 0 but no booking printed: %v\n%s", i, err, r.stdout)
			}
			if !isStored {
				t.Errorf("request %d admitted but not stored", i)
			}
			if i < 30 {
				admittedSame++
			}
		case 1:
			if isStored {
				t.Errorf("request %d refused but stored: %+v", i, b)
			}
			if !strings.Contains(r.stderr, "booking refused, nothing was changed") || !strings.Contains(r.stderr, "short ") {
				t.Errorf("request %d: exit 1 without a refusal:\n%s", i, r.stderr)
			}
			// Maximality: what was refused does not fit what was stored.
			q := reqs[i]
			probe := reserve.Booking{Tenant: q.tenant, Kind: reserve.KindGPU, GPUType: "h100", Count: q.n, Start: q.from, End: q.to, State: reserve.StateRequested}
			if (reserve.Admission{Settings: s, Inventory: inv, Now: time.Now()}).Check(probe, stored) == nil {
				t.Errorf("request %d (%d h100 %v..%v) was refused but fits what was stored", i, q.n, q.from, q.to)
			}
		default:
			t.Errorf("request %d: exit %d\nstdout: %s\nstderr: %s", i, r.code, r.stdout, r.stderr)
		}
	}
	if admittedSame != 4 {
		t.Errorf("%d of the 30 identical 1-GPU requests admitted; want exactly 4", admittedSame)
	}
	// The sweep: committed never exceeds the pool's 4 h100.
	var cs []reserve.Commitment
	for _, b := range stored {
		cs = append(cs, s.Commitments(b, inv)...)
	}
	cal := reserve.NewCalendar(reserve.Capacity{Resource: "gpu:h100", Total: 4}, cs)
	for _, seg := range cal.Segments(base.Add(-time.Hour), base.Add(3*24*time.Hour)) {
		if seg.Committed > 4 {
			t.Errorf("overbooked: %d h100 from %v to %v", seg.Committed, seg.From, seg.To)
		}
	}
	t.Logf("admitted %d of %d (4 of the 30 identical, %d of the 20 mixed)", len(stored), len(reqs), len(stored)-admittedSame)
}

// TestBookingProjectionOnSlurm: a booking's reservation exists in Slurm
// with the tenant's account, its TRES and its times (IGNORE_JOBS, no
// OVERLAP); back-to-back bookings both fit (in the ledger and in Slurm);
// one second of overlap is refused with the conflict, the shortfall and
// the next available window; `scontrol delete reservation` is repaired by
// the next projection; a cancelled booking's reservation goes.
func TestBookingProjectionOnSlurm(t *testing.T) {
	h := newBookingIT(t, "bkproj", "bkother")
	h.ok("-i", "add", "tenant", "bkproj", "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")
	h.ok("-i", "add", "tenant", "bkother", "users=bob", "gpus=h100:0", "booking.maxgpus=h100:64")
	base := time.Now().UTC().Truncate(time.Minute).Add(10 * time.Minute)
	var first reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("-i", "--json", "add", "booking", "tenant=bkproj", "gpus=h100:2", "start="+at(base, 0), "duration=20m", "purpose=projection test")), &first); err != nil {
		t.Fatal(err)
	}
	var second reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("-i", "--json", "add", "booking", "tenant=bkother", "gpus=h100:4", "start="+at(base, 20*time.Minute), "duration=10m")), &second); err != nil {
		t.Fatal(err)
	}
	// One second of overlap: refused, with what and when.
	_, errs, code := h.cli("-i", "add", "booking", "tenant=bkproj", "gpus=h100:3", "start="+at(base, 30*time.Minute-time.Second), "duration=10m")
	if code != 1 {
		t.Fatalf("overlap: exit %d; want 1\n%s", code, errs)
	}
	for _, w := range []string{
		fmt.Sprintf("short 3 h100 from %s to %s: 0 free of 4 (booked 4; asked 3)", at(base, 30*time.Minute-time.Second), at(base, 30*time.Minute)),
		"conflicts with 1 booking(s) of other tenants (holding up to 4 h100 at once there)",
		"next available: " + at(base, 30*time.Minute),
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("refusal:\n%s\nwant %q", errs, w)
		}
	}
	if strings.Contains(errs, "bkother") {
		t.Errorf("refusal names the other tenant:\n%s", errs)
	}
	// Projection: both reservations, exactly as booked.
	out := h.ok("project")
	if !strings.Contains(out, "2 action(s), 0 failed") {
		t.Fatalf("project:\n%s", out)
	}
	check := func(b reserve.Booking, account string, n int) {
		t.Helper()
		name := fmt.Sprintf("%s%d", h.prefix, b.ID)
		r, err := h.slurm.GetReservation(context.Background(), name)
		if err != nil {
			t.Fatalf("reservation %s: %v", name, err)
		}
		if strings.Join(r.Accounts, ",") != account || !strings.Contains(r.TRES, fmt.Sprintf("gres/gpu:h100=%d", n)) ||
			!r.Start.Equal(b.Start) || !r.End.Equal(b.End) || !contains(r.Flags, "IGNORE_JOBS") || contains(r.Flags, "OVERLAP") {
			t.Errorf("reservation %s = %+v; want accounts %s, gres/gpu:h100=%d, %v..%v, IGNORE_JOBS", name, r, account, n, b.Start, b.End)
		}
	}
	check(first, "bkproj", 2)
	check(second, "bkother", 4)
	if out := h.ok("project"); !strings.Contains(out, "0 action(s)") {
		t.Errorf("second projection is not a no-op:\n%s", out)
	}
	// Deleted out of band: repaired.
	name := fmt.Sprintf("%s%d", h.prefix, first.ID)
	h.env.Exec(t, "", "scontrol", "delete", "reservation="+name)
	if out := h.ok("project"); !strings.Contains(out, "create reservation "+name) || !strings.Contains(out, "missing in Slurm done") {
		t.Errorf("repair:\n%s", out)
	}
	check(first, "bkproj", 2)
	// Changed out of band: fixed in place.
	h.env.Exec(t, "", "scontrol", "update", "reservation="+name, "accounts=bkproj,bkother")
	if out := h.ok("project"); !strings.Contains(out, "accounts bkother,bkproj -> bkproj") && !strings.Contains(out, "accounts bkproj,bkother -> bkproj") {
		t.Errorf("drift:\n%s", out)
	}
	check(first, "bkproj", 2)
	var bs []reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", "state=scheduled")), &bs); err != nil || len(bs) != 2 {
		t.Errorf("show bookings state=scheduled: %v %+v", err, bs)
	}
	// Availability shows both.
	var av reserve.Availability
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "availability", "type=h100", "from="+at(base, 0), "to="+at(base, 30*time.Minute), "step=10m")), &av); err != nil {
		t.Fatal(err)
	}
	var booked []int
	for _, b := range av.Resources[0].Buckets {
		booked = append(booked, b.Committed)
	}
	if fmt.Sprint(booked) != "[2 2 4]" {
		t.Errorf("booked per 10m = %v; want [2 2 4]", booked)
	}
	// Cancelled: the reservation goes.
	h.ok("-i", "delete", "booking", fmt.Sprint(first.ID))
	h.ok("project")
	if _, err := h.slurm.GetReservation(context.Background(), name); err == nil {
		t.Errorf("reservation %s still there after cancel and project", name)
	}
	// An orphan (a name of ours, no booking) is reported and removed.
	orphan := h.prefix + "999999"
	h.env.Exec(t, "", "scontrol", "create", "reservation="+orphan, "accounts=bkproj", "starttime=now+2hours", "duration=10",
		"tres=gres/gpu:h100=1", "flags=ignore_jobs")
	if out := h.ok("project"); !strings.Contains(out, "remove-orphan reservation "+orphan+": no booking 999999 done") {
		t.Errorf("orphan:\n%s", out)
	}
	if _, err := h.slurm.GetReservation(context.Background(), orphan); err == nil {
		t.Errorf("orphan %s still there", orphan)
	}
}

// TestBookingCancelWhileJobsRun: Slurm refuses to delete a reservation
// while a job runs inside it (error 2055); the projector keeps it, the
// booking says why, its GPUs stay counted, and the next projection after
// the job ends deletes it.
func TestBookingCancelWhileJobsRun(t *testing.T) {
	ctx := context.Background()
	h := newBookingIT(t, "bkjobs")
	h.env.Exec(t, "", "sacctmgr", "-i", "add", "user", "erin", "account=bkjobs")
	t.Cleanup(func() {
		h.env.Run(ctx, "", nil, "scancel", "-A", "bkjobs")
		time.Sleep(2 * time.Second)
		h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", "erin", "account=bkjobs")
	})
	h.ok("-i", "add", "tenant", "bkjobs", "users=erin", "gpus=h100:0", "booking.maxgpus=h100:64")
	var b reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("-i", "--json", "add", "booking", "tenant=bkjobs", "gpus=h100:1", "start=now", "duration=30m")), &b); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s%d", h.prefix, b.ID)
	h.ok("project")
	out := h.env.Exec(t, "erin", "sbatch", "--parsable", "-o", "/dev/null", "-A", "bkjobs", "-p", "pool", "--reservation="+name,
		"--gres=gpu:h100:1", "-t", "5", "--wrap", "sleep 300")
	job := strings.TrimSpace(strings.Split(out, ";")[0])
	state := func() string {
		s, _ := h.env.Run(ctx, "", nil, "squeue", "-h", "-j", job, "-o", "%T")
		return strings.TrimSpace(s)
	}
	deadline := time.Now().Add(90 * time.Second)
	for state() != "RUNNING" {
		if time.Now().After(deadline) {
			t.Fatalf("job %s in reservation %s is %q, not running", job, name, state())
		}
		time.Sleep(time.Second)
	}
	h.ok("-i", "delete", "booking", fmt.Sprint(b.ID))
	if out := h.ok("project"); !strings.Contains(out, fmt.Sprintf("delete reservation %s (booking %d): booking cancelled waiting", name, b.ID)) || !strings.Contains(out, "2055") {
		t.Fatalf("cancel while a job runs inside:\n%s", out)
	}
	var got []reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", fmt.Sprint(b.ID))), &got); err != nil || len(got) != 1 {
		t.Fatal(err, got)
	}
	if got[0].State != reserve.StateCancelled || got[0].Held.IsZero() || !strings.Contains(got[0].Note, "(error 2055)") {
		t.Errorf("booking while the job runs: %+v", got[0])
	}
	if _, err := h.slurm.GetReservation(ctx, name); err != nil {
		t.Errorf("reservation %s gone while a job runs inside: %v", name, err)
	}
	// What Slurm still holds is not bookable.
	if _, errs, code := h.cli("-i", "add", "booking", "tenant=bkjobs", "gpus=h100:4", "start=now", "duration=10m"); code != 1 || !strings.Contains(errs, "short 1 h100") {
		t.Errorf("booking over the held GPUs: exit %d\n%s", code, errs)
	}
	h.env.Exec(t, "", "scancel", job)
	deadline = time.Now().Add(90 * time.Second)
	for {
		out := h.ok("project")
		if strings.Contains(out, fmt.Sprintf("delete reservation %s (booking %d): booking cancelled done", name, b.ID)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reservation %s not deleted after the job ended:\n%s", name, out)
		}
		time.Sleep(2 * time.Second)
	}
	var after []reserve.Booking // a fresh slice: decoding into got would keep its old held and note
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", fmt.Sprint(b.ID))), &after); err != nil || len(after) != 1 || !after[0].Held.IsZero() || after[0].Note != "" {
		t.Errorf("after delete: %v %+v", err, after)
	}
}

// TestBookingBadInputOnTestbed: every kind of bad input, with the real
// store and Slurm: a field-named error, exit != 0, nothing stored, nothing
// in Slurm.
func TestBookingBadInputOnTestbed(t *testing.T) {
	h := newBookingIT(t, "bkbad")
	h.ok("-i", "add", "tenant", "bkbad", "users=alice", "gpus=h100:0", "booking.maxgpus=h100:64")
	cases := map[string]struct {
		args []string
		tz   string
		want string
	}{
		"end before start": {args: []string{"gpus=h100:1", "start=now+2d", "end=now+1d"}, want: "end: "},
		"zero count":       {args: []string{"gpus=h100:0", "start=now+1d", "duration=1h"}, want: "gpus: count is 0"},
		"negative count":   {args: []string{"gpus=h100:-2", "start=now+1d", "duration=1h"}, want: "gpus: count -2 is negative"},
		"type lacking":     {args: []string{"gpus=a100:1", "start=now+1d", "duration=1h"}, want: `gpus: the pool has no GPUs of type "a100"`},
		"more than pool":   {args: []string{"gpus=h100:5", "start=now+1d", "duration=1h"}, want: "gpus: 5 h100 is more than the pool holds (4)"},
		"past start":       {args: []string{"gpus=h100:1", "start=now-3h", "duration=5h"}, want: "start: "},
		"beyond horizon":   {args: []string{"gpus=h100:1", "start=now+366d", "duration=1h"}, want: "duration: "},
		"window limit":     {args: []string{"gpus=h100:1", "start=now+1d", "duration=31d"}, want: "(policy maxWindow 30d)"},
		"unknown tenant":   {args: []string{"gpus=h100:1", "start=now+1d", "duration=1h", "tenant=bknobody"}, want: `tenant: tenant "bknobody": unknown tenant`},
		"no zone":          {args: []string{"gpus=h100:1", "start=2027-01-02T09:00", "duration=1h"}, want: "start: time has no zone"},
		"dst gap":          {args: []string{"gpus=h100:1", "start=2027-03-14T02:30", "duration=1h"}, tz: "America/New_York", want: `start: "2027-03-14T02:30" does not exist in America/New_York`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TZ", c.tz)
			args := append([]string{"-i", "add", "booking"}, c.args...)
			if !strings.Contains(strings.Join(c.args, " "), "tenant=") {
				args = append(args, "tenant=bkbad")
			}
			_, errs, code := h.cli(args...)
			if code == 0 {
				t.Fatalf("exit 0")
			}
			if !strings.Contains(errs, c.want) || !strings.Contains(errs, "nothing was changed") {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, errs, c.want)
			}
		})
	}
	if bs := h.stored(); len(bs) != 0 {
		t.Errorf("stored: %+v", bs)
	}
	h.ok("project")
	if rs := h.reservations(); len(rs) != 0 {
		t.Errorf("in Slurm: %+v", rs)
	}
	// And the audit log has nothing for bookings.
	var n int
	if err := h.scratch.DB.Get(&n, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'booking'`); err != nil || n != 0 {
		t.Errorf("audit rows: %d, %v", n, err)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
