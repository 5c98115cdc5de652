// Package slurmadapter implements reconcile.Cluster over the slurmrest
// client: three bulk reads (QOS, accounts with coordinators, associations
// of the cluster) and batched writes. It also lists the GPU types the
// cluster tracks (for tenant validation) and writes the job_submit guard's
// data file.
//
// It is also the Cluster of bridge/tenantadmin (reconcile.Cluster plus
// GPUTypes). This is an adapter: it may import the slurmrest client and the
// domain packages; nothing in the domain imports it: only cmd/gpubridge and
// test/bench do.
package slurmadapter
