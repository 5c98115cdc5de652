//go:build integration

package main

// Issue 25 items 11 and 12, through the tenant API and the CLI at once, on
// the testbed (gpubridge serve in-process on a scratch database): 40 and
// 200 clients modify, cancel and book, on the same and on different
// bookings.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// raceResult is one request's answer: ok, and for a modify the end it set.
type raceResult struct {
	booking int64
	op      string // modify, cancel, add
	cli     bool
	ok      bool
	end     time.Time
}

// TestBookingRaceAPIAndCLI: every request is answered within its timeout
// (no 5xx, no CLI failure other than a refusal), and for each booking the
// audit log has one row per successful change (a cancel at most once, each
// modify's end as it answered), the stored booking being the last of them.
func TestBookingRaceAPIAndCLI(t *testing.T) {
	h := newAPIIT(t)
	// The policy that binds the tenant, shown (its config: maxGPUs h100:2,
	// maxWindow 30d, maxHorizon 365d).
	out := h.ok("show", "booking-policy", "tenant="+itB)
	for limit, value := range map[string]string{"maxGPUs": "h100=2", "maxWindow": "30d", "maxHorizon": "365d"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == limit && f[1] == value {
				found = true
			}
		}
		if !found {
			t.Errorf("show booking-policy: no %s %s in\n%s", limit, value, out)
		}
	}
	won := map[string]int{} // successes of both rounds, by kind
	for _, clients := range []int{40, 200} {
		t.Run(fmt.Sprint(clients), func(t *testing.T) {
			ids, starts := h.raceBookings(t, clients, clients/5)
			results := make([]raceResult, clients)
			var wg sync.WaitGroup
			began := time.Now()
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k := rand.IntN(len(ids))
					results[i] = h.raceOp(t, i, ids[k], starts[k])
				}()
			}
			wg.Wait()
			t.Logf("%d clients (API and CLI) answered in %s", clients, time.Since(began))
			for _, r := range results {
				if r.ok {
					won[fmt.Sprintf("%s via CLI %t", r.op, r.cli)]++
				}
			}
			h.checkRace(t, ids, results)
		})
	}
	// Which request of a booking wins is the race's; over both rounds each
	// kind of change succeeded, through each front end.
	t.Logf("successes: %v", won)
	for _, k := range []string{"modify via CLI false", "cancel via CLI false", "add via CLI false", "modify via CLI true", "cancel via CLI true"} {
		if won[k] == 0 {
			t.Errorf("no %s succeeded (%v): the race did not happen", k, won)
		}
	}
}

// raceBookings adds n bookings of h100:1 for an hour, each on its own day
// from day first on.
func (h *apiIT) raceBookings(t *testing.T, first, n int) ([]int64, []time.Time) {
	t.Helper()
	base := time.Now().UTC().Add(time.Duration(first) * 24 * time.Hour).Truncate(24 * time.Hour)
	var ids []int64
	var starts []time.Time
	for i := range n {
		start := base.Add(time.Duration(i) * 24 * time.Hour)
		code, body := h.do("POST", "/api/v1/tenants/"+itA+"/bookings", h.tokens["a-book"],
			fmt.Sprintf(`{"gpus":"h100:1","start":"%s","duration":"1h"}`, start.Format(time.RFC3339)))
		var b struct{ ID int64 }
		if err := json.Unmarshal([]byte(body), &b); code != 201 || err != nil {
			t.Fatalf("book %d: %d %s", i, code, body)
		}
		ids, starts = append(ids, b.ID), append(starts, start)
	}
	return ids, starts
}

