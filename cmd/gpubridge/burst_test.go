package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
	"github.com/gpubridge/gpubridge/bridge/burst/store"
	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/table"
)

// TestJobSubmitBurstLua runs contrib/job_submit_burst_test.lua with the
// host's Lua 5.1 (the version slurmctld's job_submit/lua links).
func TestJobSubmitBurstLua(t *testing.T) {
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Fatal("lua5.1 is missing: run test/install-deps.sh (apt-get install lua5.1)")
	}
	// Every shipped script must at least compile under slurmctld's Lua.
	for _, f := range []string{"job_submit.lua", "job_submit_burst.lua"} {
		if out, err := exec.Command("luac5.1", "-p", "../../contrib/"+f).CombinedOutput(); err != nil {
			t.Errorf("contrib/%s does not compile: %v\n%s", f, err, out)
		}
	}
	out, err := exec.Command(lua, "../../contrib/job_submit_burst_test.lua").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("%v\n%s", err, out)
	}
}

func TestCycleTable(t *testing.T) {
	j := burst.Job{ID: 7, User: "alice", Reason: "QOSGrpGRES"}
	res := burst.Result{
		Moved:  []burst.Move{{Job: j, Tenant: "acme", GPUs: burst.Request{"h100": 1}, Estimate: 100}},
		Failed: []burst.Refusal{{JobID: 8, Tenant: "acme", User: "bob", GPUs: burst.Request{"h100": 2}, Reason: burst.MoveFailed, Detail: "gone"}},
		Plan: burst.Plan{Minor: 2, Refusals: []burst.Refusal{{JobID: 9, Tenant: "acme", User: "bob", GPUs: burst.Request{"h100": 1},
			Reason: burst.Cap, Detail: "needs 1"}}},
	}
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{Parsable: true}, cycleTable(res, false)); err != nil {
		t.Fatal(err)
	}
	want := `Action|Tenant|JobID|User|GPUs|Reason|Detail
moved|acme|7|alice|h100:1|QOSGrpGRES|to on-demand; est 1.00
failed|acme|8|bob|h100:2|move-failed|gone
refused|acme|9|bob|h100:1|cap|needs 1
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	b.Reset()
	if err := table.Write(&b, table.Options{JSON: true}, cycleTable(burst.Result{}, true)); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("empty cycle --json = %q", b.String())
	}
}

func TestPrintBurst(t *testing.T) {
	moved := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	budget := money.New(5000, money.Currency{Code: "EUR", Minor: 2})
	p := burst.Plan{
		Minor: 2,
		Bursting: []burst.Bursting{{JobID: 3, Tenant: "acme", User: "alice", State: "RUNNING", GPUs: burst.Request{"h100": 1},
			Estimate: 600, Priced: true, Moved: true, Marker: burst.Marker{Moved: moved, Reason: "QOSGrpGRES", Partition: "pool", QOS: "acme"}}},
		Refusals: []burst.Refusal{{JobID: 4, Tenant: "acme", User: "alice", GPUs: burst.Request{"h100": 1}, Reason: burst.Budget, Detail: "over"}},
		Tenants: []burst.TenantState{{Tenant: "acme", Enabled: true, MaxGPUs: 4, Budget: &budget, OnDemandGPUs: 1, Spent: 1000, InFlight: 600},
			{Tenant: "beta"}},
	}
	stored := []store.StoredRefusal{{Refusal: burst.Refusal{JobID: 4, Reason: burst.Budget}, FirstAt: moved.Add(time.Minute)}}
	// printBurst prints what burst.Summarize merged (the path of show burst).
	printBurst := func(a *App, p burst.Plan, stored []store.StoredRefusal, only string) error {
		ov, err := burst.Summarize(p, stored, only)
		if err != nil {
			return err
		}
		return a.printBurst(ov)
	}
	var out bytes.Buffer
	a := &App{out: &out, output: table.Options{Parsable: true}}
	if err := printBurst(a, p, stored, "acme"); err != nil {
		t.Fatal(err)
	}
	want := `Tenant|JobID|User|Status|State|GPUs|Since|Reason|Detail
acme|3|alice|bursting|RUNNING|h100:1|2026-05-04T10:00:00Z|QOSGrpGRES|moved by gpubridge from pool/acme; est 6.00
acme|4|alice|refused|PENDING|h100:1|2026-05-04T10:01:00Z|budget|over

Tenant|Burst|MaxOnDemandGPUs|OnDemandGPUs|MonthlyBudget|Spent|InFlight|Committed|Left
acme|on|4|1|50.00|10.00|6.00|16.00|34.00
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	out.Reset()
	a.output = table.Options{JSON: true}
	if err := printBurst(a, p, nil, ""); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Jobs    []burstJobRow    `json:"jobs"`
		Tenants []burstTenantRow `json:"tenants"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Jobs) != 2 || len(got.Tenants) != 2 || got.Tenants[1].Budget != "" || got.Tenants[0].Left != "34.00" {
		t.Errorf("--json = %s", out.String())
	}
	if err := printBurst(a, p, nil, "nobody"); err == nil {
		t.Error("unknown tenant: no error")
	}
}
