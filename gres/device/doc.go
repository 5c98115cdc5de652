// Package device is the NVML adapter: the only package of gpubridge that
// imports go-nvml. Collect reads the node's GPUs and MIG devices through
// NVML and returns them as a plain inventory.Inventory; MIG capability
// device minors come from /proc/driver/nvidia-caps/mig-minors under a
// configurable root.
//
// It is read-only: it never changes MIG mode, clocks or any other device
// setting. Built without cgo (or off Linux), and on a machine without the
// NVIDIA driver, Collect fails with ErrNoNVML.
//
// Everything else in gres/ works on inventory values and must not import
// this package (internal/archtest); only the application layer
// (cmd/gpubridge/app) and cmd/gpubridge import it.
package device
