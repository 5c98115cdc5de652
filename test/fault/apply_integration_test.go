//go:build integration

package fault_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/slurmrest/slurmresttest"
	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/fault"
	"github.com/gpubridge/gpubridge/test/fault/proxy"
)

// applyIT is one test's tenants, applied through a fault proxy in front of
// the testbed's slurmrestd, from a scratch store, with removals limited to
// the test's own tenants (reconcile scope).
type applyIT struct {
	t       *testing.T
	env     testbed.Env
	prefix  string
	tenants []tenant.Tenant
	proxy   *proxy.HTTP
	client  *slurmrest.Client // through the proxy
	rec     *reconcile.Reconciler
}

func newApplyIT(t *testing.T, prefix string, mod func(*slurmrest.Options)) *applyIT {
	t.Helper()
	env := testbed.Require(t)
	h := &applyIT{t: t, env: env, prefix: prefix}
	for i, q := range []tenant.Quota{{"h100": 2, "1g.10gb": 3}, {"h100": 1}, {"3g.40gb": 1, "1g.10gb": 1}} {
		n := fmt.Sprintf("%s%c", prefix, 'a'+i)
		h.tenants = append(h.tenants, tenant.Tenant{Name: n, GPUs: q, State: tenant.Active, Description: "fault suite " + n,
			Users: []string{n + "-u1", n + "-u2"}})
	}
	direct := slurmresttest.New(t, env, "", nil)
	var objs slurmresttest.Objects
	for _, tn := range h.tenants {
		objs.Accounts = append(objs.Accounts, tn.Name)
		objs.QOS = append(objs.QOS, tn.Name)
		objs.Users = append(objs.Users, tn.Users...)
	}
	slurmresttest.Remove(t, direct, objs)
	p, err := proxy.NewHTTP(env.RestURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h.proxy = p
	h.client = slurmresttest.New(t, env, p.URL(), mod)
	db, _ := fault.ScratchDB(t, env, "flt", prefix)
	st := tenantstore.New(db)
	if _, err := st.Put(context.Background(), "fault-suite", h.tenants); err != nil {
		t.Fatal(err)
	}
	h.rec = &reconcile.Reconciler{Store: st, Cluster: slurmadapter.New(h.client), Naming: tenant.Naming{OnDemandQOS: "ondemand"},
		Actor: "fault-suite", Scope: func(n string) bool { return strings.HasPrefix(n, prefix) }}
	return h
}

// apply plans and applies once and returns the changes planned and the
// slurmrestd writes made.
func (h *applyIT) apply() (changes int, writes int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := h.client.Stats()
	p, ts, err := h.rec.Plan(ctx)
	if err != nil {
		return 0, 0, err
	}
	_, err = h.rec.Apply(ctx, p, ts)
	return len(p.Changes), h.client.Stats().Writes - before.Writes, err
}

// slurmState reads the test's QOS and associations with sacctmgr, one
// line per object, sorted.
func (h *applyIT) slurmState() []string {
	h.t.Helper()
	var names []string
	for _, tn := range h.tenants {
		names = append(names, tn.Name)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(h.env.Exec(h.t, "", "sacctmgr", "-n", "-P", "show", "qos", "format=name,grptres")), "\n") {
		if n, _, _ := strings.Cut(line, "|"); slices.Contains(names, n) {
			out = append(out, "qos "+line)
		}
	}
	assocs := h.env.Exec(h.t, "", "sacctmgr", "-n", "-P", "show", "assoc", "where", "account="+strings.Join(names, ","), "cluster="+h.env.Cluster,
		"format=account,user,parentname,qos,defaultqos")
	for _, line := range strings.Split(strings.TrimSpace(assocs), "\n") {
		if line != "" {
			out = append(out, "assoc "+line)
		}
	}
	sort.Strings(out)
	return out
}

// want is the Slurm state the tenants describe, written out by the rules
// of docs/tenants.md (not by the code under test): one QOS per tenant with
// its typed GrpTRES, the account under root whose own association carries
// the tenant QOS and the shared on-demand QOS (so nothing under it falls
// back to normal), each user's association with the same QOS, the tenant
// QOS as default.
func (h *applyIT) want() []string {
	var out []string
	for _, tn := range h.tenants {
		var tres []string
		for typ, n := range tn.GPUs {
			tres = append(tres, fmt.Sprintf("gres/gpu:%s=%d", typ, n))
		}
		sort.Strings(tres)
		out = append(out, "qos "+tn.Name+"|"+strings.Join(tres, ","), "assoc "+tn.Name+"||root|"+tn.Name+",ondemand|"+tn.Name)
		for _, u := range tn.Users {
			out = append(out, "assoc "+tn.Name+"|"+u+"||"+tn.Name+",ondemand|"+tn.Name)
		}
	}
	sort.Strings(out)
	return out
}

// converge checks what every fault must end with: one later apply
// converges, Slurm equals the tenants exactly (no duplicate, no
// half-limited association), and the next apply makes 0 writes.
func (h *applyIT) converge() {
	h.t.Helper()
	h.proxy.Clear()
	if _, _, err := h.apply(); err != nil {
		h.t.Fatalf("the apply after the fault: %v", err)
	}
	if d := cmp.Diff(h.want(), h.slurmState()); d != "" {
		h.t.Fatalf("Slurm after the fault and one apply vs the tenants (-want +got)\n%s", d)
	}
	changes, writes, err := h.apply()
	if err != nil || changes != 0 || writes != 0 {
		h.t.Fatalf("the next apply: %d changes, %d writes (%v); want 0 and 0", changes, writes, err)
	}
}

// TestFaultSlurmrestdKilledMidApply kills slurmrestd right after it
// executed the k-th of the apply's writes (the client never gets that
// answer), restarts it, and requires one apply to converge.
func TestFaultSlurmrestdKilledMidApply(t *testing.T) {
	env := testbed.Require(t)
	rest := fault.NewDaemon(t, env, "slurmrestd")
	// A clean cold apply of the same tenants writes n times; kill at k of n.
	h := newApplyIT(t, "fltk", nil)
	_, n, err := h.apply()
	if err != nil || n < 3 {
		t.Fatalf("cold apply: %d writes, %v", n, err)
	}
	for _, k := range []int64{1, n / 2, n - 1} {
		t.Run(fmt.Sprintf("killed after write %d of %d", k, n), func(t *testing.T) {
			h := newApplyIT(t, "fltk", nil) // removes the objects of the clean apply or of the last case
			rule := h.proxy.Add(&proxy.Rule{Match: proxy.Writes("/slurm"), After: int(k - 1), Times: 1, Fault: proxy.CutAfterForward(rest.Kill)})
			var err error
			fault.Timed(t, "apply with slurmrestd killed after a write", func() { _, _, err = h.apply() })
			if err == nil || rule.Hits() != 1 {
				t.Fatalf("apply with slurmrestd killed after write %d: err %v, %d kills", k, err, rule.Hits())
			}
			t.Logf("outcome: %v", err)
			rest.Start()
			fault.Timed(t, "converging apply after the restart", h.converge)
		})
	}
}

// TestFaultBadAnswersDuringApply answers the apply's reads of the cluster
// (or its first write) wrongly: each is a failure with a clear message,
// and nothing is written from a bad read.
func TestFaultBadAnswersDuringApply(t *testing.T) {
	reads := proxy.Methods("/slurmdb/", http.MethodGet)
	cases := map[string]struct {
		match    func(*http.Request) bool
		fault    proxy.Fault
		contains string
		is       error
		writes   bool // the fault is on a write: it was made
	}{
		"500 on a read": {match: reads, fault: proxy.Status(500, `{"errors":[{"error_number":9001,"error":"Unable to query","source":"x"}]}`),
			contains: "HTTP 500 Internal Server Error: Unable to query (error 9001)"},
		"truncated JSON on a read": {match: reads, fault: proxy.TruncateJSON(), contains: "HTTP 200 with a body that is not slurmrestd JSON"},
		"200 with errors[] on a read": {match: reads, fault: proxy.SlurmErrors(200, proxy.SlurmError{Number: 2012, Error: "Invalid account", Source: "x"}),
			contains: "HTTP 200 OK: Invalid account (error 2012)"},
		"wrong data_parser on a read": {match: reads, fault: proxy.DataParser("v0.0.42"), is: slurmrest.ErrUnsupportedVersion,
			contains: "answered with data_parser v0.0.42, not the v0.0.44 that was asked for"},
		"500 on the first write": {match: proxy.Writes("/slurm"), fault: proxy.Status(500, `{"errors":[{"error_number":7000,"error":"Unable to connect to database","source":"x"}]}`),
			contains: "Unable to connect to database (error 7000)", writes: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newApplyIT(t, "fltb", func(o *slurmrest.Options) { o.APIVersion = slurmrest.V44; o.Retries = -1 })
			h.proxy.Add(&proxy.Rule{Match: tc.match, Times: 1, Fault: tc.fault})
			_, writes, err := h.apply()
			if err == nil || !strings.Contains(err.Error(), tc.contains) || tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("apply: %v; want a failure containing %q", err, tc.contains)
			}
			t.Logf("outcome: %v", err)
			if !tc.writes && writes != 0 {
				t.Errorf("%d writes after a bad read", writes)
			}
			if !tc.writes {
				if got := h.slurmState(); len(got) != 0 {
					t.Errorf("objects made from a bad read: %v", got)
				}
			}
			h.converge()
		})
	}
}

