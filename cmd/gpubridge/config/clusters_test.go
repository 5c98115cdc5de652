package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readYAML writes doc to a file and reads it as Read does (file, no
// environment, then Validate).
func readYAML(t *testing.T, doc string) (Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpubridge.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return Read(p, false, func(string) (string, bool) { return "", false })
}

const twoClusters = `version: 1
slurmrest:
  jwtKeyFile: /etc/slurm/jwt_hs256.key
  user: slurm
  timeout: 20s
tenants:
  poolPartition: gpu
  onDemandPartition: ondemand
  guardFile: /var/lib/gpubridge/guard/tenants.table
bookings:
  nodeClasses:
    dgx: [gpu-a, gpu-b]
health:
  nodes: [gpu-a, gpu-b]
clusters:
  - name: train
    slurmrest:
      url: http://train-ctl:6820
  - name: infer
    slurmrest:
      url: http://infer-ctl:6820
      tokenFile: /etc/gpubridge/infer.jwt
      timeout: 5s
    poolPartition: mig
    guardFile: /var/lib/gpubridge/guard/infer.table
    nodeClasses:
      a100: [inf-01]
    healthNodes: ["inf-[01-04]"]
`

// Each cluster's view is the top level with what the cluster sets: its
// own name and slurmrestd, the shared credential and user unless it names
// its own, and its partitions, guard table, node classes and health nodes
// where it sets them.
func TestClusterViews(t *testing.T) {
	c, err := readYAML(t, twoClusters)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Several() || !slices.Equal(c.ClusterNames(), []string{"train", "infer"}) {
		t.Fatalf("ClusterNames() = %q; want train, infer", c.ClusterNames())
	}
	vs := c.Views()
	if len(vs) != 2 {
		t.Fatalf("%d views; want 2", len(vs))
	}
	train, infer := vs[0], vs[1]
	if train.Cluster != "train" || train.SlurmRest.URL != "http://train-ctl:6820" || train.SlurmRest.JWTKeyFile != "/etc/slurm/jwt_hs256.key" ||
		train.SlurmRest.User != "slurm" || train.SlurmRest.Timeout.Duration != 20*time.Second || train.Tenants.PoolPartition != "gpu" ||
		train.Tenants.GuardFile != "/var/lib/gpubridge/guard/tenants.table" || !slices.Equal(train.Bookings.NodeClasses["dgx"], []string{"gpu-a", "gpu-b"}) ||
		!slices.Equal(train.Health.Nodes, []string{"gpu-a", "gpu-b"}) || len(train.Clusters) != 0 {
		t.Errorf("train's view: %+v", train)
	}
	if infer.Cluster != "infer" || infer.SlurmRest.URL != "http://infer-ctl:6820" || infer.SlurmRest.TokenFile != "/etc/gpubridge/infer.jwt" ||
		infer.SlurmRest.JWTKeyFile != "" || infer.SlurmRest.User != "slurm" || infer.SlurmRest.Timeout.Duration != 5*time.Second ||
		infer.Tenants.PoolPartition != "mig" || infer.Tenants.OnDemandPartition != "ondemand" || infer.Tenants.GuardFile != "/var/lib/gpubridge/guard/infer.table" ||
		len(infer.Bookings.NodeClasses) != 1 || !slices.Equal(infer.Bookings.NodeClasses["a100"], []string{"inf-01"}) ||
		!slices.Equal(infer.Health.Nodes, []string{"inf-[01-04]"}) {
		t.Errorf("infer's view: %+v", infer)
	}
	if !train.OfSeveral() || !infer.OfSeveral() || c.OfSeveral() {
		t.Errorf("OfSeveral: views %v %v, the file %v; want true, true, false", train.OfSeveral(), infer.OfSeveral(), c.OfSeveral())
	}
	if err := train.Validate(); err != nil {
		t.Errorf("train's view does not validate on its own: %v", err)
	}
	if err := c.RequireSlurmRest(); err != nil {
		t.Errorf("RequireSlurmRest: %v", err)
	}
	// A view is a copy: changing one never changes another or the file's.
	train.Bookings.NodeClasses["dgx"][0] = "changed"
	infer.Health.Nodes[0] = "changed"
	if c.Views()[1].Health.Nodes[0] != "inf-[01-04]" || c.Clusters[1].HealthNodes[0] != "inf-[01-04]" {
		t.Errorf("a view shares its health nodes with the configuration")
	}
	if v, ok := c.View("infer"); !ok || v.SlurmRest.URL != "http://infer-ctl:6820" {
		t.Errorf("View(infer) = %+v, %v", v.SlurmRest, ok)
	}
	if _, ok := c.View("nosuch"); ok {
		t.Errorf("View(nosuch) found a cluster")
	}
}

// A configuration without clusters: is its own one view, as before.
func TestOneClusterIsItsOwnView(t *testing.T) {
	c, err := readYAML(t, "version: 1\ncluster: solo\nslurmrest:\n  url: http://127.0.0.1:6820\n  jwtKeyFile: /k\n")
	if err != nil {
		t.Fatal(err)
	}
	vs := c.Views()
	if c.Several() || len(vs) != 1 || vs[0].OfSeveral() || vs[0].Cluster != "solo" || vs[0].SlurmRest.URL != "http://127.0.0.1:6820" || !slices.Equal(c.ClusterNames(), []string{"solo"}) {
		t.Fatalf("views of a one-cluster file: %+v (names %q)", vs, c.ClusterNames())
	}
}

// Every wrong clusters: entry is named with its index and field and how
// to fix it, all at once.
func TestClusterProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want []string
	}{
		"cluster: beside clusters:": {
			"version: 1\ncluster: old\nslurmrest: {jwtKeyFile: /k}\nclusters:\n  - {name: a, slurmrest: {url: 'http://a:6820'}}\n",
			[]string{"cluster: is \"old\" while clusters: lists the clusters"},
		},
		"bad and repeated names": {
			"version: 1\nslurmrest: {jwtKeyFile: /k}\nclusters:\n  - {name: 'a b', slurmrest: {url: 'http://a:6820'}}\n  - {name: c, slurmrest: {url: 'http://c:6820'}}\n  - {name: c, slurmrest: {url: 'http://d:6820'}}\n  - {slurmrest: {url: 'http://e:6820'}}\n",
			[]string{"clusters[0].name: \"a b\" is not a Slurm cluster name", "clusters[2].name: \"c\" is also clusters[1]'s name", "clusters[3].name: \"\" is not a Slurm cluster name"},
		},
		"one slurmrestd for two clusters": {
			"version: 1\nslurmrest: {jwtKeyFile: /k, url: 'http://shared:6820'}\nclusters:\n  - {name: a}\n  - {name: b, slurmrest: {url: 'http://shared:6820/'}}\n",
			[]string{"clusters[1].slurmrest.url: \"http://shared:6820/\" is also clusters[0]'s; each slurmrestd answers for one cluster"},
		},
		"a cluster's own slurmrest fields": {
			"version: 1\nslurmrest: {jwtKeyFile: /k}\nclusters:\n  - {name: a, slurmrest: {url: 'ftp://a', apiVersion: v0.0.39, tokenFile: /t, token: x}}\n",
			[]string{"clusters[0].slurmrest.url: \"ftp://a\" is not an http(s) URL", "clusters[0].slurmrest.apiVersion: \"v0.0.39\" is not supported", "clusters[0].slurmrest.tokenFile: is set together with jwtKeyFile or token"},
		},
		"partitions, classes and nodes": {
			"version: 1\nslurmrest: {jwtKeyFile: /k}\nclusters:\n  - {name: a, slurmrest: {url: 'http://a:6820'}, poolPartition: 'p q', nodeClasses: {big: [], small: ['n 1']}, healthNodes: ['gpu a']}\n",
			[]string{"clusters[0].poolPartition: \"p q\" is not a Slurm partition name", "clusters[0].nodeClasses.big: lists no nodes", "clusters[0].nodeClasses.small: \"n 1\" is not a node name", "clusters[0].healthNodes[0]: \"gpu a\" is not a node name or hostlist"},
		},
		"an unknown key in an entry": {
			"version: 1\nslurmrest: {jwtKeyFile: /k}\nclusters:\n  - {name: a, slurmrest: {url: 'http://a:6820'}, partition: gpu}\n",
			[]string{"clusters[0].partition"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readYAML(t, tc.doc)
			if err == nil {
				t.Fatalf("Read accepted:\n%s", tc.doc)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Read error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// RequireSlurmRest names the cluster that has no credential.
func TestRequireSlurmRestPerCluster(t *testing.T) {
	c, err := readYAML(t, "version: 1\nclusters:\n  - {name: a, slurmrest: {url: 'http://a:6820', tokenFile: /t}}\n  - {name: b, slurmrest: {url: 'http://b:6820'}}\n")
	if err != nil {
		t.Fatal(err)
	}
	err = c.RequireSlurmRest()
	if err == nil || !strings.Contains(err.Error(), "clusters[1].slurmrest.jwtKeyFile") || strings.Contains(err.Error(), "clusters[0]") {
		t.Fatalf("RequireSlurmRest() = %v; want a problem with clusters[1] only", err)
	}
}
