// Package mig is the MIG profile catalog and placement rules for the GPU
// models gpubridge supports (A100-40GB, A100-80GB, H100-80GB, H200-141GB,
// B200), the validation of a layout on one GPU, the layout planner across a
// set of GPUs (taken from an inventory, InventoryGPUs, or a model and a
// count, ModelGPUs; at most MaxGPUs), and the nvidia-mig-parted config a
// plan is written as.
//
// gpubridge never changes MIG mode or creates instances itself: a plan is
// applied by nvidia-mig-parted.
//
// The package is pure: it must not import NVML (go-nvml), net/http,
// database/sql, os/exec or any adapter (internal/archtest enforces it).
// Importers: gres/conf, cmd/gpubridge/app and cmd/gpubridge.
package mig
