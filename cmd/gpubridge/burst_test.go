package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/burst"
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

// TestShowBurstOneTable: -P prints one table (the jobs, and says so on
// stderr, or the one table= names); aligned output prints both; --json the
// whole overview, or the array of table=.
func TestShowBurstOneTable(t *testing.T) {
	ov := burst.Overview{Jobs: []burst.OverviewJob{{Tenant: "acme", JobID: 3, User: "alice", Status: "bursting"}},
		Tenants: []burst.OverviewTenant{{Tenant: "acme", Burst: true, Cap: 4}}}
	cases := map[string]struct {
		o             table.Options
		which         string
		want, wantErr string
	}{
		"-P":            {o: table.Options{Parsable: true}, want: "Tenant|JobID|User|Status|State|GPUs|Since|Reason|Detail\nacme|3|alice|bursting|||||\n", wantErr: "the jobs table (table=tenants"},
		"-p tenants":    {o: table.Options{Trailing: true, NoHeader: true}, which: "tenants", want: "acme|on|4|0|none||||-|\n"},
		"aligned, both": {o: table.Options{NoHeader: true}, want: "acme  3  alice  bursting          \n\nacme  on  4  0  none        -\n"},
		"json":          {o: table.Options{JSON: true}, want: `{"jobs":[{"tenant":"acme","jobId":3,"user":"alice","status":"bursting","state":"","gpus":"","reason":"","detail":""}],"tenants":[{"tenant":"acme","burst":true,"maxOnDemandGPUs":4,"onDemandGPUs":0,"spent":"","inFlight":"","committed":""}]}`},
		"json tenants":  {o: table.Options{JSON: true}, which: "tenants", want: `[{"tenant":"acme","burst":true,"maxOnDemandGPUs":4,"onDemandGPUs":0,"spent":"","inFlight":"","committed":""}]`},
		"format, where": {o: table.Options{Parsable: true, Format: []string{"jobid"}, Where: map[string]string{"user": "alice"}}, want: "JobID\n3\n", wantErr: "the jobs table"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			a := &App{Env: &app.Env{}, out: &out, err: &errw, output: tc.o}
			if err := a.printBurst(ov, tc.which); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if tc.o.JSON {
				var c bytes.Buffer
				if err := json.Compact(&c, out.Bytes()); err != nil {
					t.Fatal(err)
				}
				got = c.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if !strings.Contains(errw.String(), tc.wantErr) || (tc.wantErr == "" && errw.Len() > 0) {
				t.Errorf("stderr %q, want %q", errw.String(), tc.wantErr)
			}
		})
	}
}
