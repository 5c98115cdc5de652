package main

import (
	"strings"
	"testing"
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
