package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Cluster is one cluster of the site's slurmdbd that gpubridge serves
// (clusters:, docs/multi-cluster.md). What differs between clusters is
// set here: its name, how its slurmrestd is reached, its partitions, the
// guard table its slurmctld reads, the node classes that may be booked
// whole and the nodes whose health gpubridge manages. Everything else
// (the database, tenants, rate cards, schedules, the API) is the site's,
// once, at the top level.
//
// A configuration without clusters: serves one cluster, named by
// cluster: (or by its slurmrestd) and reached through the top-level
// slurmrest:, exactly as before.
type Cluster struct {
	// Name is the cluster's ClusterName in slurm.conf and slurmdbd.
	Name string `json:"name"`
	// SlurmRest reaches this cluster's own slurmrestd (each slurmrestd
	// answers for one cluster). A field left empty takes the top-level
	// slurmrest:'s value, so that a site with one JWT key and user names
	// only each url.
	SlurmRest SlurmRest `json:"slurmrest"`
	// PoolPartition and OnDemandPartition override tenants.poolPartition
	// and tenants.onDemandPartition for this cluster.
	PoolPartition     string `json:"poolPartition"`
	OnDemandPartition string `json:"onDemandPartition"`
	// GuardFile overrides tenants.guardFile: where this cluster's
	// slurmctld host reads the job_submit guard's tenant table.
	GuardFile string `json:"guardFile"`
	// NodeClasses override bookings.nodeClasses (node names are the
	// cluster's own).
	NodeClasses map[string][]string `json:"nodeClasses,omitempty"`
	// HealthNodes override health.nodes (the cluster's nodes whose health
	// gpubridge manages).
	HealthNodes []string `json:"healthNodes,omitempty"`
}

// MaxClusters bounds clusters: (a site's slurmdbd serves a handful).
const MaxClusters = 64

// Several reports whether the configuration lists clusters: (even one):
// the cluster names and their slurmrestd come from the list.
func (c Config) Several() bool { return len(c.Clusters) > 0 }

// Views are the configuration as each of its clusters sees it: for a
// configuration without clusters: the configuration itself, else one per
// listed cluster, in the file's order, with cluster: set to its name and
// the top-level slurmrest:, partitions, guard file, node classes and
// health nodes replaced by the cluster's where it sets them. Every part
// of gpubridge that serves one cluster (a client set, a daemon
// generation's jobs) is built from one view; the site-wide parts read the
// same values from every view.
func (c Config) Views() []Config {
	if !c.Several() {
		return []Config{c}
	}
	out := make([]Config, 0, len(c.Clusters))
	for _, cl := range c.Clusters {
		out = append(out, c.view(cl))
	}
	return out
}

// OfSeveral reports whether c is the view of one of the clusters a
// configuration lists under clusters: (Views). Such a cluster shares
// slurmdbd's global objects (its TRES, accounts, QOS) with the others, so
// what is its own must come from its own slurmctld: its GPU types are
// those of its nodes, not every typed GPU TRES of slurmdbd.
func (c Config) OfSeveral() bool { return c.ofSeveral }

// View is the view of the cluster named name, and whether the
// configuration serves it.
func (c Config) View(name string) (Config, bool) {
	for _, v := range c.Views() {
		if v.Cluster == name {
			return v, true
		}
	}
	return Config{}, false
}

// ClusterNames are the names of the clusters configured, in order; for a
// configuration without clusters: the one cluster: (empty when it is
// left to slurmrestd to name).
func (c Config) ClusterNames() []string {
	if !c.Several() {
		return []string{c.Cluster}
	}
	out := make([]string, len(c.Clusters))
	for i, cl := range c.Clusters {
		out[i] = cl.Name
	}
	return out
}

