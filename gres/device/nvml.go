//go:build linux && cgo

package device

import (
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
)

// Collect reads the inventory through the system's NVML library.
func Collect(o Options) (inventory.Inventory, error) {
	return collect(nvml.New(), o)
}

// nvmlError is an NVML call that did not succeed.
type nvmlError struct {
	op  string
	ret nvml.Return
}

func (e *nvmlError) Error() string { return e.op + ": " + e.ret.Error() }

func check(op string, r nvml.Return) error {
	if r == nvml.SUCCESS {
		return nil
	}
	return &nvmlError{op: op, ret: r}
}

// lost reports whether err says the GPU fell off the bus.
func lost(err error) bool {
	var ne *nvmlError
	return errors.As(err, &ne) && ne.ret == nvml.ERROR_GPU_IS_LOST
}

func collect(lib nvml.Interface, o Options) (inventory.Inventory, error) {
	switch r := lib.Init(); r {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return inventory.Inventory{}, fmt.Errorf("%w: libnvidia-ml.so.1 was not found; is the NVIDIA driver installed? (use --fixture to replay a recorded inventory)", ErrNoNVML)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return inventory.Inventory{}, fmt.Errorf("%w: the NVIDIA kernel driver is not loaded", ErrNoNVML)
	default:
		return inventory.Inventory{}, fmt.Errorf("initialise NVML: %w", check("nvmlInit", r))
	}
	defer lib.Shutdown()

	inv := inventory.Inventory{Version: inventory.CurrentVersion, Host: o.host()}
	if v, r := lib.SystemGetDriverVersion(); r == nvml.SUCCESS {
		inv.DriverVersion = v
	}
	if v, r := lib.SystemGetNVMLVersion(); r == nvml.SUCCESS {
		inv.NVMLVersion = v
	}
	n, r := lib.DeviceGetCount()
	if err := check("get the GPU count", r); err != nil {
		return inventory.Inventory{}, err
	}
	c := &collector{o: o}
	for i := range n {
		g, err := c.gpu(lib, i)
		if lost(err) {
			inv.GPUs = append(inv.GPUs, inventory.GPU{Index: i, Lost: err.Error()})
			continue
		}
		if err != nil {
			return inventory.Inventory{}, fmt.Errorf("GPU %d: %w", i, err)
		}
		inv.GPUs = append(inv.GPUs, g)
	}
	if err := inv.Validate(); err != nil {
		return inventory.Inventory{}, fmt.Errorf("NVML returned an inconsistent inventory: %w", err)
	}
	return inv, nil
}

type collector struct {
	o      Options
	minors migMinors // read once, when the first MIG device is seen
}

func (c *collector) gpu(lib nvml.Interface, i int) (inventory.GPU, error) {
	g := inventory.GPU{Index: i}
	dev, r := lib.DeviceGetHandleByIndex(i)
	if err := check("get the device handle", r); err != nil {
		return g, err
	}
	var err error
	if g.Minor, r = dev.GetMinorNumber(); r != nvml.SUCCESS {
		return g, check("get the minor number", r)
	}
	if g.UUID, r = dev.GetUUID(); r != nvml.SUCCESS {
		return g, check("get the UUID", r)
	}
	if g.Name, r = dev.GetName(); r != nvml.SUCCESS {
		return g, check("get the product name", r)
	}
	mem, r := dev.GetMemoryInfo()
	if err = check("get the memory size", r); err != nil {
		return g, err
	}
	g.MemoryMiB = mem.Total / (1024 * 1024)
	if pci, r := dev.GetPciInfo(); r == nvml.SUCCESS && pci.PciDeviceId != 0 {
		g.PCIDeviceID = fmt.Sprintf("0x%08X", pci.PciDeviceId)
	} else if r == nvml.ERROR_GPU_IS_LOST {
		return g, check("get the PCI info", r)
	}
	cur, pend, r := dev.GetMigMode()
	switch r {
	case nvml.SUCCESS:
		g.MIGCurrent, g.MIGPending = migMode(cur), migMode(pend)
	case nvml.ERROR_NOT_SUPPORTED:
		g.MIGCurrent, g.MIGPending = inventory.MIGUnsupported, inventory.MIGUnsupported
	default:
		return g, check("get the MIG mode", r)
	}
	if g.MIGActive() {
		if g.MIGDevices, err = c.migDevices(dev, g); err != nil {
			return g, err
		}
	}
	return g, nil
}

func migMode(m int) inventory.MIGMode {
	if m == nvml.DEVICE_MIG_ENABLE {
		return inventory.MIGEnabled
	}
	return inventory.MIGDisabled
}

