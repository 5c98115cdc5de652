// Package slurmcheck compares a node's rendered GPU configuration
// (gres/conf) with the node as slurmctld reports it through slurmrestd:
// the use case behind `gpubridge gres generate --check`, for the CLI and
// any other front end.
//
// It is glue between gres/conf (pure) and internal/slurmrest (the adapter);
// it takes the client as a one-method interface. Only cmd/gpubridge and
// cmd/gpubridge/app import it.
package slurmcheck
