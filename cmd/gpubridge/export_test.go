package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
)

// TestExportChargebackRefusesTableOptions: -P, -p and -n cannot apply to a
// CSV, JSON or FOCUS export; they are refused with exit status 2 before
// anything connects, never silently ignored.
func TestExportChargebackRefusesTableOptions(t *testing.T) {
	cases := map[string]struct {
		flag, want string
	}{
		"-P":             {"-P", "-P/--parsable2 does not apply"},
		"--parsable2":    {"--parsable2", "-P/--parsable2 does not apply"},
		"-p":             {"-p", "-p/--parsable does not apply"},
		"-n":             {"-n", "-n/--noheader does not apply"},
		"-P, format=csv": {"-P", "format=csv writes RFC 4180"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := cli(t, "export", "chargeback", "period=2026-11", "format=csv", c.flag)
			if code != 2 || out != "" || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no output, %q", code, out, errs, c.want)
			}
		})
	}
}

// TestExportJSONSchemaOffline: export chargeback --json (summary, and with
// detail=jobs) on a period with a booking charge, use inside it, a tenant
// with a profile and an account without a tenant matches
// docs/schema/export-chargeback.json; a booked column written as a string
// is refused.
func TestExportJSONSchemaOffline(t *testing.T) {
	card, err := pricing.ParseYAML([]byte(`
version: 1
currency: EUR
rates:
  - {type: h100, tier: reserved, perGPUHour: "2.10", from: 2026-01-01}
  - {type: h100, tier: booked, perGPUHour: "1.50", from: 2026-01-01}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := meter.ParsePeriod("2026-11")
	start := p.StartUnix() + 86400
	use := func(acct string, job uint32, tier meter.Tier, sec int64) meter.Line {
		return meter.Line{Usage: meter.Usage{Run: meter.RunKey{Cluster: "tb", JobID: job, Submit: start - 60}, Period: p, Tier: tier, Type: "h100",
			Count: 1, Start: start, End: start + sec, GPUSeconds: sec, Final: true}, Account: acct, User: "alice", Booked: p}
	}
	charge := use("acme", 0, meter.Booked, 36000)
	charge.Run, charge.User, charge.Charge, charge.Booking = meter.RunKey{Cluster: "tb"}, "", true, 7
	inside := use("acme", 11, meter.Booked, 3600)
	inside.Booking = 7
	ls := []meter.Line{use("acme", 10, meter.Reserved, 3600), charge, inside, use("orphan", 12, meter.Reserved, 60)}
	lines := func(_ context.Context, _ bool, fn func(meter.Line) error) error {
		for _, l := range ls {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
	m := export.Meta{Cluster: "tb", Period: p, Card: card, Tenants: ledger.Labels{"acme": "acme"},
		Profiles: export.Profiles{"acme": {Description: "Acme ML", Organization: "Acme", CostCenter: "CC-4711"}}}
	for _, detail := range []bool{false, true} {
		var b bytes.Buffer
		if err := export.Write(context.Background(), &b, m, lines, export.Options{Format: export.JSON, Detail: detail}); err != nil {
			t.Fatal(err)
		}
		validateJSON(t, "export chargeback", b.Bytes())
		bad := strings.Replace(b.String(), `"bookedGpuSeconds":36000`, `"bookedGpuSeconds":"36000"`, 1)
		if bad == b.String() {
			t.Fatalf("no booked GPU-seconds of 36000 in\n%s", b.String())
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if compileSchema(t, "export chargeback").Validate(v) == nil {
			t.Errorf("detail=%v: the schema accepts bookedGpuSeconds as a string", detail)
		}
	}
}