func (c *collector) migDevices(dev nvml.Device, g inventory.GPU) ([]inventory.MIGDevice, error) {
	count, r := dev.GetMaxMigDeviceCount()
	if err := check("get the MIG device count", r); err != nil {
		return nil, err
	}
	model, known := mig.Identify(g.Name, g.MemoryMiB, g.PCIDeviceID)
	var out []inventory.MIGDevice
	for j := range count {
		md, r := dev.GetMigDeviceHandleByIndex(j)
		if r == nvml.ERROR_NOT_FOUND {
			continue // indexes need not be contiguous
		}
		if err := check(fmt.Sprintf("get MIG device %d", j), r); err != nil {
			return nil, err
		}
		m, err := c.migDevice(dev, md, g, j, model, known)
		if err != nil {
			return nil, fmt.Errorf("MIG device %d: %w", j, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func (c *collector) migDevice(parent, md nvml.Device, g inventory.GPU, j int, model mig.Model, known bool) (inventory.MIGDevice, error) {
	m := inventory.MIGDevice{Index: j}
	var r nvml.Return
	if m.UUID, r = md.GetUUID(); r != nvml.SUCCESS {
		return m, check("get the UUID", r)
	}
	if m.GPUInstanceID, r = md.GetGpuInstanceId(); r != nvml.SUCCESS {
		return m, check("get the GPU instance id", r)
	}
	if m.ComputeInstanceID, r = md.GetComputeInstanceId(); r != nvml.SUCCESS {
		return m, check("get the compute instance id", r)
	}
	attr, r := md.GetAttributes()
	if err := check("get the attributes", r); err != nil {
		return m, err
	}
	m.GPUInstanceSlices = int(attr.GpuInstanceSliceCount)
	m.ComputeInstanceSlices = int(attr.ComputeInstanceSliceCount)
	m.MemoryMiB = attr.MemorySizeMB
	gi, r := parent.GetGpuInstanceById(m.GPUInstanceID)
	if err := check(fmt.Sprintf("get GPU instance %d", m.GPUInstanceID), r); err != nil {
		return m, err
	}
	info, r := gi.GetInfo()
	if err := check(fmt.Sprintf("get GPU instance %d's info", m.GPUInstanceID), r); err != nil {
		return m, err
	}
	m.Placement = inventory.Placement{Start: int(info.Placement.Start), Size: int(info.Placement.Size)}
	variant := profileVariant(parent, info.ProfileId)
	m.Profile = profileName(m, variant, model, known)
	if c.minors == nil {
		var err error
		if c.minors, err = readMIGMinors(c.o.migMinorsFile()); err != nil {
			return m, err
		}
	}
	caps, err := c.minors.files(g.Minor, m.GPUInstanceID, m.ComputeInstanceID)
	if err != nil {
		return m, fmt.Errorf("%w (read from %s)", err, c.o.migMinorsFile())
	}
	m.Files = append([]string{g.DeviceFile()}, caps...)
	return m, nil
}

// profileVariant finds the NVML GPU-instance profile constant whose
// profile id the instance has, and returns the suffix NVIDIA's profile
// names give that variant ("+me", "+me.all", "-me", "+gfx" or "").
func profileVariant(parent nvml.Device, profileID uint32) string {
	for p := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, r := parent.GetGpuInstanceProfileInfo(p)
		if r != nvml.SUCCESS || info.Id != profileID {
			continue
		}
		switch p {
		case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
			return "+me"
		case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
			return "+me.all"
		case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
			return "-me"
		case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX,
			nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX:
			return "+gfx"
		}
		return ""
	}
	return ""
}

// profileName is NVIDIA's name for the instance: from the catalog when the
// model is known ("1g.10gb+me"), else "<slices>g.<GiB>gb" plus the
// variant; "<c>c." in front when the compute instance is smaller than its
// GPU instance.
func profileName(m inventory.MIGDevice, variant string, model mig.Model, known bool) string {
	name := ""
	if known && (variant == "" || variant == "+me") {
		if p, ok := model.ProfileFor(m.GPUInstanceSlices, m.MemoryMiB, variant == "+me"); ok {
			name = p.Name
		}
	}
	if name == "" {
		name = fmt.Sprintf("%dg.%dgb%s", m.GPUInstanceSlices, (m.MemoryMiB+512)/1024, variant)
	}
	if m.ComputeInstanceSlices > 0 && m.ComputeInstanceSlices < m.GPUInstanceSlices && !strings.Contains(name, "c.") {
		name = fmt.Sprintf("%dc.%s", m.ComputeInstanceSlices, name)
	}
	return name
}
