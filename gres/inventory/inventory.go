package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// CurrentVersion is the fixture format version this build reads and writes.
const CurrentVersion = 1

// Inventory is everything NVML reported about one node's GPUs.
type Inventory struct {
	Version       int    `json:"version"`
	Host          string `json:"host,omitempty"`
	DriverVersion string `json:"driverVersion,omitempty"`
	NVMLVersion   string `json:"nvmlVersion,omitempty"`
	GPUs          []GPU  `json:"gpus"`
}

// MIGMode is a GPU's MIG mode as NVML reports it.
type MIGMode string

// MIG modes. Unsupported is a GPU without MIG (NVML: NOT_SUPPORTED).
const (
	MIGEnabled     MIGMode = "enabled"
	MIGDisabled    MIGMode = "disabled"
	MIGUnsupported MIGMode = "unsupported"
)

// GPU is one physical GPU.
type GPU struct {
	// Index is NVML's device index (PCI bus order); Minor is the minor number
	// of its device file /dev/nvidia<Minor>. They may differ.
	Index int    `json:"index"`
	Minor int    `json:"minor"`
	UUID  string `json:"uuid,omitempty"`
	// Name is the product name exactly as NVML reports it
	// ("NVIDIA H100 80GB HBM3"); slurmd's autodetect names derive from it.
	Name        string `json:"name,omitempty"`
	PCIDeviceID string `json:"pciDeviceId,omitempty"` // "0x233010DE"
	MemoryMiB   uint64 `json:"memoryMiB,omitempty"`
	// MIGCurrent is the mode in force; MIGPending the mode after the next
	// GPU reset. They differ while a change is pending.
	MIGCurrent MIGMode     `json:"migCurrent,omitempty"`
	MIGPending MIGMode     `json:"migPending,omitempty"`
	MIGDevices []MIGDevice `json:"migDevices,omitempty"`
	// Lost, when set, is why NVML could not describe this GPU (for example
	// "GPU is lost"); the other fields except Index may then be empty.
	Lost string `json:"lost,omitempty"`
}

// MIGDevice is one MIG device: a compute instance inside a GPU instance.
type MIGDevice struct {
	Index int    `json:"index"` // MIG device index within the parent GPU
	UUID  string `json:"uuid,omitempty"`
	// Profile is NVIDIA's profile name: "1g.10gb", "1g.10gb+me", or
	// "1c.3g.40gb" for a compute instance smaller than its GPU instance.
	Profile           string `json:"profile"`
	GPUInstanceID     int    `json:"gpuInstanceId"`
	ComputeInstanceID int    `json:"computeInstanceId"`
	// GPUInstanceSlices and ComputeInstanceSlices count compute slices (of 7
	// on A100/H100/H200/B200).
	GPUInstanceSlices     int    `json:"gpuInstanceSlices"`
	ComputeInstanceSlices int    `json:"computeInstanceSlices"`
	MemoryMiB             uint64 `json:"memoryMiB"`
	// Placement is where the GPU instance sits on the memory-slice axis.
	Placement Placement `json:"placement"`
	// Files are the device files a job needs: /dev/nvidia<minor> and the
	// GPU-instance and compute-instance capability files
	// /dev/nvidia-caps/nvidia-cap<N> (minors from
	// /proc/driver/nvidia-caps/mig-minors).
	Files []string `json:"files"`
}

// Placement is a GPU instance's start slot and size in memory slices.
type Placement struct {
	Start int `json:"start"`
	Size  int `json:"size"`
}

// DeviceFile is the GPU's device file, /dev/nvidia<Minor>.
func (g GPU) DeviceFile() string { return fmt.Sprintf("/dev/nvidia%d", g.Minor) }

// MIGActive reports whether MIG is enabled now (not just pending).
func (g GPU) MIGActive() bool { return g.MIGCurrent == MIGEnabled }

// MIGChangePending reports whether the MIG mode changes at the next reset.
func (g GPU) MIGChangePending() bool {
	return g.MIGPending != "" && g.MIGCurrent != MIGUnsupported && g.MIGPending != g.MIGCurrent
}

// Validate checks the values are consistent; every problem is reported.
func (inv Inventory) Validate() error {
	var pr problems
	if inv.Version != CurrentVersion {
		pr.add("version: %d is not supported (this build reads version %d)", inv.Version, CurrentVersion)
	}
	pr.text("host", inv.Host, hostName)
	pr.text("driverVersion", inv.DriverVersion, version)
	pr.text("nvmlVersion", inv.NVMLVersion, version)
	if len(inv.GPUs) > MaxGPUs {
		pr.add("gpus: %d GPUs; a node has at most %d", len(inv.GPUs), MaxGPUs)
	}
	seen := map[int]bool{}
	for i, g := range inv.GPUs {
		p := fmt.Sprintf("gpus[%d]", i)
		if seen[g.Index] {
			pr.add("%s: GPU index %d appears twice", p, g.Index)
		}
		seen[g.Index] = true
		pr.gpu(p, g)
	}
	return errors.Join(pr...)
}

// problems are what Validate found wrong, each with its field path.
type problems []error

// add records one problem.
func (pr *problems) add(format string, a ...any) { *pr = append(*pr, fmt.Errorf(format, a...)) }

