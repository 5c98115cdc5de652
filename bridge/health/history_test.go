package health_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/bridge/health/check"
)

type uses func(tenant string, since, until time.Time) []health.NodeUse

func (u uses) NodeUses(_ context.Context, tenant string, since, until time.Time) ([]health.NodeUse, error) {
	return u(tenant, since, until), nil
}

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-06-01 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

// TestBuildHistory: spans of one node merge when they touch or lie within
// the grace; events within a span or the grace after it are shown, others
// not; results of the tenant's own and of scheduled checks within a span
// are shown, another tenant's never.
func TestBuildHistory(t *testing.T) {
	spans := health.MergeUses([]health.NodeUse{
		{Node: "gpu-a", Start: at("09:05"), End: at("09:30")},
		{Node: "gpu-a", Start: at("08:00"), End: at("09:00")},
		{Node: "gpu-b", Start: at("10:00"), End: at("10:30")},
	})
	if diff := cmp.Diff(map[string][]health.NodeUse{
		"gpu-a": {{Node: "gpu-a", Start: at("08:00"), End: at("09:30")}},
		"gpu-b": {{Node: "gpu-b", Start: at("10:00"), End: at("10:30")}},
	}, spans); diff != "" {
		t.Fatalf("merged spans (-want +got)\n%s", diff)
	}
	events := map[string][]health.Event{"gpu-a": {
		{Node: "gpu-a", At: at("07:00"), From: health.BurnIn, To: health.Serving, Reason: "passed 1 of 1"},
		{Node: "gpu-a", At: at("09:40"), From: health.Serving, To: health.Drained, Reason: "probe failed: sensor hot"},
		{Node: "gpu-a", At: at("12:00"), From: health.Requalify, To: health.Serving, Reason: "passed 3 of 3"},
	}}
	res := func(hhmm, tenant string, p health.Purpose) health.StoredResult {
		return health.StoredResult{Node: "gpu-a", At: at(hhmm), Check: "probe", Verdict: check.Pass, Tenant: tenant, Purpose: p, RunID: 1}
	}
	results := map[string][]health.StoredResult{"gpu-a": {
		res("08:30", "acme", health.PurposeTenant), res("08:40", "beta", health.PurposeTenant),
		res("09:35", "", health.PurposeSchedule), res("11:00", "", health.PurposeSchedule),
	}}
	var got []string
	for _, h := range health.BuildHistory("acme", spans, events, results, at("13:00")) {
		got = append(got, h.At.Format("15:04")+" "+h.Node+" "+h.What+" "+h.Detail())
	}
	want := []string{
		"10:00 gpu-b used its jobs ran here 2026-06-01T10:00:00Z to 2026-06-01T10:30:00Z",
		"09:40 gpu-a state serving -> drained: probe failed: sensor hot",
		"09:35 gpu-a check probe pass [run 1, schedule]",
		"08:30 gpu-a check probe pass [run 1, tenant]",
		"08:00 gpu-a used its jobs ran here 2026-06-01T08:00:00Z to 2026-06-01T09:30:00Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got)\n%s", diff)
	}
}

// TestTenantHistoryShowsWhyItsNodeWasDrained: acme's job runs on gpu-a, a
// scheduled check fails and drains it; acme's history shows its use, the
// failing result and the drain with its reason; beta's check on gpu-a
// (beta also runs there) is in beta's history and not in acme's, and
// acme's view of gpu-b, which it never used, is empty.
func TestTenantHistoryShowsWhyItsNodeWasDrained(t *testing.T) {
	e := newEnv(t, func(p *health.Params) {
		p.History = uses(func(tenant string, since, until time.Time) []health.NodeUse {
			if tenant == "acme" || tenant == "beta" {
				return []health.NodeUse{{Node: "gpu-a", Start: at("08:00"), End: until}}
			}
			return nil
		})
	}, "gpu-a", "gpu-b")
	ctx := context.Background()
	e.serving("gpu-a")
	e.serving("gpu-b")
	e.c.SubmitTenant("beta", "gpu-a")
	e.c.States(ctx, nil)
	r, err := e.svc.Trigger(ctx, health.Request{Node: "gpu-a", Tenant: "beta", Checks: []string{"probe"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.Wait(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	e.setFault("gpu-a", true)
	for i := 0; i < 3 && e.rec("gpu-a").State != health.Drained; i++ {
		e.advance(interval)
		e.cycle("quick")
	}
	if e.rec("gpu-a").State != health.Drained {
		t.Fatalf("gpu-a %+v", e.rec("gpu-a"))
	}
	hist, err := e.svc.TenantHistory(ctx, "acme", "", at("07:00"))
	if err != nil {
		t.Fatal(err)
	}
	var whats []string
	for _, h := range hist {
		whats = append(whats, h.What+" "+h.Detail())
		if h.Result != nil && h.Result.Tenant == "beta" {
			t.Errorf("acme sees beta's result: %+v", h.Result)
		}
	}
	text := strings.Join(whats, "\n")
	for _, w := range []string{"state serving -> drained: probe failed: sensor hot (exit 1); temp_c=95 > 90 (h100)",
		"check probe fail: sensor hot (exit 1); temp_c=95 > 90 (h100)", "used its jobs ran here 2026-06-01T08:00:00Z"} {
		if !strings.Contains(text, w) {
			t.Errorf("acme's history lacks %q:\n%s", w, text)
		}
	}
	beta, err := e.svc.TenantHistory(ctx, "beta", "", at("07:00"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range beta {
		found = found || (h.Result != nil && h.Result.Tenant == "beta" && h.Result.RunID == r.ID)
	}
	if !found {
		t.Errorf("beta's history lacks its own check (run %d): %+v", r.ID, beta)
	}
	if h, err := e.svc.TenantHistory(ctx, "acme", "gpu-b", at("07:00")); err != nil || len(h) != 0 {
		t.Errorf("acme's history of gpu-b, which it never used: %+v %v", h, err)
	}
	if h, err := e.svc.TenantHistory(ctx, "gamma", "", at("07:00")); err != nil || len(h) != 0 {
		t.Errorf("a tenant that used nothing: %+v %v", h, err)
	}
	rows := health.HistoryTable(hist).Rows
	if len(rows) != len(hist) || rows[0][1] != "gpu-a" {
		t.Errorf("history table %v", rows)
	}
	e2 := newEnv(t, nil)
	if _, err := e2.svc.TenantHistory(ctx, "acme", "", at("07:00")); !errors.Is(err, health.ErrNoHistory) {
		t.Errorf("without a history source: %v", err)
	}
}
