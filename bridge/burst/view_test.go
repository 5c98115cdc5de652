package burst

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/money"
	"github.com/gpubridge/gpubridge/internal/table"
)

func TestCycleTable(t *testing.T) {
	j := Job{ID: 7, User: "alice", Reason: "QOSGrpGRES"}
	res := Result{
		Moved:  []Move{{Job: j, Tenant: "acme", GPUs: Request{"h100": 1}, Estimate: 100}},
		Failed: []Refusal{{JobID: 8, Tenant: "acme", User: "bob", GPUs: Request{"h100": 2}, Reason: MoveFailed, Detail: "gone"}},
		Plan: Plan{Minor: 2, Refusals: []Refusal{{JobID: 9, Tenant: "acme", User: "bob", GPUs: Request{"h100": 1},
			Reason: Cap, Detail: "needs 1"}}},
	}
	var b bytes.Buffer
	if err := table.Write(&b, table.Options{Parsable: true}, CycleTable(res, false)); err != nil {
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
	if err := table.Write(&b, table.Options{JSON: true}, CycleTable(Result{}, true)); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("empty cycle --json = %q", b.String())
	}
}

// testOverview is an overview with a bursting and a refused job of acme,
// and acme with a budget beside beta without one.
func testOverview(t *testing.T, only string) (Overview, error) {
	t.Helper()
	moved := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	budget := money.New(5000, money.Currency{Code: "EUR", Minor: 2})
	p := Plan{
		Minor: 2,
		Bursting: []Bursting{{JobID: 3, Tenant: "acme", User: "alice", State: "RUNNING", GPUs: Request{"h100": 1},
			Estimate: 600, Priced: true, Moved: true, Marker: Marker{Moved: moved, Reason: "QOSGrpGRES", Partition: "pool", QOS: "acme"}}},
		Refusals: []Refusal{{JobID: 4, Tenant: "acme", User: "alice", GPUs: Request{"h100": 1}, Reason: Budget, Detail: "over"}},
		Tenants: []TenantState{{Tenant: "acme", Enabled: true, MaxGPUs: 4, Budget: &budget, OnDemandGPUs: 1, Spent: 1000, InFlight: 600},
			{Tenant: "beta"}},
	}
	stored := []StoredRefusal{{Refusal: Refusal{JobID: 4, Reason: Budget}, FirstAt: moved.Add(time.Minute)}}
	return Summarize(p, stored, only)
}

func TestOverviewTables(t *testing.T) {
	ov, err := testOverview(t, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, tb := range []table.Table{ov.JobsTable(), ov.TenantsTable()} {
		if err := table.Write(&out, table.Options{Parsable: true}, tb); err != nil {
			t.Fatal(err)
		}
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
	all, err := testOverview(t, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	var got Overview
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Jobs) != 2 || len(got.Tenants) != 2 || got.Tenants[1].Budget != "" || got.Tenants[0].Left != "34.00" {
		t.Errorf("--json = %s", b)
	}
	out.Reset()
	if err := table.Write(&out, table.Options{Parsable: true, NoHeader: true}, all.TenantsTable()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "beta|off|0|0|none|") {
		t.Errorf("a tenant without a budget:\n%s", out.String())
	}
	if _, err := testOverview(t, "nobody"); err == nil {
		t.Error("unknown tenant: no error")
	}
}

func TestOverviewViews(t *testing.T) {
	ov := Overview{Jobs: []OverviewJob{{Tenant: "acme", JobID: 3}}, Tenants: []OverviewTenant{{Tenant: "acme"}}}
	cases := map[string]struct {
		which string
		o     table.Options
		want  []string // each table's second column, "raw" for the whole overview
		note  bool
	}{
		"both":          {want: []string{"JobID", "Burst"}},
		"jobs":          {which: "jobs", o: table.Options{Parsable: true}, want: []string{"JobID"}},
		"tenants":       {which: "tenants", o: table.Options{JSON: true}, want: []string{"Burst"}},
		"json":          {o: table.Options{JSON: true}, want: []string{"raw"}},
		"-P":            {o: table.Options{Parsable: true}, want: []string{"JobID"}, note: true},
		"json, format=": {o: table.Options{JSON: true, Format: []string{"jobid"}}, want: []string{"JobID"}, note: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ts, note := ov.Views(tc.which, tc.o)
			var got []string
			for _, x := range ts {
				if x.Header == nil {
					got = append(got, "raw")
				} else {
					got = append(got, x.Header[1])
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" || (note != "") != tc.note {
				t.Errorf("(-want +got)\n%s\nnote %q", d, note)
			}
		})
	}
}