// text records a problem when v is not text of kind.
func (pr *problems) text(field, v string, kind textKind) {
	if why := kind.check(v); why != "" {
		pr.add("%s: %s", field, why)
	}
}

// gpu checks one GPU (at field path p): its numbers and names, its MIG
// modes, and its MIG devices. A lost GPU has only its index and why.
func (pr *problems) gpu(p string, g GPU) {
	if g.Index < 0 || g.Index >= maxNumber {
		pr.add("%s: index %d is not from 0 to %d", p, g.Index, maxNumber-1)
	}
	pr.text(p+".lost", g.Lost, message)
	if g.Lost != "" {
		return
	}
	if g.Minor < 0 || g.Minor >= maxNumber {
		pr.add("%s: minor %d is not from 0 to %d", p, g.Minor, maxNumber-1)
	}
	if g.Name == "" {
		pr.add("%s: name is empty", p)
	}
	pr.text(p+".name", g.Name, productName)
	pr.text(p+".uuid", g.UUID, uuid)
	pr.text(p+".pciDeviceId", g.PCIDeviceID, pciID)
	switch g.MIGCurrent {
	case MIGEnabled, MIGDisabled, MIGUnsupported:
	default:
		pr.add("%s: migCurrent %q is not one of enabled, disabled, unsupported", p, g.MIGCurrent)
	}
	switch g.MIGPending {
	case MIGEnabled, MIGDisabled, MIGUnsupported, "":
	default:
		pr.add("%s: migPending %q is not one of enabled, disabled, unsupported", p, g.MIGPending)
	}
	if !g.MIGActive() && len(g.MIGDevices) > 0 {
		pr.add("%s: has %d MIG devices but MIG is %s", p, len(g.MIGDevices), g.MIGCurrent)
	}
	if len(g.MIGDevices) > maxMIGDevices {
		pr.add("%s: %d MIG devices; a GPU has at most %d", p, len(g.MIGDevices), maxMIGDevices)
	}
	for j, m := range g.MIGDevices {
		pr.migDevice(fmt.Sprintf("%s.migDevices[%d]", p, j), m)
	}
}

// migDevice checks one MIG device (at field path q): its profile, UUID,
// index, slices and device files.
func (pr *problems) migDevice(q string, m MIGDevice) {
	if m.Profile == "" {
		pr.add("%s: profile is empty", q)
	}
	pr.text(q+".profile", m.Profile, profile)
	pr.text(q+".uuid", m.UUID, uuid)
	if m.Index < 0 || m.Index >= maxNumber {
		pr.add("%s: index %d is not from 0 to %d", q, m.Index, maxNumber-1)
	}
	for k, f := range m.Files {
		if why := CheckDevicePath(f); why != "" {
			pr.add("%s.files[%d]: %s", q, k, why)
		}
	}
	if m.GPUInstanceSlices <= 0 {
		pr.add("%s: gpuInstanceSlices must be positive", q)
	}
	if len(m.Files) == 0 {
		pr.add("%s: no device files", q)
	}
}

// Sorted returns a copy with GPUs in index order and MIG devices in MIG
// index order, the order every renderer uses.
func (inv Inventory) Sorted() Inventory {
	out := inv
	out.GPUs = slices.Clone(inv.GPUs)
	slices.SortStableFunc(out.GPUs, func(a, b GPU) int { return a.Index - b.Index })
	for i := range out.GPUs {
		out.GPUs[i].MIGDevices = slices.Clone(out.GPUs[i].MIGDevices)
		slices.SortStableFunc(out.GPUs[i].MIGDevices, func(a, b MIGDevice) int { return a.Index - b.Index })
	}
	return out
}

// Encode writes inv as indented JSON, the fixture format.
func Encode(w io.Writer, inv Inventory) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(inv)
}

// MaxFileSize bounds an inventory's JSON. Eight GPUs with seven MIG
// devices each take about 20 KiB; a larger file is not an inventory.
const MaxFileSize = 1 << 20

// Decode reads a fixture; unknown fields are errors, so a typo is not
// silently ignored, and so is more than MaxFileSize bytes.
func Decode(r io.Reader) (Inventory, error) {
	var inv Inventory
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return inv, fmt.Errorf("decode inventory: %w", err)
	}
	if len(b) > MaxFileSize {
		return inv, fmt.Errorf("decode inventory: more than %d KiB; an inventory is far smaller (about 20 KiB for 8 GPUs): is it the right file?", MaxFileSize>>10)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		return inv, fmt.Errorf("decode inventory: %w", err)
	}
	if dec.More() {
		return inv, errors.New("decode inventory: trailing data after the JSON object")
	}
	if err := inv.Validate(); err != nil {
		return inv, fmt.Errorf("invalid inventory:\n%w", indent(err))
	}
	return inv, nil
}

// ReadFile reads a fixture file (at most MaxFileSize bytes).
func ReadFile(path string) (Inventory, error) {
	f, err := os.Open(path)
	if err != nil {
		return Inventory{}, fmt.Errorf("read inventory fixture: %w", err)
	}
	defer f.Close()
	inv, err := Decode(f)
	if err != nil {
		return inv, fmt.Errorf("%s: %w", path, err)
	}
	return inv, nil
}

func indent(err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return errors.New(strings.Join(lines, "\n"))
}
