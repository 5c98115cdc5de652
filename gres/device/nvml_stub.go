//go:build !(linux && cgo)

package device

import (
	"fmt"

	"github.com/gpubridge/gpubridge/gres/inventory"
)

// Collect fails: this build has no NVML (it needs Linux and cgo).
func Collect(o Options) (inventory.Inventory, error) {
	return inventory.Inventory{}, fmt.Errorf("%w: this gpubridge was built without cgo (or not for Linux); rebuild with CGO_ENABLED=1 on Linux, or use --fixture", ErrNoNVML)
}
