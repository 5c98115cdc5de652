// Package check defines gpubridge's node health checks and judges their
// output. It is pure: no I/O, no clock.
//
// A Check is a named bash command run on a node inside a Slurm job, with a
// timeout and a parser (by Kind) that turns the command's output into a
// Result: a Verdict (pass, warn or fail), a one-line Reason and measured
// Values. Thresholds per GPU model (the node's GRES type, e.g. h100) bound
// the values; a value listed in Judged must have a threshold for the
// node's model, or the check warns instead of passing (nvbandwidth and
// nccl-tests do not judge their own numbers).
//
// Built-ins (Builtins): dcgm-r1, dcgm-r2, dcgm-r3 (dcgmi diag in its table
// or -j JSON form, DCGM 3.x and 4.x), nvidia-smi-ecc and nvidia-smi-pages
// (nvidia-smi --query-gpu ... --format=csv), xid (NVRM Xid lines of the
// kernel log: nvidia-smi has no query for XIDs), nvbandwidth, nccl-1node
// and nccl-2node (nccl-tests all_reduce_perf, the latter through
// srun -N2). Any other command is a site check (KindSite): exit code 0
// passes, and key=value lines report values. NewCatalog overlays a site's
// definitions (Def) on the built-ins and validates them.
//
// Output that a parser cannot read, that is cut short or that misses the
// parts a complete run prints, is a fail with a reason, never a pass.
//
// A run (Script) is one batch job running several checks in turn; its
// script frames each check's output with marker lines, and Evaluate reads
// the job's output file back into one Outcome per check.
//
// This package must not import net/http, database/sql, sqlx, os/exec or any
// adapter (internal/archtest).
package check
