package conf

import (
	"fmt"
	"strings"

	"github.com/gpubridge/gpubridge/gres/inventory"
)

// AutoDetectGPUName is the type name slurmd's NVML autodetect gives a whole
// GPU: the NVML product name in lower case with spaces turned into
// underscores ("NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3").
func AutoDetectGPUName(product string) string {
	return strings.ReplaceAll(strings.ToLower(product), " ", "_")
}

// AutoDetectMIGName is the name slurmd's NVML autodetect gives a MIG
// device (Slurm's "MIG Profile"): the parent's autodetect name cut at its
// first '-', then "_<GPU-instance slices>g.<memory GiB, rounded>gb". So an
// A100-SXM4-40GB slice is "nvidia_a100_1g.5gb" and an H100 80GB HBM3 slice
// "nvidia_h100_80gb_hbm3_1g.10gb". The "+me" of a profile does not appear:
// 1g.10gb and 1g.10gb+me get the same name.
func AutoDetectMIGName(product string, m inventory.MIGDevice) string {
	base := AutoDetectGPUName(product)
	if i := strings.IndexByte(base, '-'); i >= 0 {
		base = base[:i]
	}
	return base + "_" + SlurmMIGSuffix(m)
}

// SlurmMIGSuffix is the profile part of a MIG device's autodetect name,
// "<slices>g.<GiB>gb", with the memory rounded to the nearest GiB (halves
// away from zero) as slurmd does. It is the default GRES type of a MIG
// device; it can differ from NVIDIA's profile name (which rounds by memory
// fraction), and then the Slurm one is the one that matches.
func SlurmMIGSuffix(m inventory.MIGDevice) string {
	gib := (m.MemoryMiB + 512) / 1024
	return fmt.Sprintf("%dg.%dgb", m.GPUInstanceSlices, gib)
}

// maxTypeName bounds a GRES type name.
const maxTypeName = 64

// checkTypeName accepts what Slurm reads as a GRES type and gres.conf can
// hold: letters, digits and - _ . + (h100, 1g.10gb, nvidia_h100_80gb_hbm3),
// at most maxTypeName of them.
func checkTypeName(t string) error {
	if t == "" {
		return fmt.Errorf("type name is empty")
	}
	if len(t) > maxTypeName {
		return fmt.Errorf("type name %q has %d characters; at most %d", t, len(t), maxTypeName)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.+", c) >= 0) {
			return fmt.Errorf("type name %q contains a character Slurm does not allow in a GRES type: %q (letters, digits, - _ . + only)", t, c)
		}
	}
	return nil
}

// matches reports whether slurmd would match a configured type to a
// detected name: a case-insensitive substring.
func matches(typ, autoName string) bool {
	return strings.Contains(strings.ToLower(autoName), strings.ToLower(typ))
}
