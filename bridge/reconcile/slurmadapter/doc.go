// Package slurmadapter implements reconcile.Cluster over the slurmrest
// client: three bulk reads (QOS, accounts with coordinators, associations
// of the cluster) and batched writes. It also lists the GPU types the
// cluster tracks (for tenant validation) and writes the job_submit guard's
// data file.
//
// It is also the Cluster of bridge/tenantadmin (reconcile.Cluster plus
// GPUTypes), over the slurmrest client.
package slurmadapter
