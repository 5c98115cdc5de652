package sacctmgr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadableName(t *testing.T) {
	for s, want := range map[string]bool{"acme": true, "t3b0001u2": true, "a.b-c_d": true, "alice@lab": false, "": false, "Alice": false,
		"a b": false, "a,b": false, "a'": false, "a:b": false, "-x": false, "a\n": false} {
		if got := LoadableName(s); got != want {
			t.Errorf("LoadableName(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestFile(t *testing.T) {
	got, err := File("testbed", []Assoc{
		{Account: "acme", User: "alice", QOS: []string{"acme-gpu", "ondemand"}, DefaultQOS: "acme-gpu", DefaultAccount: "acme"},
		{Account: "beta", User: "bob"},
		{Account: "acme", User: "bob", QOS: []string{"acme-gpu"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `Cluster - 'testbed'
Parent - 'acme'
User - 'alice':DefaultAccount='acme':QOS='acme-gpu,ondemand':DefaultQOS='acme-gpu'
User - 'bob':QOS='acme-gpu'
Parent - 'beta'
User - 'bob'
`
	if string(got) != want {
		t.Errorf("File:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []Assoc{{Account: "a", User: "b c"}, {Account: "a", User: "b", QOS: []string{"q'"}}, {Account: "a", User: "B"}} {
		if _, err := File("testbed", []Assoc{bad}); err == nil || !strings.Contains(err.Error(), bad.User+" ("+bad.Account+")") {
			t.Errorf("unloadable %+v: err = %v, want one naming the association", bad, err)
		}
	}
}

func TestChunks(t *testing.T) {
	keys := []string{"a", "a", "b", "c", "c", "c", "d", "e", "e", "f"}
	key := func(i int) string { return keys[i] }
	for _, k := range []int{1, 2, 3, 4, 10, 20} {
		cs := Chunks(len(keys), k, key)
		if len(cs) == 0 || len(cs) > k || cs[0][0] != 0 || cs[len(cs)-1][1] != len(keys) {
			t.Fatalf("k=%d: chunks %v do not cover the keys in at most k parts", k, cs)
		}
		for i, c := range cs {
			if c[0] >= c[1] || i > 0 && cs[i-1][1] != c[0] {
				t.Fatalf("k=%d: chunks %v are not contiguous and non-empty", k, cs)
			}
			if c[0] > 0 && keys[c[0]] == keys[c[0]-1] {
				t.Errorf("k=%d: chunks %v split key %q", k, cs, keys[c[0]])
			}
		}
	}
	if cs := Chunks(1000, 4, func(i int) string { return fmt.Sprint(i) }); !slices.Equal(cs, [][2]int{{0, 250}, {250, 500}, {500, 750}, {750, 1000}}) {
		t.Errorf("1000 in 4: %v", cs)
	}
	if cs := Chunks(0, 4, key); cs != nil {
		t.Errorf("no items: %v", cs)
	}
}

// fake writes a script standing in for sacctmgr: it appends its arguments
// and its stdin to a log, and fails like sacctmgr does when stdin
// mentions nosuchqos.
func fake(t *testing.T) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	script := filepath.Join(dir, "sacctmgr")
	body := `#!/bin/sh
echo "ARGS $*" >> ` + log + `
in=$(cat)
printf '%s\n' "$in" >> ` + log + `
case $in in *nosuchqos*)
  echo "Accounts"
  echo " big table line of no interest"
  echo "sacctmgr: error: You gave a bad qos 'nosuchqos'. Valid QOS's are normal" >&2
  echo " Problem with requests: Unspecified error" >&2
  exit 1;;
esac
echo " Adding everything"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Runner{Argv: []string{script}, Cluster: "testbed", Parallel: 3}, log
}

func TestLoadAssocsReturnsTheFailedLoads(t *testing.T) {
	r, log := fake(t)
	var as []Assoc
	for i := range 9 {
		a := Assoc{Account: "acme", User: fmt.Sprintf("u%d", i), QOS: []string{"q"}}
		if i == 4 {
			a.QOS = []string{"nosuchqos"}
		}
		as = append(as, a)
	}
	failed, err := r.LoadAssocs(context.Background(), as)
	if err == nil {
		t.Fatal("no error for a failed load")
	}
	var names []string
	for _, a := range failed {
		names = append(names, a.User)
	}
	if !slices.Equal(names, []string{"u3", "u4", "u5"}) {
		t.Errorf("failed = %v, want the middle load's u3..u5", names)
	}
	msg := err.Error()
	for _, want := range []string{"load 3 user associations (u3 ... u5)", "bad qos 'nosuchqos'", "Problem with requests"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "table line") || len(msg) > 600 {
		t.Errorf("error carries sacctmgr's output, not its error lines: %q", msg)
	}
	b, _ := os.ReadFile(log)
	if got := strings.Count(string(b), "ARGS -i load file=/dev/stdin"); got != 3 {
		t.Errorf("%d loads ran, want 3:\n%s", got, b)
	}
}

func TestDeleteNamesInBoundedCommands(t *testing.T) {
	r, log := fake(t)
	var names []string
	for i := range 9000 {
		names = append(names, fmt.Sprintf("tenant-%05d-gpu", i)) // 15 bytes + comma each: 144 KB
	}
	if left, err := r.DeleteQOS(context.Background(), names); err != nil || left != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	var got []string
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "ARGS -i delete qos name="); ok {
			if len(rest) > maxArgBytes {
				t.Errorf("one command carries %d bytes of names", len(rest))
			}
			got = append(got, strings.Split(rest, ",")...)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("the commands named %d QOS, want the 9000 in order", len(got))
	}
	if left, err := r.DeleteAccounts(context.Background(), []string{"ok", "bad,name"}); err == nil || !strings.Contains(err.Error(), `"bad,name"`) || len(left) != 2 {
		t.Errorf("a name with a comma: err = %v, left %v", err, left)
	}
}
