package check

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func siteCheck(name, cmd string, timeout time.Duration) Check {
	return Check{Name: name, Kind: KindSite, Command: cmd, Timeout: timeout, Nodes: 1}
}

// TestScriptRunsUnderBash renders a run of four checks, runs it with bash
// and reads the output back: values, exit codes, a timeout, quoting.
func TestScriptRunsUnderBash(t *testing.T) {
	s := Script{Key: "r42-test", Model: "h100", GPUs: 4, Checks: []Check{
		siteCheck("ok", "echo \"gpus={{gpus}}\"\necho 'model={{model}}'\necho temp_c=41.5", time.Minute),
		siteCheck("quotes", `x='a "b" $HOME \n'; printf '%s\n' "$x" >/dev/null; echo "done=1"; cat <<'EOF'
heredoc inside
EOF`, time.Minute),
		siteCheck("bad", "echo reason=fan 3 stopped; exit 3", time.Minute),
		siteCheck("slow", "sleep 30", time.Second),
	}}
	script, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("script failed: %v\n%s\n--- script ---\n%s", err, out, script)
	}
	got := s.Evaluate(out)
	type brief struct {
		Check   string
		Verdict Verdict
		Reason  string
		Exit    int
		Values  []Value
	}
	var b []brief
	for _, o := range got {
		b = append(b, brief{o.Check, o.Result.Verdict, o.Result.Reason, o.ExitCode, o.Result.Values})
		if o.Start.IsZero() || o.End.Before(o.Start) {
			t.Errorf("%s: start %v end %v", o.Check, o.Start, o.End)
		}
	}
	want := []brief{
		{"ok", Pass, "", 0, []Value{{Name: "gpus", Value: 4}, {Name: "temp_c", Value: 41.5}}},
		{"quotes", Pass, "", 0, []Value{{Name: "done", Value: 1}}},
		{"bad", Fail, "fan 3 stopped (exit 3)", 3, nil},
		{"slow", Fail, "timed out after 1s", 124, nil},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("(-want +got)\n%s\n--- output ---\n%s", diff, out)
	}
	if !strings.Contains(string(got[0].Output), "model=h100") {
		t.Errorf("ok's evidence lacks model=h100: %q", got[0].Output)
	}
	if s.TimeLimit() != time.Minute+3*time.Minute+time.Second+4*killGrace {
		t.Errorf("TimeLimit = %s", s.TimeLimit())
	}
}

func TestEvaluateCutOutput(t *testing.T) {
	s := Script{Key: "r7", Checks: []Check{siteCheck("a", "true", time.Minute), siteCheck("b", "true", time.Minute), siteCheck("c", "true", time.Minute)}}
	out := "@@gpubridge-health r7 begin a 1700000000\nhello\n@@gpubridge-health r7 end a rc=0 1700000003\n" +
		"@@gpubridge-health r7 begin b 1700000003\npartial li"
	got := s.Evaluate([]byte(out))
	if got[0].Result.Verdict != Pass || got[0].End.Sub(got[0].Start) != 3*time.Second {
		t.Errorf("a: %+v", got[0])
	}
	if got[1].Result.Verdict != Fail || !strings.Contains(got[1].Result.Reason, "output ends before the check finished") {
		t.Errorf("b: %+v", got[1].Result)
	}
	if got[2].Result.Verdict != Fail || !strings.Contains(got[2].Result.Reason, "did not run") {
		t.Errorf("c: %+v", got[2].Result)
	}
	// Markers of another run (or forged by a command) are ordinary output.
	other := strings.ReplaceAll(out, "r7 ", "r8 ")
	for _, o := range s.Evaluate([]byte(other)) {
		if o.Result.Verdict != Fail {
			t.Errorf("%s passed on another run's markers", o.Check)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	ok := siteCheck("a", "true", time.Minute)
	cases := map[string]Script{
		"bad key":        {Key: "R 1", Checks: []Check{ok}},
		"no checks":      {Key: "r1"},
		"no timeout":     {Key: "r1", Checks: []Check{siteCheck("a", "true", 0)}},
		"bad name":       {Key: "r1", Checks: []Check{siteCheck("A;rm", "true", time.Minute)}},
		"heredoc end":    {Key: "r1", Checks: []Check{siteCheck("a", "echo\nGPUBRIDGE_CHECK_0_EOF\nrm -rf /", time.Minute)}},
		"forged markers": {Key: "r1", Checks: []Check{siteCheck("a", "echo '@@gpubridge-health r1 end a rc=0 1'", time.Minute)}},
	}
	for name, s := range cases {
		if _, err := s.Render(); err == nil {
			t.Errorf("%s: Render accepted it", name)
		}
	}
}
