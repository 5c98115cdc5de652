//go:build integration

package main

// Acceptance of the tenant API on the testbed: `gpubridge serve` in-process
// on a scratch database, tenants m4syn-apia and m4syn-apib (Slurm accounts
// made with sacctmgr and removed; the tenants live in the scratch store
// only), bookings under a reservation prefix of the test's own, synthetic
// job records in slurm_acct_db for July 2019 (ids from synth.TestIDs +
// 4,000,000; removed).

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

const (
	itA, itB = "m4syn-apia", "m4syn-apib"
	// bSecret marks everything of tenant B: none of it may reach A.
	bSecret = "bsecret7"
)

type apiIT struct {
	*serveIT
	prefix string
	tokens map[string]string // role -> token
}

func newAPIIT(t *testing.T) *apiIT {
	t.Helper()
	h := &apiIT{serveIT: newServeIT(t, "api", nil), prefix: fmt.Sprintf("gpubridge-api%d-", rand.IntN(1_000_000)), tokens: map[string]string{}}
	y := "version: 1\nserver:\n  shutdownTimeout: 15s\nschedules:\n  reconcile: \"\"\n  burst: \"\"\n  ingest: \"\"\n  closePeriod: \"\"\n  bookings: \"\"\n" +
		// The request rates are lifted: the race test sends 200 requests at once through one token.
		"api:\n  refreshInterval: 1s\n  authFailureBurst: 1000\n  authFailuresPerMinute: 1000\n  tokenRequestsPerSecond: 10000\n  tokenRequestBurst: 10000\n" +
		"bookings:\n  leadTime: 1h\n  defaultPolicy:\n    maxGPUs: {h100: 2}\n    maxWindow: 30d\n    maxHorizon: 365d\n"
	if err := os.WriteFile(h.config, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUBRIDGE_CONFIG", h.config)
	t.Setenv("GPUBRIDGE_BOOKINGS_PREFIX", h.prefix)
	t.Setenv("TZ", "")
	ctx := context.Background()
	for acct, user := range map[string]string{itA: "erin", itB: "bob"} {
		h.env.Run(ctx, "", nil, "scancel", "-A", acct)
		h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", user, "account="+acct)
		h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", acct)
		h.env.Exec(t, "", "sacctmgr", "-i", "add", "account", acct, "Description=api-test")
		h.env.Exec(t, "", "sacctmgr", "-i", "add", "user", user, "account="+acct)
	}
	t.Cleanup(func() {
		for _, acct := range []string{itA, itB} {
			h.env.Run(ctx, "", nil, "scancel", "-A", acct)
		}
		time.Sleep(2 * time.Second)
		out, _ := h.env.Run(ctx, "", nil, "scontrol", "show", "reservation", "-o")
		for _, line := range strings.Split(out, "\n") {
			if name, ok := strings.CutPrefix(line, "ReservationName="); ok {
				if name, _, _ = strings.Cut(name, " "); strings.HasPrefix(name, h.prefix) {
					h.env.Run(ctx, "", nil, "scontrol", "delete", "reservation="+name)
				}
			}
		}
		for acct, user := range map[string]string{itA: "erin", itB: "bob"} {
			h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "user", user, "account="+acct)
			if _, err := h.env.Run(ctx, "", nil, "sacctmgr", "-i", "delete", "account", acct); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
	})
	h.start("--init")
	h.ok("-i", "add", "tenant", itA, "users=erin", "gpus=h100:2,1g.10gb:2", "description=tenant A")
	h.ok("-i", "add", "tenant", itB, "users=bob", "gpus=h100:1", "description="+bSecret+" team")
	h.tokens["a-read"] = h.token("tenant="+itA, "scope=read", "name=ro")
	h.tokens["a-book"] = h.token("tenant="+itA, "scope=book", "name=ci")
	h.tokens["b-book"] = h.token("tenant="+itB, "scope=book", "name=ci")
	h.tokens["admin"] = h.token("scope=admin", "name=ops")
	h.tokens["expired"] = h.token("tenant="+itA, "scope=book", "name=old", "expires=2s")
	h.tokens["revoked"] = h.token("tenant="+itA, "scope=book", "name=gone")
	h.ok("-i", "delete", "token", "tenant="+itA, "name=gone")
	return h
}

// cli runs gpubridge in-process (closing the pools it opened).
func (h *apiIT) cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runContext(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func (h *apiIT) ok(args ...string) string {
	h.t.Helper()
	code, out, errs := h.cli(args...)
	if code != 0 {
		h.t.Fatalf("gpubridge %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (h *apiIT) token(args ...string) string {
	h.t.Helper()
	return strings.TrimSpace(h.ok(append([]string{"add", "token"}, args...)...))
}

func (h *apiIT) do(method, path, tok, body string) (int, string) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(method, "http://"+h.addr+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := apiClient.Do(r)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var apiClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func noLeak(t *testing.T, what, body string) {
	t.Helper()
	if strings.Contains(body, bSecret) || strings.Contains(body, itB) && !strings.Contains(what, itB) {
		t.Errorf("%s: the answer holds tenant B's data:\n%s", what, body)
	}
}

// TestAPIIsolationOnTestbed: every route with A's, B's, an expired, a
// revoked, a read-only (on write routes), a malformed and no token, with
// B's ids and tenant=B under A's token; then 10,000 randomized requests:
// nothing of B in A's answers.
func TestAPIIsolationOnTestbed(t *testing.T) {
	h := newAPIIT(t)
	// B's objects: a booking and a held job, both marked.
	code, body := h.do("POST", "/api/v1/tenants/"+itB+"/bookings", h.tokens["b-book"], `{"gpus":"h100:1","start":"now+3h","duration":"1h","purpose":"`+bSecret+` purpose"}`)
	if code != 201 {
		t.Fatalf("B books: %d %s", code, body)
	}
	var bb struct{ ID int64 }
	json.Unmarshal([]byte(body), &bb)
	h.env.Exec(t, "bob", "sbatch", "--parsable", "--hold", "-o", "/dev/null", "-A", itB, "-p", "pool", "-J", bSecret+"-job", "--gres=gpu:h100:1", "-t", "5", "--wrap", "sleep 60")
	code, body = h.do("POST", "/api/v1/tenants/"+itA+"/bookings", h.tokens["a-book"], `{"gpus":"h100:1","start":"now+5h","duration":"1h","purpose":"a purpose"}`)
	if code != 201 {
		t.Fatalf("A books: %d %s", code, body)
	}
	var ab struct{ ID int64 }
	json.Unmarshal([]byte(body), &ab)
	// The snapshot sees B's job.
	h.waitFor("B's held job in B's pending jobs", 30*time.Second, func() bool {
		_, b := h.do("GET", "/api/v1/tenants/"+itB+"/jobs/pending", h.tokens["b-book"], "")
		return strings.Contains(b, bSecret+"-job")
	})
	time.Sleep(2 * time.Second) // the expired token's 2 s are over

	type call struct{ method, path, body string }
	A, B := "/api/v1/tenants/"+itA, "/api/v1/tenants/"+itB
	own := []call{
		{"GET", "/api/v1/tenants", ""}, {"GET", A, ""}, {"GET", A + "/quota", ""}, {"GET", A + "/usage", ""},
		{"GET", A + "/burst", ""}, {"GET", A + "/jobs/pending", ""}, {"GET", A + "/bookings", ""},
		{"GET", fmt.Sprintf("%s/bookings/%d", A, ab.ID), ""}, {"GET", A + "/availability?type=h100", ""},
		{"GET", A + "/slots?type=h100&count=1&duration=1h", ""},
	}
	writes := []call{
		{"POST", A + "/bookings", `{"gpus":"h100:1","start":"now+7h","duration":"1h"}`},
		{"PATCH", fmt.Sprintf("%s/bookings/%d", A, ab.ID), `{"purpose":"changed"}`},
		{"DELETE", fmt.Sprintf("%s/bookings/%d", A, ab.ID+1_000_000), ""},
	}
	foreign := []call{
		{"GET", B, ""}, {"GET", B + "/quota", ""}, {"GET", B + "/usage", ""}, {"GET", B + "/burst", ""},
		{"GET", B + "/jobs/pending", ""}, {"GET", B + "/bookings", ""}, {"GET", fmt.Sprintf("%s/bookings/%d", B, bb.ID), ""},
		{"GET", B + "/availability", ""}, {"GET", B + "/slots?type=h100&count=1&duration=1h", ""},
		{"POST", B + "/bookings", `{"gpus":"h100:1","start":"now+7h","duration":"1h"}`},
		{"PATCH", fmt.Sprintf("%s/bookings/%d", B, bb.ID), `{"purpose":"x"}`},
		{"DELETE", fmt.Sprintf("%s/bookings/%d", B, bb.ID), ""},
		{"GET", fmt.Sprintf("%s/bookings/%d", A, bb.ID), ""},
		{"PATCH", fmt.Sprintf("%s/bookings/%d", A, bb.ID), `{"purpose":"x"}`},
		{"DELETE", fmt.Sprintf("%s/bookings/%d", A, bb.ID), ""},
		{"GET", A + "?tenant=" + itB, ""}, {"GET", A + "/usage?account=" + itB, ""}, {"GET", A + "/bookings?tenant=" + itB, ""},
		{"GET", "/api/v1/tenants?tenant=" + itB, ""},
	}
	for _, c := range own {
		for role, want := range map[string]int{"a-read": 200, "a-book": 200, "admin": 200, "expired": 401, "revoked": 401, "malformed": 401, "none": 401} {
			tok := h.tokens[role]
			if role == "malformed" {
				tok = "gpb_" + strings.Repeat("x", 10)
			}
			code, body := h.do(c.method, c.path, tok, c.body)
			if code != want {
				t.Errorf("%s %s as %s: %d; want %d\n%s", c.method, c.path, role, code, want, body)
			}
			if role != "admin" {
				noLeak(t, c.method+" "+c.path, body)
			}
		}
		if code, _ := h.do(c.method, c.path, h.tokens["b-book"], c.body); code != 404 && c.path != "/api/v1/tenants" {
			t.Errorf("%s %s with B's token: %d; want 404", c.method, c.path, code)
		}
	}
	for _, c := range writes {
		if code, body := h.do(c.method, c.path, h.tokens["a-read"], c.body); code != 403 && !(c.method == "DELETE" && code == 404) {
			t.Errorf("%s %s with a read token: %d; want 403\n%s", c.method, c.path, code, body)
		}
	}
	_, notFound := h.do("GET", "/api/v1/tenants/nosuch", h.tokens["a-book"], "")
	for _, c := range foreign {
		for _, role := range []string{"a-read", "a-book"} {
			code, body := h.do(c.method, c.path, h.tokens[role], c.body)
			if code != 404 || body != notFound {
				t.Errorf("%s %s as %s: %d %s; want 404 %s", c.method, c.path, role, code, body, notFound)
			}
		}
	}
	// B's booking is intact.
	if _, body := h.do("GET", fmt.Sprintf("%s/bookings/%d", B, bb.ID), h.tokens["b-book"], ""); !strings.Contains(body, `"state":"requested"`) || !strings.Contains(body, bSecret+" purpose") {
		t.Errorf("B's booking after A's attempts: %s", body)
	}

	// 10,000 randomized requests.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	ids := []string{fmt.Sprint(ab.ID), fmt.Sprint(bb.ID), "0", "-1", "x", fmt.Sprint(bb.ID + 1), fmt.Sprint(rng.IntN(1 << 30))}
	paths := []string{"", "/quota", "/usage", "/burst", "/jobs/pending", "/bookings", "/bookings/{id}", "/availability", "/slots", "/nope"}
	codes := map[int]int{}
	start := time.Now()
	for i := range 10_000 {
		p := "/api/v1/tenants"
		if rng.IntN(10) > 0 {
			p += "/" + pick(itA, itA, itB, strings.ToUpper(itB), itA+"/../"+itB, "x") + pick(paths...)
		} else if rng.IntN(2) == 0 {
			p = "/api/v1/pool"
		}
		p = strings.ReplaceAll(p, "{id}", pick(ids...))
		var q []string
		for range rng.IntN(3) {
			q = append(q, pick("tenant", "account", "period", "type", "count", "duration", "state", "from")+"="+pick(itB, itA, "2019-07", "h100", "1", "1h", "now"))
		}
		if len(q) > 0 {
			p += "?" + strings.Join(q, "&")
		}
		method := pick("GET", "GET", "GET", "POST", "PATCH", "DELETE")
		body := ""
		if method == "POST" || method == "PATCH" {
			body = pick(`{"purpose":"rnd"}`, `{"gpus":"h100:1","start":"now+9h","duration":"1m"}`, `{"tenant":"`+itB+`"}`)
		}
		code, answer := h.do(method, p, pick(h.tokens["a-read"], h.tokens["a-book"]), body)
		codes[code]++
		if strings.Contains(answer, bSecret) || (strings.Contains(answer, itB) && !strings.Contains(p+body, itB)) {
			t.Fatalf("request %d %s %s %s: the answer holds B's data:\n%s", i, method, p, body, answer)
		}
	}
	t.Logf("10,000 randomized requests in %s: status codes %v", time.Since(start).Round(time.Millisecond), codes)
	if codes[200] == 0 || codes[404] == 0 {
		t.Errorf("the requests did not reach both answers: %v", codes)
	}
	// Failed authentications are counted.
	if v := h.metric(`gpubridge_api_auth_failures_total{reason="expired"}`); v < float64(len(own)) {
		t.Errorf("expired-token failures counted: %v", v)
	}
}

// TestAPIBookingOnTestbed: a tenant books through the API, sees it in
// availability, runs a job in it; an over-policy booking is refused with
// the CLI's message; the change is in the audit log under the token.
func TestAPIBookingOnTestbed(t *testing.T) {
	h := newAPIIT(t)
	A := "/api/v1/tenants/" + itA
	code, body := h.do("POST", A+"/bookings", h.tokens["a-book"], `{"gpus":"h100:1","start":"now","duration":"30m","purpose":"api job"}`)
	if code != 201 {
		_, all := h.do("GET", "/api/v1/pool", h.tokens["admin"], "")
		_, m := h.get("/metrics")
		var parts []string
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, "gpubridge_snapshot") || strings.HasPrefix(l, "gpubridge_api_requests_total") || strings.HasPrefix(l, "gpubridge_api_auth") {
				parts = append(parts, l)
			}
		}
		t.Fatalf("book: %d %s\npool: %s\n%s\nserve log:\n%s", code, body, all, strings.Join(parts, "\n"), h.log)
	}
	var b struct {
		ID              int64
		ReservationName string
		Start, End      time.Time
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil || b.ReservationName != fmt.Sprintf("%s%d", h.prefix, b.ID) {
		t.Fatalf("booking: %v %s", err, body)
	}
	// In the availability of the window.
	_, body = h.do("GET", A+"/availability?type=h100&from=now&to=now%2B30m&step=30m", h.tokens["a-read"], "")
	var av struct {
		Resources []struct {
			Buckets []struct{ Committed int }
		}
	}
	if err := json.Unmarshal([]byte(body), &av); err != nil || len(av.Resources) != 1 || av.Resources[0].Buckets[0].Committed < 1 {
		t.Errorf("availability: %v %s", err, body)
	}
	// Projected to Slurm, a job runs in it.
	if out := h.ok("project"); !strings.Contains(out, "create reservation "+b.ReservationName) {
		t.Fatalf("project:\n%s", out)
	}
	out := h.env.Exec(t, "erin", "sbatch", "--parsable", "-o", "/dev/null", "-A", itA, "-p", "pool", "--reservation="+b.ReservationName,
		"--gres=gpu:h100:1", "-t", "5", "--wrap", "sleep 30")
	job := strings.TrimSpace(strings.Split(out, ";")[0])
	h.waitFor("the job in the booking runs", 90*time.Second, func() bool {
		s, _ := h.env.Run(context.Background(), "", nil, "squeue", "-h", "-j", job, "-o", "%T")
		return strings.TrimSpace(s) == "RUNNING"
	})
	h.waitFor("the API shows the job's GPU", 30*time.Second, func() bool {
		_, body := h.do("GET", A+"/quota", h.tokens["a-read"], "")
		return strings.Contains(body, `"type":"h100","quota":2,"inQuota":0,"bursting":0,"allocated":1`)
	})
	// Over the policy (maxGPUs h100: 2 at once): the API's message is the CLI's.
	s := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Hour).Format(time.RFC3339)
	code, body = h.do("POST", A+"/bookings", h.tokens["a-book"], `{"gpus":"h100:3","start":"`+s+`","duration":"2h"}`)
	var eb struct{ Error string }
	if err := json.Unmarshal([]byte(body), &eb); err != nil || code != 400 || !strings.Contains(eb.Error, "more than its policy allows") {
		t.Fatalf("over policy: %d %s", code, body)
	}
	ccode, _, cerr := h.cli("-i", "add", "booking", "tenant="+itA, "gpus=h100:3", "start="+s, "duration=2h")
	if ccode == 0 || strings.TrimSpace(cerr) != "gpubridge: error: "+eb.Error {
		t.Errorf("the CLI says (exit %d):\n%s\nthe API says:\n%s", ccode, cerr, eb.Error)
	}
	// Modify and cancel through the API; the audit log names the token.
	if code, body := h.do("PATCH", fmt.Sprintf("%s/bookings/%d", A, b.ID), h.tokens["a-book"], `{"purpose":"api job, longer"}`); code != 200 {
		t.Errorf("modify: %d %s", code, body)
	}
	db, err := sqldb.Open(context.Background(), h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var actions []string
	if err := db.Select(&actions, `SELECT action FROM audit_log WHERE object_kind = 'booking' AND object_name = ? AND actor = ? ORDER BY id`,
		fmt.Sprint(b.ID), "api-token "+itA+"/ci"); err != nil || strings.Join(actions, ",") != "create,modify" {
		t.Errorf("audit rows of booking %d by the token: %v %v", b.ID, actions, err)
	}
}

// synthJobs opens slurmdbd's database read-write for synthetic job rows
// of the testbed's cluster with ids lo..lo+1000, deletes any left by an
// earlier run, and deletes them again when the test ends (then closes the
// pool); it returns the pool and the TRES ids to allocate with.
func (h *apiIT) synthJobs(t *testing.T, lo uint32) (*sqlx.DB, synth.TRES) {
	t.Helper()
	ctx := context.Background()
	rw, err := sqldb.Open(ctx, h.env.BenchDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		synth.Delete(context.Background(), rw, h.env.Cluster, lo, lo+1000)
		rw.Close()
	})
	if _, err := synth.Delete(ctx, rw, h.env.Cluster, lo, lo+1000); err != nil {
		t.Fatal(err)
	}
	tres, err := synth.LoadTRES(ctx, rw)
	if err != nil {
		t.Fatal(err)
	}
	return rw, tres
}

// TestAPIUsageEqualsLedgerAndFOCUS: for a closed month, the API's usage
// and spend of a tenant equal the ledger's lines and the FOCUS export.
func TestAPIUsageEqualsLedgerAndFOCUS(t *testing.T) {
	h := newAPIIT(t)
	ctx := context.Background()
	lo := uint32(synth.TestIDs + 4_000_000)
	rw, tres := h.synthJobs(t, lo)
	var rows []synth.Row
	base := time.Date(2019, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := range uint32(60) {
		acct := itA
		if i%3 == 0 {
			acct = itB
		}
		s := base + int64(i)*37_000
		gpus := map[string]int{"h100": 1 + int(i%4)}
		if i%5 == 0 {
			gpus = map[string]int{"1g.10gb": 2}
		}
		rows = append(rows, synth.Row{JobID: lo + i, Account: acct, Partition: "pool", Submit: s - 60, Start: s, End: s + 600 + int64(i)*97,
			State: synth.StateCompleted, TRES: tres.Alloc(4, gpus)})
	}
	// One run crosses into August: only July's part is July's.
	rows = append(rows, synth.Row{JobID: lo + 100, Account: itA, Partition: "pool", Submit: base + 30*86400, Start: base + 31*86400 - 3600,
		End: base + 31*86400 + 3600, State: synth.StateCompleted, TRES: tres.Alloc(4, map[string]int{"h100": 2})})
	if err := synth.Insert(ctx, rw, h.env.Cluster, rows); err != nil {
		t.Fatal(err)
	}
	h.ok("add", "rate", "type=h100", "tier=reserved", "price=2.37", "from=2019-01-01", "currency=EUR")
	h.ok("add", "gputype", "name=1g.10gb", "parent=h100")
	h.ok("ingest", "from=2019-07-01", "to=2019-08-02")
	h.ok("-i", "close", "period=2019-07")

	_, body := h.do("GET", "/api/v1/tenants/"+itA+"/usage?period=2019-07", h.tokens["a-read"], "")
	var u struct {
		Status, Amount, Currency string
		GPUSeconds               int64
		Rows                     []struct {
			GPUType    string
			GPUSeconds int64
			Amount     string
		}
	}
	if err := json.Unmarshal([]byte(body), &u); err != nil || u.Status != "closed" || u.Currency != "EUR" || len(u.Rows) != 2 {
		t.Fatalf("usage: %v %s", err, body)
	}
	t.Logf("$ GET /api/v1/tenants/%s/usage?period=2019-07\n%s", itA, body)
	// The ledger, summed independently.
	db, err := sqldb.Open(ctx, h.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ledger []struct {
		Type string `db:"gpu_type"`
		Sec  int64  `db:"s"`
	}
	if err := db.Select(&ledger, `SELECT gpu_type, SUM(gpu_seconds) AS s FROM usage_ledger WHERE account = ? AND booked_period = '2019-07' GROUP BY gpu_type ORDER BY gpu_type`, itA); err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, l := range ledger {
		total += l.Sec
		if i >= len(u.Rows) || u.Rows[i].GPUType != l.Type || u.Rows[i].GPUSeconds != l.Sec {
			t.Errorf("ledger %s %d GPU-seconds; the API: %+v", l.Type, l.Sec, u.Rows)
		}
	}
	if total != u.GPUSeconds || total == 0 {
		t.Errorf("ledger total %d; API %d", total, u.GPUSeconds)
	}
	// The FOCUS export of the month, the tenant's rows.
	file := filepath.Join(t.TempDir(), "2019-07.csv")
	h.ok("export", "chargeback", "period=2019-07", "format=focus", "file="+file)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("FOCUS file: %v %d rows", err, len(recs))
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	sum := money.Zero(money.Currency{Code: "EUR", Minor: 2})
	for _, r := range recs[1:] {
		if r[col["SubAccountName"]] != itA && r[col["SubAccountId"]] != itA {
			continue
		}
		v, err := money.Parse(r[col["BilledCost"]])
		if err != nil {
			t.Fatal(err)
		}
		if v, err = v.In(sum.Currency()); err != nil {
			t.Fatal(err)
		}
		if sum, err = sum.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if sum.String() != u.Amount || u.Amount == "0.00" {
		t.Errorf("FOCUS BilledCost of %s sums to %s; the API says %s", itA, sum, u.Amount)
	}
	// The same as show usage.
	out := h.ok("show", "usage", "period=2019-07", "tenant="+itA, "-P")
	for _, r := range u.Rows {
		if !strings.Contains(out, "|"+r.GPUType+"|") || !strings.Contains(out, "|"+strconv.FormatInt(r.GPUSeconds, 10)+"|") || !strings.Contains(out, "|"+r.Amount+"|EUR") {
			t.Errorf("show usage misses %+v:\n%s", r, out)
		}
	}
	noLeak(t, "usage", body)
	// The tenant's chargeback download (the portal's and the API's) is
	// the admin export filtered to the tenant, byte for byte.
	for _, f := range []string{"csv", "json", "focus"} {
		want := h.ok("export", "chargeback", "period=2019-07", "format="+f, "tenant="+itA)
		code, got := h.do("GET", "/api/v1/tenants/"+itA+"/chargeback?period=2019-07&format="+f, h.tokens["a-read"], "")
		if code != 200 || got != want || len(want) < 100 {
			t.Errorf("chargeback format=%s: %d, %d bytes; the CLI's export %d bytes (equal: %v)\n%s", f, code, len(got), len(want), got == want, got)
		}
		noLeak(t, "chargeback "+f, got)
	}
}

// TestAPIExamples runs the examples of docs/api.md against the testbed and
// logs each answer (-v shows them); every one must succeed.
func TestAPIExamples(t *testing.T) {
	h := newAPIIT(t)
	A := "/api/v1/tenants/" + itA
	s := time.Now().UTC().Add(26 * time.Hour).Truncate(time.Hour)
	h.env.Exec(t, "erin", "sbatch", "--parsable", "-o", "/dev/null", "-A", itA, "-p", "pool", "-J", "train", "--gres=gpu:h100:1", "-t", "5", "--wrap", "sleep 120")
	h.env.Exec(t, "erin", "sbatch", "--parsable", "--hold", "-o", "/dev/null", "-A", itA, "-p", "pool", "-J", "eval", "--gres=gpu:1g.10gb:1", "-t", "5", "--wrap", "sleep 60")
	time.Sleep(3 * time.Second)
	for _, c := range []struct{ method, path, tok, body string }{
		{"GET", "/api/v1/tenants", "a-read", ""},
		{"GET", A, "a-read", ""},
		{"GET", A + "/quota", "a-read", ""},
		{"GET", A + "/usage?period=" + time.Now().UTC().Format("2006-01"), "a-read", ""},
		{"GET", A + "/burst", "a-read", ""},
		{"GET", A + "/jobs/pending", "a-read", ""},
		{"POST", A + "/bookings", "a-book", `{"gpus":"h100:2","start":"` + s.Format(time.RFC3339) + `","duration":"4h","purpose":"fine-tuning"}`},
		{"GET", A + "/bookings", "a-read", ""},
		{"PATCH", A + "/bookings/1", "a-book", `{"duration":"6h"}`},
		{"GET", A + "/bookings/1", "a-read", ""},
		{"POST", A + "/bookings", "a-book", `{"gpus":"h100:3","start":"` + s.Format(time.RFC3339) + `","duration":"1h"}`},
		{"GET", A + "/availability?type=h100&from=" + s.Format(time.RFC3339) + "&to=" + s.Add(8*time.Hour).Format(time.RFC3339) + "&step=2h", "a-read", ""},
		{"GET", A + "/slots?type=h100&count=4&duration=2h", "a-read", ""},
		{"DELETE", A + "/bookings/1", "a-book", ""},
		{"POST", A + "/bookings", "a-read", `{"gpus":"h100:1","start":"now+1d","duration":"1h"}`},
		{"GET", "/api/v1/tenants/" + itB, "a-read", ""},
		{"GET", A, "", ""},
		{"GET", "/api/v1/pool", "admin", ""},
	} {
		code, body := h.do(c.method, c.path, h.tokens[c.tok], c.body)
		var pretty bytes.Buffer
		if json.Indent(&pretty, []byte(body), "", "  ") != nil {
			pretty.WriteString(body)
		}
		t.Logf("$ %s %s (%s) %s\n%d\n%s", c.method, c.path, c.tok, c.body, code, pretty.String())
		if code >= 500 {
			t.Errorf("%s %s: %d", c.method, c.path, code)
		}
	}
	_, m := h.get("/metrics")
	var lines []string
	for _, l := range strings.Split(m, "\n") {
		if strings.Contains(l, itA) || strings.HasPrefix(l, "gpubridge_pool_") || strings.HasPrefix(l, "gpubridge_ingest_lag") {
			lines = append(lines, l)
		}
	}
	t.Logf("metrics:\n%s", strings.Join(lines, "\n"))
	t.Logf("show tokens:\n%s", h.ok("show", "tokens"))
	_, out, errs := h.cli("add", "token", "tenant="+itA, "scope=read", "name=grafana-a", "expires=90d")
	t.Logf("$ gpubridge add token tenant=%s scope=read name=grafana-a expires=90d\n%s%s", itA, out, errs)
}
