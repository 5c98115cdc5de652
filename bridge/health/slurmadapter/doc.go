// Package slurmadapter connects the health service to Slurm through
// slurmrestd (internal/slurmrest): node states and reasons (DRAIN, DOWN,
// RESUME), the per-node health reservation that keeps tenants off a held
// node while its checks run, check jobs submitted as the health service
// user, the nodes running a tenant's jobs, the bookings' reservations
// (until bridge/reserve answers "nodes booked for a tenant"), and the
// check jobs' output files (Files).
//
// It imports bridge/health, internal/slurmrest and bridge/slurmconf (for
// hostlists); only cmd/ and tests import it.
package slurmadapter
