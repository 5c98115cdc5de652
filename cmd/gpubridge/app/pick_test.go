package app

import (
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// Pick chooses the view -M names; one cluster needs no -M; a one-cluster
// configuration takes -M as its name only when it names none.
func TestPick(t *testing.T) {
	two := config.Default()
	two.Clusters = []config.Cluster{{Name: "train", SlurmRest: config.SlurmRest{URL: "http://t:6820"}}, {Name: "infer", SlurmRest: config.SlurmRest{URL: "http://i:6820"}}}
	if v, err := Pick(two, "infer"); err != nil || v.Cluster != "infer" || v.SlurmRest.URL != "http://i:6820" || v.Several() {
		t.Errorf("Pick(two, infer) = %q %q several=%v, %v", v.Cluster, v.SlurmRest.URL, v.Several(), err)
	}
	for cluster, want := range map[string]string{"": "lists 2 clusters (train, infer): name the one to use with -M CLUSTER", "nosuch": "-M nosuch: not a cluster of the configuration (clusters: lists train, infer)"} {
		if _, err := Pick(two, cluster); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pick(two, %q) = %v; want %q", cluster, err, want)
		}
	}
	one := two
	one.Clusters = two.Clusters[:1]
	if v, err := Pick(one, ""); err != nil || v.Cluster != "train" {
		t.Errorf("Pick(one listed, \"\") = %q, %v; want train", v.Cluster, err)
	}

	solo := config.Default()
	if v, err := Pick(solo, ""); err != nil || v.Cluster != "" {
		t.Errorf("Pick(solo, \"\") = %q, %v", v.Cluster, err)
	}
	if v, err := Pick(solo, "c1"); err != nil || v.Cluster != "c1" {
		t.Errorf("Pick(solo without cluster:, c1) = %q, %v; want c1", v.Cluster, err)
	}
	solo.Cluster = "c1"
	if v, err := Pick(solo, "c1"); err != nil || v.Cluster != "c1" {
		t.Errorf("Pick(solo c1, c1) = %q, %v", v.Cluster, err)
	}
	if _, err := Pick(solo, "c2"); err == nil || !strings.Contains(err.Error(), "this configuration serves cluster c1") {
		t.Errorf("Pick(solo c1, c2) = %v; want a refusal naming c1", err)
	}
}
