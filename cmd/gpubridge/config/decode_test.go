package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadReportsEveryProblem: unknown keys at every depth (with the key
// meant), case-sensitive keys, values of the wrong type and invalid
// values are all reported at once, each at its field path.
func TestReadReportsEveryProblem(t *testing.T) {
	p := writeConfig(t, `version: 1
server:
  listne: 127.0.0.1:9180
  readTimeout: soon
  maxBodyBytes: lots
Cluster: x
slurmrest:
  url: ftp://nowhere
  timeout: 3s
schedules:
  burst: every now and then
bookings:
  nodeClasses:
    dgx: gpu-a
  defaultPolicy:
    maxGPUs: {h100: many}
health:
  checks:
    - name: nccl
      comand: /bin/true
  acceptance:
    checks: [xid]
    whenIdel: true
`)
	c, err := Read(p, false, envOf(nil))
	var ve ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a ValidationError, got %v", err)
	}
	got := map[string]string{}
	for _, e := range ve {
		got[e.Field] = e.Msg
	}
	want := map[string]string{
		"Cluster":                             "unknown key (did you mean cluster?)",
		"bookings.defaultPolicy.maxGPUs.h100": `is "many"; want a whole number`,
		"bookings.nodeClasses.dgx":            `is "gpu-a"; want a list`,
		"health.acceptance.whenIdel":          "unknown key (did you mean whenIdle?)",
		"health.checks[0].comand":             "unknown key (did you mean command?)",
		"schedules.burst":                     `"every now and then" is not a cron spec`,
		"server.listne":                       "unknown key (did you mean listen?)",
		"server.maxBodyBytes":                 `is "lots"; want a whole number`,
		"server.readTimeout":                  `duration "soon": want a value like 10s or 2m`,
		"slurmrest.url":                       `"ftp://nowhere" is not an http(s) URL`,
	}
	for f, w := range want {
		if !strings.Contains(got[f], w) {
			t.Errorf("%s: %q, want %q", f, got[f], w)
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("unexpected problem %s: %s", f, got[f])
		}
	}
	if !strings.Contains(err.Error(), "config "+p+": invalid configuration (10 problem(s))") {
		t.Errorf("message: %v", err)
	}
	// What was right is read; what was wrong keeps its default.
	if c.SlurmRest.Timeout.Duration != 3*time.Second || c.Server.ReadTimeout != Default().Server.ReadTimeout {
		t.Errorf("partial read: timeout %v, readTimeout %v", c.SlurmRest.Timeout, c.Server.ReadTimeout)
	}
}

func TestDecodeUnknownKeyListsKeys(t *testing.T) {
	c := Default()
	err := decode([]byte("server:\n  zzzz: 1\n"), &c)
	var ve ValidationError
	if !errors.As(err, &ve) || len(ve) != 1 || ve[0].Field != "server.zzzz" || !strings.Contains(ve[0].Msg, "unknown key; the keys here: listen, metricsListen, tlsCertFile") {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeKeepsValues(t *testing.T) {
	c := Default()
	err := decode([]byte(`version: 1
bookings:
  nodeClasses: {dgx: [gpu-a, gpu-b]}
  defaultPolicy: {maxWindow: 2d}
health:
  checks:
    - name: site
      command: /bin/true
      thresholds: {H100: {bw: {min: 10}}}
`), &c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string][]string{"dgx": {"gpu-a", "gpu-b"}}, c.Bookings.NodeClasses); d != "" {
		t.Error(d)
	}
	if c.Bookings.DefaultPolicy.MaxWindow.Duration != 48*time.Hour || c.Bookings.DefaultPolicy.MaxHorizon != Default().Bookings.DefaultPolicy.MaxHorizon {
		t.Errorf("defaultPolicy %+v", c.Bookings.DefaultPolicy)
	}
	if len(c.Health.Checks) != 1 || c.Health.Checks[0].Thresholds["H100"]["bw"].Min == nil || *c.Health.Checks[0].Thresholds["H100"]["bw"].Min != 10 {
		t.Errorf("checks %+v", c.Health.Checks)
	}
	// A mapping where a list goes, and a document that is no mapping.
	for text, field := range map[string]string{"health:\n  checks: {a: 1}\n": "health.checks", "- a\n": "(top)"} {
		c := Default()
		err := decode([]byte(text), &c)
		var ve ValidationError
		if !errors.As(err, &ve) || ve[0].Field != field {
			t.Errorf("%q: %v, want a problem at %s", text, err, field)
		}
	}
}
