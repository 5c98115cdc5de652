// Package slurmstr holds small helpers for Slurm's string syntax that
// several packages parse: GRES lists (`gpu:h100:4(S:0-1),gpu:1g.10gb:7`)
// and hostlists (`gpu-[a,c-d]`). Pure: no I/O.
package slurmstr
