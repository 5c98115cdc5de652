// Package slurmadapter implements bridge/reserve's Slurm port over the
// slurmrestd client: the pool's nodes (GPUs per type, down or drained) and
// every reservation in one read each, and reservation create, update and
// delete (REST v0.0.44/v0.0.43) with Slurm's error numbers mapped to the
// port's sentinels (2055 in use -> reserve.ErrInUse; 2016 nodes busy, 2058
// overlap -> reserve.ErrBusy; a delete of a missing reservation succeeds).
//
// This package imports bridge/reserve and internal/slurmrest; nothing imports
// it but cmd/.
package slurmadapter
