// Package metrics exports the reconciler's Prometheus metrics:
// gpubridge_reconcile_refusals_total{reason}, the plans the delete policy
// refused (reconcile.Reasons), counted by the use cases in
// bridge/tenantadmin (the daemon's periodic reconcile and the CLI's apply)
// through the Recorder. The daemon registers it on its registry.
//
// This package is an adapter of the Prometheus client.
package metrics
