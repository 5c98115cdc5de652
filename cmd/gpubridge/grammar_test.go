package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// cli runs gpubridge with an empty configuration file and none of the
// GPUBRIDGE_* variables (the testbed's included), and returns its exit
// status and output.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	for _, k := range config.EnvNames() {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	conf := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	code := run(append([]string{"--config", conf}, args...), strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}

// TestGrammar: --version, did-you-mean for commands and keys, modify
// without set refused with the fixed command, and the exit statuses of
// docs/cli.md (2 for what was typed, before anything connects).
func TestGrammar(t *testing.T) {
	cases := map[string]struct {
		args []string
		code int
		out  string
		err  []string
	}{
		"--version":       {args: []string{"--version"}, out: "gpubridge dev\n"},
		"version":         {args: []string{"version"}, out: "gpubridge dev\n"},
		"unknown command": {args: []string{"shwo", "nodes"}, code: 2, err: []string{`unknown command "shwo" for "gpubridge" (did you mean show?)`}},
		"unknown entity":  {args: []string{"show", "nodse"}, code: 2, err: []string{`unknown command "nodse" for "gpubridge show" (did you mean nodes?); one of `, "nodes"}},
		"unknown sub":     {args: []string{"gres", "invntory"}, code: 2, err: []string{`(did you mean inventory?)`}},
		"no entity":       {args: []string{"show"}, code: 2, err: []string{"show needs an entity: one of "}},
		"unknown flag":    {args: []string{"show", "nodes", "--bogus"}, code: 2, err: []string{"unknown flag: --bogus"}},
		"bad flag value":  {args: []string{"gres", "plan", "--gpus", "two"}, code: 2, err: []string{`invalid argument "two"`}},
		"missing arg":     {args: []string{"resume", "node"}, code: 2, err: []string{"requires at least 1 arg"}},
		"option typo":     {args: []string{"show", "usage", "peroid=2026-11"}, code: 2, err: []string{`unknown option or column "peroid" (did you mean period?); options: tenant, account, period, start, end; columns`}},
		"column typo":     {args: []string{"show", "usage", "where", "gputyp=h100"}, code: 2, err: []string{`unknown option or column "gputyp" (did you mean gpuType?)`}},
		"format typo":     {args: []string{"show", "nodes", "format=name,gpu"}, code: 2, err: []string{`format=gpu: no such column (did you mean gpus?); columns: name,state,partitions,gputype,gpus,gpusused`}},
		"burst column":    {args: []string{"show", "burst", "format=tenant,left"}, code: 1, err: []string{"slurmrest.jwtKeyFile"}}, // a tenants column: parsed, then slurmrestd is needed
		"mid-month start": {args: []string{"show", "usage", "start=2026-09-15"}, code: 2, err: []string{"start=2026-09-15: usage is kept per calendar month (UTC); give a month such as start=2026-09 or start=2026-10"}},
		"end before start": {args: []string{"show", "usage", "start=2026-10", "end=2026-10"}, code: 2,
			err: []string{"end=2026-10 is not after start=2026-10"}},
		"period and start": {args: []string{"show", "usage", "period=2026-10", "start=2026-09"}, code: 2, err: []string{"give period= or start=/end=, not both"}},
		"modify without set": {args: []string{"modify", "tenant", "acme", "gpus=h100:4"}, code: 2, err: []string{
			"the changes go after `set`: acme set gpus=h100:4", "\n  run: gpubridge modify tenant acme set gpus=h100:4\n"}},
		"where without set": {args: []string{"modify", "tenant", "where", "name=acme", "gpus=h100:4"}, code: 2, err: []string{
			"\n  run: gpubridge modify tenant where name=acme set gpus=h100:4\n"}},
		"where matches many": {args: []string{"modify", "tenant", "where", "name=acme,beta", "set", "gpus=h100:4"}, code: 2, err: []string{
			"where name=acme,beta matches 2; modify changes one at a time"}},
		"where matches none": {args: []string{"modify", "tenant", "where", "name=", "set", "gpus=h100:4"}, code: 2, err: []string{
			"where name=: give the one to change"}},
		"where and a name": {args: []string{"modify", "tenant", "acme", "where", "name=acme", "set", "gpus=h100:4"}, code: 2, err: []string{
			`"acme" and where name=acme: name it once`}},
		"booking where many": {args: []string{"modify", "booking", "where", "id=1,2", "set", "purpose=x"}, code: 2, err: []string{
			"where id=1,2 matches 2"}},
		"where wrong key": {args: []string{"modify", "tenant", "where", "tenant=acme", "set", "gpus=h100:4"}, code: 2, err: []string{
			`unknown option "tenant"; known options: name`}},
		"plan -f missing file": {args: []string{"plan", "-f", "/nonexistent/t.yaml"}, code: 2, err: []string{"tenants file: open /nonexistent/t.yaml"}},
		"plan -f two files":    {args: []string{"plan", "-f", "a.yaml", "b.yaml"}, code: 2, err: []string{"unknown command"}},
		"format on a non-show": {args: []string{"close", "period=2026-10", "format=x"}, code: 2, err: []string{`unknown option "format"`}},
		"two files":            {args: []string{"load", "ratecard", "-f", "a.yaml", "file=b.yaml"}, code: 2, err: []string{"-f a.yaml and file=b.yaml name two files; give one"}},
		"no file":              {args: []string{"load", "ratecard"}, code: 2, err: []string{"load ratecard needs -f FILE"}},
		"json and csv":         {args: []string{"export", "chargeback", "period=2026-10", "format=csv", "--json"}, code: 2, err: []string{"--json and format=csv: --json is format=json"}},
		"burst table":          {args: []string{"show", "burst", "table=all"}, code: 2, err: []string{"table=all: want jobs or tenants"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errw := cli(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errw)
			}
			if tc.out != "" && out != tc.out {
				t.Errorf("stdout %q, want %q", out, tc.out)
			}
			for _, w := range tc.err {
				if !strings.Contains(errw, w) {
					t.Errorf("stderr %q lacks %q", errw, w)
				}
			}
		})
	}
}

