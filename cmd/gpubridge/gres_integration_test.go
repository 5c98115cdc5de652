//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/app"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/conf"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// gresDevice is one device of a gres.conf line after expanding File=.
type gresDevice struct{ Type, File, Cores string }

// gresDevices reads the gres.conf lines of one node; File=/dev/x[0-2]
// expands to three devices.
func gresDevices(t *testing.T, text, node string) []gresDevice {
	t.Helper()
	var out []gresDevice
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := map[string]string{}
		for _, w := range strings.Fields(line) {
			k, v, _ := strings.Cut(w, "=")
			f[strings.ToLower(k)] = v
		}
		if f["nodename"] != node || f["name"] != "gpu" {
			continue
		}
		for _, file := range expandBrackets(t, f["file"]) {
			out = append(out, gresDevice{Type: f["type"], File: file, Cores: f["cores"]})
		}
	}
	slices.SortFunc(out, func(a, b gresDevice) int { return strings.Compare(a.File, b.File) })
	return out
}

var bracket = regexp.MustCompile(`^(.*)\[(\d+)-(\d+)\]$`)

func expandBrackets(t *testing.T, s string) []string {
	m := bracket.FindStringSubmatch(s)
	if m == nil {
		return []string{s}
	}
	lo, _ := strconv.Atoi(m[2])
	hi, _ := strconv.Atoi(m[3])
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, fmt.Sprintf("%s%d", m[1], i))
	}
	return out
}

// The testbed's gpu-b is the inventory in test/fixtures/gres/testbed-gpu-b.json
// (one H100 with 7x 1g.10gb, one with 2x 3g.40gb) on fake device nodes.
// gpubridge renders its gres.conf; a real slurmd loads that file and
// reports the types and counts; slurmctld (through slurmrestd) reports the
// same GRES for the node; and `gres generate --check` agrees, or exits
// non-zero for an inventory with a different count.
func TestGresOnTestbed(t *testing.T) {
	env := testbed.Require(t)
	code, rendered, errs := gresRun(t, testbedGresArgs...)
	if code != 0 {
		t.Fatalf("gres generate: exit %d: %s", code, errs)
	}

	t.Run("rendered gres.conf matches what the testbed loads", func(t *testing.T) {
		live, err := os.ReadFile(filepath.Join(env.Root, "etc/slurm/gres.conf"))
		if err != nil {
			t.Fatal(err)
		}
		want := gresDevices(t, string(live), "gpu-b")
		if len(want) != 9 {
			t.Fatalf("the testbed's gres.conf has %d gpu-b devices, want 9:\n%s", len(want), live)
		}
		if diff := cmp.Diff(want, gresDevices(t, rendered, "gpu-b")); diff != "" {
			t.Errorf("gpu-b devices (-testbed +rendered):\n%s", diff)
		}
	})

	t.Run("a real slurmd loads the rendered gres.conf", func(t *testing.T) {
		// A private config directory inside the testbed root: the live
		// slurm.conf, the rendered gres.conf; `slurmd -G` prints the GRES
		// it would register and exits, leaving the running daemons alone.
		rel := fmt.Sprintf("tmp/gpubridge-gres-%d", time.Now().UnixNano())
		dir := filepath.Join(env.Root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		for _, f := range []string{"slurm.conf", "cgroup.conf", "plugstack.conf"} {
			b, err := os.ReadFile(filepath.Join(env.Root, "etc/slurm", f))
			if err != nil {
				if f == "plugstack.conf" {
					continue
				}
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("/etc/slurm/slurm.key", filepath.Join(dir, "slurm.key")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "gres.conf"), []byte(rendered), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := env.Run(ctx, "", nil, "sh", "-c", "SLURM_CONF=/"+rel+"/slurm.conf slurmd -N gpu-b -G 2>&1")
		if err != nil {
			t.Fatalf("slurmd -G: %v\n%s", err, out)
		}
		got := conf.NodeGres{}
		re := regexp.MustCompile(`Gres Name=gpu Type=(\S+) Count=(\d+) .*File=(\S+)`)
		for _, m := range re.FindAllStringSubmatch(out, -1) {
			n, _ := strconv.Atoi(m[2])
			got[m[1]] += n
		}
		if diff := cmp.Diff(conf.NodeGres{"1g.10gb": 7, "3g.40gb": 2}, got); diff != "" {
			t.Errorf("slurmd -G with the rendered gres.conf (-want +got):\n%s\n%s", diff, out)
		}
		for i := range 9 {
			if !strings.Contains(out, fmt.Sprintf("File=/dev/fakemig%d ", i)) {
				t.Errorf("slurmd did not load /dev/fakemig%d:\n%s", i, out)
			}
		}
	})

	t.Run("slurmrestd reports the rendered types and counts", func(t *testing.T) {
		var sink bytes.Buffer
		a := &App{Env: &app.Env{Stderr: &sink}, in: strings.NewReader(""), out: &sink, err: &sink}
		nodes, err := listSlurmNodes(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		got := conf.NodeGres{}
		for _, n := range nodes {
			if n.Name != "gpu-b" {
				continue
			}
			for _, g := range n.GRES {
				if g.Name == "gpu" {
					got[g.Type] += int(g.Count)
				}
			}
		}
		if diff := cmp.Diff(conf.NodeGres{"1g.10gb": 7, "3g.40gb": 2}, got); diff != "" {
			t.Errorf("gpu-b GRES in slurmrestd (-want +got):\n%s", diff)
		}
	})

	t.Run("--check agrees with Slurm", func(t *testing.T) {
		code, out, errs := gresRun(t, "gres", "generate", "--check", "--fixture", gresFixture("testbed-gpu-b"), "--node", "gpu-b")
		if code != 0 || !strings.Contains(out, "gres check gpu-b: OK") {
			t.Errorf("exit %d\n%s%s", code, out, errs)
		}
	})

	t.Run("--check fails on a different count", func(t *testing.T) {
		code, out, errs := gresRun(t, "gres", "generate", "--check", "--fixture", gresFixture("testbed-gpu-b-6x1g"), "--node", "gpu-b")
		if code == 0 || !strings.Contains(errs, "gpu:1g.10gb: inventory 6, Slurm 7") {
			t.Errorf("exit %d\n%s%s", code, out, errs)
		}
	})
}
