package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

func TestHealthCommandsRefuseBadInput(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Offline, as in the unit run: with the testbed's database the unknown
	// tenant x would be named before the bad value.
	t.Setenv("GPUBRIDGE_DB_DSN", "")
	os.Unsetenv("GPUBRIDGE_DB_DSN")
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"no node":           {[]string{"check", "node"}, 2, "requires at least 1 arg"},
		"two nodes":         {[]string{"check", "node", "a", "b"}, 2, "check node takes one node name"},
		"bad wait":          {[]string{"check", "node", "gpu-a", "wait=soon"}, 2, `wait="soon": want a duration`},
		"unknown option":    {[]string{"check", "node", "gpu-a", "chek=xid"}, 2, `unknown option "chek"`},
		"bad run id":        {[]string{"show", "checks", "run=x"}, 2, `run="x": want a run id`},
		"bad since":         {[]string{"show", "checks", "since=yesterday"}, 2, `since="yesterday"`},
		"positional":        {[]string{"show", "health", "gpu-a"}, 2, `unexpected "gpu-a": use node=NAME`},
		"history alone":     {[]string{"show", "health", "history"}, 2, "history is a tenant's view: add tenant=NAME"},
		"since alone":       {[]string{"show", "health", "since=1h"}, 2, "since= goes with history tenant=NAME"},
		"bad history since": {[]string{"show", "health", "history", "tenant=x", "since=week"}, 2, `since="week": want a duration`},
		"peer typo":         {[]string{"check", "node", "gpu-a", "peers=gpu-b"}, 2, `unknown option "peers"`},
		"no managed nodes":  {[]string{"show", "health"}, 1, "health.nodes: lists no node"},
		"resume two":        {[]string{"resume", "node", "a", "b"}, 2, "resume node takes one node name"},
		"run-once junk":     {[]string{"health", "run-once", "quick"}, 2, `unexpected "quick": use schedule=NAME`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := run(append([]string{"--config", conf}, tc.args...), strings.NewReader(""), &out, &errw)
			if code != tc.code || !strings.Contains(errw.String(), tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, errw.String(), tc.code, tc.msg)
			}
		})
	}
}

// TestHealthJudge: health judge runs a check's parser and thresholds on a
// saved output (a fixture), reading stdin for "-"; an unknown check or a
// missing file is bad input.
func TestHealthJudge(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\nhealth:\n  checks:\n    - name: nccl-2node\n      thresholds: {h100: {busbw_gbps: {min: 150}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fx := "../../bridge/health/check/testdata/"
	judge := func(stdin string, args ...string) (int, string, string) {
		var out, errw bytes.Buffer
		code := run(append([]string{"--config", conf, "-P", "-n", "health", "judge"}, args...), strings.NewReader(stdin), &out, &errw)
		return code, out.String(), errw.String()
	}
	if code, out, errs := judge("", "nvidia-smi-ecc", fx+"smi-ecc-fail.csv", "gpus=4"); code != 0 || !strings.Contains(out, "|nvidia-smi-ecc|fail|GPU 1 ecc_uncorrected_volatile=2|") {
		t.Errorf("judge smi-ecc-fail: %d %q %q", code, out, errs)
	}
	if code, out, errs := judge("", "nccl-2node", fx+"nccl-2node-h100.txt", "model=h100", "gpus=4"); code != 0 || !strings.Contains(out, "|nccl-2node|pass||") || !strings.Contains(out, "hosts=2") {
		t.Errorf("judge nccl-2node with the site's threshold: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(fx + "xid-79.txt")
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errs := judge(string(b), "xid", "-"); code != 0 || !strings.Contains(out, "|xid|fail|Xid 79") {
		t.Errorf("judge xid from stdin: %d %q %q", code, out, errs)
	}
	if code, _, errs := judge("", "nope", fx+"xid-79.txt"); code != 2 || !strings.Contains(errs, `unknown check "nope"`) {
		t.Errorf("unknown check: %d %q", code, errs)
	}
	if code, _, errs := judge("", "xid", fx+"no-such-file"); code != 2 || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: %d %q", code, errs)
	}
	if code, _, errs := judge("", "xid", fx+"xid-79.txt", "gpus=many"); code != 2 || !strings.Contains(errs, `gpus="many": want a number`) {
		t.Errorf("bad gpus: %d %q", code, errs)
	}
}

// TestGPUScriptRunsTheBuiltinCommands: test/gpu/run.sh runs the very
// nvidia-smi queries of the built-in checks.
func TestGPUScriptRunsTheBuiltinCommands(t *testing.T) {
	script, err := os.ReadFile("../../test/gpu/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nvidia-smi-ecc", "nvidia-smi-pages"} {
		if cmd := check.Builtins()[name].Command; !strings.Contains(string(script), "'"+cmd+"'") {
			t.Errorf("test/gpu/run.sh does not run %s's command %q", name, cmd)
		}
	}
	for _, bad := range []string{"-mig", "--lock-gpu-clocks", "-lgc", "-ac ", "--applications-clocks", "-pm ", "--gpu-reset", "-r ", "-pl "} {
		if strings.Contains(string(script), "nvidia-smi "+bad) {
			t.Errorf("test/gpu/run.sh changes a GPU setting: nvidia-smi %s", bad)
		}
	}
}
