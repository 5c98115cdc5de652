package conf

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/gres/inventory"
)

// DeviceMap replaces the device files of rendered lines: each whole GPU of
// the node gets GPU+<n> and each MIG device MIG+<n>, numbered from 0 in
// rendering order (GPU index, then MIG device index), as a single File=.
// It is for test clusters whose slurmd sees fake device nodes (the
// testbed's /dev/fakenv<N> and /dev/fakemig<N>); an empty prefix keeps the
// real files.
type DeviceMap struct {
	GPU string
	MIG string
}

// Validate refuses prefixes that would not make a clean absolute device
// path (inventory.CheckDevicePath) once a number is appended.
func (d DeviceMap) Validate() error {
	for _, p := range []string{d.GPU, d.MIG} {
		if p == "" {
			continue
		}
		if why := checkPrefix(p); why != "" {
			return fmt.Errorf("device map %q: %s", d.String(), why)
		}
	}
	return nil
}

func checkPrefix(p string) string {
	if why := inventory.CheckDevicePath(p + "0"); why != "" {
		return fmt.Sprintf("%q is not an absolute path prefix that gives a device path such as /dev/fakemig0: %s", p, why)
	}
	return ""
}

// IsZero reports whether the map changes nothing.
func (d DeviceMap) IsZero() bool { return d.GPU == "" && d.MIG == "" }

// String is the flag form, "gpu=/dev/fakenv,mig=/dev/fakemig".
func (d DeviceMap) String() string {
	var parts []string
	if d.GPU != "" {
		parts = append(parts, "gpu="+d.GPU)
	}
	if d.MIG != "" {
		parts = append(parts, "mig="+d.MIG)
	}
	return strings.Join(parts, ",")
}

// ParseDeviceMap reads "gpu=PREFIX,mig=PREFIX" (either part optional).
func ParseDeviceMap(s string) (DeviceMap, error) {
	var d DeviceMap
	if strings.TrimSpace(s) == "" {
		return d, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || v == "" {
			return d, fmt.Errorf("device map %q: expected gpu=PREFIX or mig=PREFIX, got %q", s, part)
		}
		if why := checkPrefix(v); why != "" {
			return d, fmt.Errorf("device map %q: %s", s, why)
		}
		switch strings.ToLower(k) {
		case "gpu":
			if d.GPU != "" {
				return d, fmt.Errorf("device map %q: gpu given twice", s)
			}
			d.GPU = v
		case "mig":
			if d.MIG != "" {
				return d, fmt.Errorf("device map %q: mig given twice", s)
			}
			d.MIG = v
		default:
			return d, fmt.Errorf("device map %q: unknown kind %q (use gpu or mig)", s, k)
		}
	}
	return d, nil
}
