package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthCommandsRefuseBadInput(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(conf, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
