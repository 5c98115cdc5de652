package device

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrNoNVML means NVML cannot be used here: gpubridge was built without
// cgo, or the NVIDIA driver's libnvidia-ml.so.1 is not installed or not
// loaded.
var ErrNoNVML = errors.New("NVML is not available")

// Options say where to read from.
type Options struct {
	// Root is prepended to /proc/driver/nvidia-caps/mig-minors ("" is /),
	// for containers that mount the host's /proc elsewhere, and for tests.
	Root string
	// Host is recorded in the inventory; empty means os.Hostname.
	Host string
}

// MIGMinorsPath is where the driver lists the minors of MIG capability
// device files.
const MIGMinorsPath = "/proc/driver/nvidia-caps/mig-minors"

func (o Options) migMinorsFile() string {
	root := o.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, MIGMinorsPath)
}

func (o Options) host() string {
	if o.Host != "" {
		return o.Host
	}
	h, _ := os.Hostname()
	return h
}
