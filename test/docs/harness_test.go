package docs

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// runFile extracts a testdata document's examples and runs them in one
// session; it returns the drifts and the skipped examples.
func runFile(t *testing.T, path string) (drifts []Drift, ran, skipped int) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	exs, err := Extract(path, string(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(t.TempDir(), os.Environ(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ex := range exs {
		if ex.Skip != "" {
			skipped++
			continue
		}
		ran++
		drifts = append(drifts, Run(s, ex)...)
	}
	return drifts, ran, skipped
}

// TestTrueDocumentPasses: every example of a true document matches, with
// its variable part (a time) normalised, its state (a variable, the
// directory, $?) carried from step to step, an elision, a setup mark, a
// file mark and
// one skip.
func TestTrueDocumentPasses(t *testing.T) {
	drifts, ran, skipped := runFile(t, "testdata/true.md")
	for _, d := range drifts {
		t.Error(d)
	}
	if ran != 4 || skipped != 1 {
		t.Errorf("ran %d and skipped %d examples, want 4 and 1", ran, skipped)
	}
}

// TestPlantedDriftFails: the one line planted wrong is reported, with the
// command's true output, and nothing else.
func TestPlantedDriftFails(t *testing.T) {
	drifts, _, _ := runFile(t, "testdata/drift.md")
	if len(drifts) != 1 {
		t.Fatalf("got %d drifts, want 1: %v", len(drifts), drifts)
	}
	d := drifts[0]
	if d.Step.Line != 4 || !reflect.DeepEqual(d.Got, []string{"Name   GPUs", "acme   h100:2"}) {
		t.Errorf("drift at line %d, got %q", d.Step.Line, d.Got)
	}
	if !strings.Contains(d.String(), "acme   h100:3") {
		t.Errorf("the report does not show the text's line:\n%s", d)
	}
}

func TestExtract(t *testing.T) {
	src := "intro\n```\n$ a \\\n  b\nout1\n\n$ c\n```\n\n```yaml\nkey: v\n```\n<!-- doc-test: skip needs a GPU -->\n\n```\n$ d\n```\n"
	exs, err := Extract("x.md", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 {
		t.Fatalf("got %d examples, want 2", len(exs))
	}
	want := []Step{{Line: 3, Cmd: "a \\\n  b", Want: []string{"out1"}, Next: 5}, {Line: 7, Cmd: "c", Next: 8}}
	if !reflect.DeepEqual(exs[0].Steps, want) || exs[0].Line != 2 || exs[0].Skip != "" {
		t.Errorf("first example: %+v", exs[0])
	}
	if k := exs[0].Key(); k != "x.md: $ a \\ | out1" {
		t.Errorf("key %q", k)
	}
	if exs[1].Skip != "needs a GPU" || exs[1].Steps[0].Cmd != "d" {
		t.Errorf("second example: %+v", exs[1])
	}
	if exs, err := Extract("y.md", "```\n# context\n$ cmd\nout\n```\n"); err != nil || len(exs) != 1 || !reflect.DeepEqual(exs[0].Steps, []Step{{Line: 3, Cmd: "cmd", Want: []string{"out"}, Next: 4}}) {
		t.Errorf("a block with context before its command: %+v, %v", exs, err)
	}
	if exs, err := Extract("t.md", "<!-- doc-test: setup make -->\n<!-- doc-test: teardown unmake -->\n```\n$ cmd\n```\n"); err != nil || len(exs) != 1 ||
		!reflect.DeepEqual(exs[0].Setup, []string{"make"}) || !reflect.DeepEqual(exs[0].Teardown, []string{"unmake"}) {
		t.Errorf("a block with a setup and a teardown mark: %+v, %v", exs, err)
	}
	if _, err := Extract("z.md", "```\n$ cmd\n"); err == nil {
		t.Error("a block not closed is accepted")
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "...", "z"}, []string{"a", "b", "c", "z"}, true},
		{[]string{"a", "...", "z"}, []string{"a", "z"}, true},
		{[]string{"a", "...", "z"}, []string{"a", "b"}, false},
		{[]string{"at 2026-12-02T08:00:00Z in 1.2s"}, []string{"at 2027-01-01T09:10:11Z in 35ms  "}, true},
		{[]string{"token gpb_abc123"}, []string{"token gpb_XYZ"}, true},
		{[]string{"h100=2"}, []string{"h100=3"}, false},
		{[]string{"Submitted batch job 23", "update jobid=23 qos=x: job 23 is held"}, []string{"Submitted batch job 4140", "update jobid=4140 qos=x: job 4140 is held"}, true},
		{[]string{"JobId=20 JobName=a"}, []string{"JobId=7 JobName=b"}, false},
		{[]string{"Name   State  GPUs", "-----  -----  ----", "gpu-b  IDLE   7"}, []string{"Name   State          GPUs", "-----  -------------  ----", "gpu-b  IDLE+RESERVED  7"}, true},
		{[]string{"gpu-b  IDLE   7"}, []string{"gpu-b  DOWN   7"}, false},
		// a JobID column holds the ids Slurm gave on that run; the other columns must match
		{[]string{"Tenant  JobID  User", "------  -----  ----", "b5a     23     alice", "b5a     24     alice"},
			[]string{"Tenant  JobID  User", "------  -----  ----", "b5a     4140   alice", "b5a     4141   alice"}, true},
		{[]string{"Tenant  JobID  GPUs", "------  -----  ----", "b5a     23     1"}, []string{"Tenant  JobID  GPUs", "------  -----  ----", "b5a     23     2"}, false},
		{[]string{"Tenant  JobID", "------  -----", "b5a     23"}, []string{"Tenant  JobID", "------  -----", "b5b     4140"}, false},
		{[]string{"Tenant  Held", "------  ----", "b5a     23"}, []string{"Tenant  Held", "------  ----", "b5a     4140"}, false},
		{[]string{"tenant,job_id,gpu_seconds", "acme,23,60"}, []string{"tenant,job_id,gpu_seconds", "acme,4140,60"}, true},
		{[]string{"tenant,job_id,gpu_seconds", "acme,23,60"}, []string{"tenant,job_id,gpu_seconds", "acme,4140,61"}, false},
		{[]string{`{"jobs":[{"id":72,"name":"eval","user":"erin"}]}`}, []string{`{"jobs":[{"id":10,"name":"eval","user":"erin"}]}`}, true},
		{[]string{`{"jobs":[{"id":72,"name":"eval","user":"erin"}]}`}, []string{`{"jobs":[{"id":10,"name":"train","user":"erin"}]}`}, false},
		{[]string{`{"id":1,"tenant":"acme"}`}, []string{`{"id":2,"tenant":"acme"}`}, false},
		{[]string{`holder="gpubridge apply by bob (pid 4242 on head1) since x"`}, []string{`holder="gpubridge apply by bob (pid 77 on vm) since x"`}, true},
		{[]string{`holder="gpubridge apply by bob (pid 4242 on head1) since x"`}, []string{`holder="gpubridge modify by bob (pid 77 on vm) since x"`}, false},
		// sacctmgr's DBD_FINI error now and then after its answer is noise; another error is not
		{[]string{" error: Only admins"}, []string{" error: Only admins", "sacctmgr: error: Getting response to message type: DBD_FINI"}, true},
		{[]string{" error: Only admins"}, []string{" error: Only admins", "sacctmgr: error: Getting response to message type: DBD_ADD_USERS"}, false},
	} {
		if got := Match(c.want, c.got); got != c.ok {
			t.Errorf("Match(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

// TestRewrite: the planted drift, rewritten with what the command printed,
// is the true document's text again.
func TestRewrite(t *testing.T) {
	src, err := os.ReadFile("testdata/drift.md")
	if err != nil {
		t.Fatal(err)
	}
	drifts, _, _ := runFile(t, "testdata/drift.md")
	got := Rewrite(string(src), drifts)
	if want := strings.Replace(string(src), "acme   h100:3", "acme   h100:2", 1); got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
}
