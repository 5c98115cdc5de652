// Package inventory holds the plain description of a node's NVIDIA GPUs and
// MIG devices that everything in gres/ works from: GPU, MIGDevice and
// Inventory, and their JSON form, which is also the fixture format
// (`gpubridge gres inventory --json` prints it, `--fixture FILE` replays it).
//
// It is pure: the NVML adapter (gres/device) fills these values; the catalog
// (gres/mig) and the renderer (gres/conf) read them. It must not import NVML,
// net/http, database/sql, os/exec or any adapter. It exists apart from
// gres/device because pure packages may not import the adapter
// (internal/archtest). Importers: the gres/ packages, cmd/gpubridge/app and
// cmd/gpubridge.
package inventory