// view is c for cluster cl (Views).
func (c Config) view(cl Cluster) Config {
	v := c
	v.Clusters = nil
	v.ofSeveral = true
	v.Cluster = cl.Name
	v.SlurmRest = c.SlurmRest.over(cl.SlurmRest)
	v.Tenants.PoolPartition = or(cl.PoolPartition, c.Tenants.PoolPartition)
	v.Tenants.OnDemandPartition = or(cl.OnDemandPartition, c.Tenants.OnDemandPartition)
	v.Tenants.GuardFile = or(cl.GuardFile, c.Tenants.GuardFile)
	if cl.NodeClasses != nil {
		v.Bookings.NodeClasses = maps.Clone(cl.NodeClasses)
	}
	if cl.HealthNodes != nil {
		v.Health.Nodes = slices.Clone(cl.HealthNodes)
	}
	return v
}

// over is s with the fields o sets taken from o. A credential set in o
// replaces all three of s's (jwtKeyFile, token, tokenFile), so that a
// cluster's token file never meets the top level's key file.
func (s SlurmRest) over(o SlurmRest) SlurmRest {
	out := s
	out.URL = or(o.URL, s.URL)
	if o.JWTKeyFile != "" || o.Token != "" || o.TokenFile != "" {
		out.JWTKeyFile, out.Token, out.TokenFile = o.JWTKeyFile, o.Token, o.TokenFile
	}
	out.User = or(o.User, s.User)
	out.APIVersion = or(o.APIVersion, s.APIVersion)
	if o.Timeout.Duration != 0 {
		out.Timeout = o.Timeout
	}
	if o.MaxBodyBytes != 0 {
		out.MaxBodyBytes = o.MaxBodyBytes
	}
	return out
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// validateClusters checks clusters: (each name a Slurm cluster name, once;
// each cluster's own slurmrestd, reached as its view says) and, for a
// configuration without it, the top-level slurmrest:.
func (c Config) validateClusters(add func(field, format string, a ...any)) {
	if !c.Several() {
		c.SlurmRest.validate(add)
		return
	}
	if c.Cluster != "" {
		add("cluster", "is %q while clusters: lists the clusters; name each in clusters[].name and remove cluster: (and GPUBRIDGE_CLUSTER)", c.Cluster)
	}
	if len(c.Clusters) > MaxClusters {
		add("clusters", "lists %d clusters; at most %d", len(c.Clusters), MaxClusters)
		return
	}
	names := map[string]int{}
	urls := map[string]int{}
	for i, cl := range c.Clusters {
		at := fmt.Sprintf("clusters[%d].", i)
		switch j, dup := names[cl.Name]; {
		case !validName(cl.Name):
			add(at+"name", "%q is not a Slurm cluster name (letters, digits, '-' and '_'; the ClusterName of its slurm.conf)", cl.Name)
		case dup:
			add(at+"name", "%q is also clusters[%d]'s name; each cluster is listed once", cl.Name, j)
		default:
			names[cl.Name] = i
		}
		for field, name := range map[string]string{"poolPartition": cl.PoolPartition, "onDemandPartition": cl.OnDemandPartition} {
			if name != "" && !validName(name) {
				add(at+field, "%q is not a Slurm partition name (letters, digits, '-' and '_')", name)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(cl.NodeClasses)) {
			if len(cl.NodeClasses[k]) == 0 {
				add(at+"nodeClasses."+k, "lists no nodes; give the node names of the class (on this cluster)")
			}
			for _, n := range cl.NodeClasses[k] {
				if !validName(strings.ReplaceAll(n, ".", "_")) {
					add(at+"nodeClasses."+k, "%q is not a node name", n)
				}
			}
		}
		for j, n := range cl.HealthNodes {
			if !healthNodeList.MatchString(n) {
				add(fmt.Sprintf("%shealthNodes[%d]", at, j), "%q is not a node name or hostlist such as gpu-[01-16]", n)
			}
		}
		v := c.view(cl)
		v.SlurmRest.validate(func(field, format string, a ...any) {
			add(at+field, format, a...)
		})
		if u := strings.TrimRight(v.SlurmRest.URL, "/"); u != "" {
			if j, dup := urls[u]; dup {
				add(at+"slurmrest.url", "%q is also clusters[%d]'s; each slurmrestd answers for one cluster, so each cluster names its own", v.SlurmRest.URL, j)
			} else {
				urls[u] = i
			}
		}
	}
}
