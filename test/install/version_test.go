package install

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDebVersion: packaging/deb/build.sh maps `git describe` to a Debian
// version that starts with a digit and sorts after the tag it follows.
func TestDebVersion(t *testing.T) {
	snapshot := regexp.MustCompile(`^0\.0~git[0-9]{14}\.[0-9a-f]{12}$`)
	cases := map[string]string{
		"v1.2.3":                  "1.2.3",
		"1.2.3":                   "1.2.3",
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
			out, err := exec.Command("bash", repo+"/packaging/deb/build.sh", "--version-of", in).CombinedOutput()
			got := strings.TrimSpace(string(out))
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			switch want {
			case "snapshot":
				if !snapshot.MatchString(got) {
					t.Errorf("got %q, want 0.0~git<time>.<hash>", got)
				}
			case "snapshot+dirty":
				if !strings.HasSuffix(got, "+dirty") || !snapshot.MatchString(strings.TrimSuffix(got, "+dirty")) {
					t.Errorf("got %q, want 0.0~git<time>.<hash>+dirty", got)
				}
			default:
				if got != want {
					t.Errorf("got %q, want %q", got, want)
				}
			}
		})
	}
	if out, err := exec.Command("dpkg", "--compare-versions", "1.2.3+4.gabc1234", "gt", "1.2.3").CombinedOutput(); err != nil {
		t.Errorf("1.2.3+4.gabc1234 does not sort after 1.2.3: %v %s", err, out)
	}
}
