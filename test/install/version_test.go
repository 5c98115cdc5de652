package install

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestPackageVersion: packaging/version.sh maps `git describe` to the
// packages' version, which starts with a digit and sorts after the tag it
// follows, and a snapshot before any release, in dpkg and in rpm alike.
func TestPackageVersion(t *testing.T) {
	snapshot := regexp.MustCompile(`^0\.0\.0~git[0-9]{14}\.[0-9a-f]{12}$`)
	cases := map[string]string{
		"v1.2.3":                  "1.2.3",
		"1.2.3":                   "1.2.3",
		"v0.3.0":                  "0.3.0",
		"v2.0.0~rc1":              "2.0.0~rc1",
		"v1.2.3-4-gabc1234":       "1.2.3+4.gabc1234",
		"v1.2.3-4-gabc1234-dirty": "1.2.3+4.gabc1234+dirty",
		"3932971":                 "snapshot", // a hash that starts with digits is no version
		"e337881":                 "snapshot",
		"e337881-dirty":           "snapshot+dirty",
		"dev":                     "snapshot",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			out, err := exec.Command("bash", repo+"/packaging/version.sh", in).CombinedOutput()
			got := strings.TrimSpace(string(out))
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			switch want {
			case "snapshot":
				if !snapshot.MatchString(got) {
					t.Errorf("got %q, want 0.0.0~git<time>.<hash>", got)
				}
			case "snapshot+dirty":
				if !strings.HasSuffix(got, "+dirty") || !snapshot.MatchString(strings.TrimSuffix(got, "+dirty")) {
					t.Errorf("got %q, want 0.0.0~git<time>.<hash>+dirty", got)
				}
			default:
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			}
		})
	}
	// [older, newer] in both families' orders.
	order := [][2]string{
		{"1.2.3", "1.2.3+4.gabc1234"},
		{"0.0.0~git20261202052409.101c32559100", "0.0.1"},
		{"0.0.0~git20261202052409.101c32559100", "0.0.0"},
		{"2.0.0~rc1", "2.0.0"},
		// the snapshots of packaging/deb/build.sh, before nfpm
		{"0.0~git20261201102811.cec32754b655", "0.0.0~git20261201102811.cec32754b655"},
	}
	for _, o := range order {
		if out, err := exec.Command("dpkg", "--compare-versions", o[0], "lt", o[1]).CombinedOutput(); err != nil {
			t.Errorf("dpkg: %s does not sort before %s: %v %s", o[0], o[1], err, out)
		}
	}
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Log("rpm is not installed (make deps installs it): rpm's order not checked")
		return
	}
	for _, o := range order {
		out, err := exec.Command("rpm", "--eval", `%{lua: print(rpm.vercmp("`+o[0]+`", "`+o[1]+`"))}`).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "-1" {
			t.Errorf("rpm: %s does not sort before %s: %v %s", o[0], o[1], err, out)
		}
	}
}