// TestCommandsLogWarningsOnly: a command prints what it did and logs only
// warnings; -v shows its info and debug log.
func TestCommandsLogWarningsOnly(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "gres.conf")
	args := []string{"gres", "generate", "--fixture", gresFixture("testbed-gpu-b"), "--node", "gpu-b", "--write", dst}
	code, _, errw := cli(t, args...)
	if code != 0 || strings.Contains(errw, "gres.conf written") || strings.Contains(errw, "level=INFO") {
		t.Errorf("without -v: exit %d, stderr %q", code, errw)
	}
	code, _, errw = cli(t, append([]string{"-v"}, args...)...)
	if code != 0 || !strings.Contains(errw, "level=INFO msg=\"gres.conf written\"") {
		t.Errorf("with -v: exit %d, stderr %q", code, errw)
	}
}

// showsWithoutColumns are the show commands that do not take format= and
// where filters through showArgs yet, with the file to change (their
// kv.Parse becomes a.showArgs with their tables).
var showsWithoutColumns = map[string]string{}

// TestEveryShowTakesFormat: every show command checks format= against its
// columns before it reads anything (an unknown column exits 2 naming the
// columns), except those listed as still to do.
func TestEveryShowTakesFormat(t *testing.T) {
	for _, path := range outputCommands(newRootCmd(&App{Env: &app.Env{}})) {
		if !strings.HasPrefix(path, "show ") {
			continue
		}
		t.Run(path, func(t *testing.T) {
			code, _, errw := cli(t, append(strings.Fields(path), "format=nosuchcolumn")...)
			ok := code == 2 && strings.Contains(errw, "format=nosuchcolumn: no such column") && strings.Contains(errw, "columns: ")
			if _, pending := showsWithoutColumns[path]; pending {
				if ok {
					t.Errorf("%s takes format= now: remove it from showsWithoutColumns", path)
				}
				return
			}
			if !ok {
				t.Errorf("exit %d, stderr %q: want exit 2 naming the columns", code, errw)
			}
		})
	}
}