// raceOp is client i's request on booking id: through the API (four in
// five) or the CLI, a modify to a duration of its own (so that no two
// modifies set the same end), a cancel, or a new booking on its day.
func (h *apiIT) raceOp(t *testing.T, i int, id int64, start time.Time) raceResult {
	d := 2*time.Hour + time.Duration(i)*time.Minute
	path := fmt.Sprintf("/api/v1/tenants/%s/bookings/%d", itA, id)
	r := raceResult{booking: id, end: start.Add(d)}
	viaCLI := i%5 == 4
	r.cli = viaCLI && i%3 != 2
	switch i % 3 {
	case 0:
		r.op = "modify"
		if viaCLI {
			r.ok = h.raceCLI(t, "-i", "modify", "booking", fmt.Sprint(id), "set", fmt.Sprintf("duration=%dm", int(d.Minutes())))
		} else {
			r.ok = h.raceAPI(t, "PATCH", path, fmt.Sprintf(`{"duration":"%dm"}`, int(d.Minutes())))
		}
	case 1:
		r.op = "cancel"
		if viaCLI {
			r.ok = h.raceCLI(t, "-i", "delete", "booking", fmt.Sprint(id))
		} else {
			r.ok = h.raceAPI(t, "DELETE", path, "")
		}
	default:
		r.op = "add"
		r.ok = h.raceAPI(t, "POST", "/api/v1/tenants/"+itA+"/bookings", fmt.Sprintf(`{"gpus":"h100:1","start":"%s","duration":"30m"}`, start.Format(time.RFC3339)))
	}
	return r
}

// raceAPI sends one request: true on 2xx; a refusal (400, 409) is false;
// anything else (a timeout, 5xx) fails the test.
func (h *apiIT) raceAPI(t *testing.T, method, path, body string) bool {
	code, out := h.do(method, path, h.tokens["a-book"], body)
	switch {
	case code == 200 || code == 201:
		return true
	case code == 400 || code == 409:
		return false
	}
	t.Errorf("%s %s %s: %d %s", method, path, body, code, out)
	return false
}

// raceCLI runs gpubridge in-process with a 90 s deadline: true on exit 0;
// a refusal is false; any other failure fails the test.
func (h *apiIT) raceCLI(t *testing.T, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := runContext(ctx, args, strings.NewReader(""), &out, &errb)
	if code == 0 {
		return true
	}
	msg := errb.String()
	for _, refusal := range []string{"changed since you read it", "is cancelled", "does not fit", "more than its policy allows"} {
		if strings.Contains(msg, refusal) {
			return false
		}
	}
	t.Errorf("gpubridge %s: exit %d: %s", strings.Join(args, " "), code, msg)
	return false
}

// checkRace compares, per booking, the successful answers with the audit
// log and the stored row.
func (h *apiIT) checkRace(t *testing.T, ids []int64, results []raceResult) {
	db, err := sqldb.Open(context.Background(), h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range ids {
		var rows []struct {
			Action string `db:"action"`
			After  string `db:"after_json"`
		}
		if err := db.Select(&rows, `SELECT action, after_json FROM audit_log WHERE object_kind = 'booking' AND object_name = ? AND action IN ('modify', 'cancel') ORDER BY id`, fmt.Sprint(id)); err != nil {
			t.Fatal(err)
		}
		audited := map[string]int{}
		var last struct {
			State string
			End   time.Time
		}
		for _, r := range rows {
			if err := json.Unmarshal([]byte(r.After), &last); err != nil {
				t.Fatal(err)
			}
			audited[r.Action+" "+last.End.Format(time.RFC3339)]++
		}
		answered := map[string]int{}
		for _, r := range results {
			if r.booking != id || !r.ok || r.op == "add" {
				continue
			}
			if r.op == "cancel" {
				answered["cancel"]++
			} else {
				answered["modify "+r.end.Format(time.RFC3339)]++
			}
		}
		cancels := 0
		for k, n := range audited {
			if strings.HasPrefix(k, "cancel ") {
				cancels += n
				delete(audited, k)
			}
		}
		if cancels > 0 {
			audited["cancel"] = cancels
		}
		if fmt.Sprint(audited) != fmt.Sprint(answered) || cancels > 1 {
			t.Errorf("booking %d: audited changes %v; answered successes %v", id, audited, answered)
		}
		code, body := h.do("GET", fmt.Sprintf("/api/v1/tenants/%s/bookings/%d", itA, id), h.tokens["a-book"], "")
		var got struct {
			State string
			End   time.Time
		}
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
			t.Fatalf("get booking %d: %d %s", id, code, body)
		}
		if len(rows) > 0 && (!got.End.Equal(last.End) || (got.State == "cancelled") != (last.State == "cancelled")) {
			t.Errorf("booking %d: stored %s ending %v; the last stored change (%s) was %s ending %v", id, got.State, got.End, rows[len(rows)-1].Action, last.State, last.End)
		}
	}
}