// TestFaultSlowSlurmrestd delays the first byte by 30 s and then sends at
// 10 KB/s: each request ends at its deadline, retries are bounded, nothing
// is written, and the apply fails with a message that names the timeout.
func TestFaultSlowSlurmrestd(t *testing.T) {
	h := newApplyIT(t, "flts", func(o *slurmrest.Options) {
		o.Timeout = 2 * time.Second
		o.Retries = 1
		o.RetryBackoff = 100 * time.Millisecond
	})
	cases := map[string]struct {
		fault proxy.Fault
		want  string
	}{
		"30 s to the first byte": {proxy.Slow(30*time.Second, 0), "no complete answer within 2s"},
		// Answers padded to 100 KB, so that at 10 KB/s none fits in 2 s.
		"10 KB/s body": {proxy.WithRewrite(proxy.PadJSON(100<<10), proxy.Slow(0, 10<<10)), "no complete answer within 2s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h.proxy.Clear()
			h.proxy.Add(&proxy.Rule{Match: proxy.Methods("/slurmdb/", http.MethodGet), Fault: tc.fault})
			var err error
			var writes int64
			d := fault.Timed(t, "apply against a slow slurmrestd ("+name+")", func() { _, writes, err = h.apply() })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("apply: %v; want %q", err, tc.want)
			}
			if d > 8*time.Second {
				t.Errorf("took %s: 2 attempts of 2 s each and a 100 ms backoff should end within 5 s", d)
			}
			if writes != 0 {
				t.Errorf("%d writes", writes)
			}
			t.Logf("outcome after %s: %v", d.Round(time.Millisecond), err)
		})
	}
	// An answer far larger than the client accepts: it stops reading at
	// the bound, so its memory stays bounded whatever the server sends.
	t.Run("a 256 MiB answer", func(t *testing.T) {
		h := newApplyIT(t, "flts", func(o *slurmrest.Options) { o.MaxBodyBytes = 4 << 20; o.Retries = -1 })
		h.proxy.Add(&proxy.Rule{Match: proxy.Methods("/slurmdb/", http.MethodGet), Times: 1, Fault: proxy.Huge(256 << 20)})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, writes, err := h.apply()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, slurmrest.ErrTooLarge) || writes != 0 {
			t.Fatalf("apply: %d writes, %v; want ErrTooLarge and no write", writes, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("the apply allocated %d MiB reading a 256 MiB answer with a 4 MiB bound", grew>>20)
		} else {
			t.Logf("figure: allocated %d MiB while refusing a 256 MiB answer (bound 4 MiB)", grew>>20)
		}
		t.Logf("outcome: %v", err)
	})
	h.converge()
}
