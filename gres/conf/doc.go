// Package conf renders a node's Slurm GPU configuration from one NVML
// inventory: the gres.conf lines (explicit device lines, or the
// AutoDetect=nvml variant), the node's slurm.conf Gres= string, the typed
// AccountingStorageTRES entries, per-type TRESBillingWeights (a MIG type
// weighs its compute slices / 7 of its parent GPU), and the GPU type names
// tenant quotas use. All of them come from the same list of devices, so
// they cannot drift apart.
//
// Type names follow slurmd's NVML autodetect: a configured Type must be a
// substring of the name slurmd reports for the device
// (nvidia_h100_80gb_hbm3 for a whole H100, nvidia_h100_80gb_hbm3_1g.10gb for
// a MIG slice; https://slurm.schedmd.com/gres.html#MIG_Management). A name
// that would not match is refused, never rendered.
//
// Every input that reaches the files is checked before anything is
// rendered (inventory.Validate for what NVML reports; the node name, type
// names, --cores, --gpu-weight and --device-map here), and a refusal names
// the flag or field.
//
// It also counts the GPUs of the node GRES string slurmctld reports
// ("gpu:1g.10gb:7,gpu:3g.40gb:2(S:0)", read by internal/slurmstr) and
// compares them with the rendered ones (gres/slurmcheck, for `gpubridge
// gres generate --check`).
//
// The package is pure: it must not import NVML, net/http, database/sql,
// os/exec or any adapter (internal/archtest enforces it). Importers:
// cmd/gpubridge, the application layer (cmd/gpubridge/app) and gres/slurmcheck.
package conf
