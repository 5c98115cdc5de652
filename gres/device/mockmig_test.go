//go:build linux && cgo

package device

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// go-nvml's mock servers (dgxa100, dgxh100, dgxh200) create GPU and
// compute instances but do not enumerate MIG devices: the MIG device
// handles, their ids and attributes, and GetGpuInstanceById are left nil.
// This helper fills them in, so the adapter reads a mock GPU exactly as it
// reads a real one.

// gi is one GPU instance to create: an NVML GPU-instance profile constant
// (nvml.GPU_INSTANCE_PROFILE_*) at a start slot; the compute instance
// takes the whole GPU instance.
type gi struct {
	profile int
	start   uint32
	size    uint32 // memory slices; the mocks' placement sizes are not all real
}

// migLayout enables MIG on d and creates the instances, in order. It
// returns the lines for the mig-minors file (gpu<minor>/gi<id>/access ...).
func migLayout(t *testing.T, d *server.Device, gis []gi, nextMinor *int) []string {
	t.Helper()
	d.MigMode = nvml.DEVICE_MIG_ENABLE
	var migs []nvml.Device
	var lines []string
	for _, spec := range gis {
		info, ok := d.Config.MIGProfiles.GpuInstanceProfiles[spec.profile]
		if !ok {
			t.Fatalf("GPU %d: the mock has no GPU instance profile %d", d.Index, spec.profile)
		}
		g, r := d.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: spec.start, Size: spec.size})
		if r != nvml.SUCCESS {
			t.Fatalf("create GPU instance: %v", r)
		}
		ciProfile := map[uint32]int{
			1: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 2: nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE,
			3: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, 4: nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE,
			7: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
		}[info.SliceCount]
		ciInfo, r := g.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if r != nvml.SUCCESS {
			t.Fatalf("compute instance profile for %d slices: %v", info.SliceCount, r)
		}
		ci, r := g.CreateComputeInstance(&ciInfo)
		if r != nvml.SUCCESS {
			t.Fatalf("create compute instance: %v", r)
		}
		giInfo, _ := g.GetInfo()
		ciInf, _ := ci.GetInfo()
		giID, ciID := int(giInfo.Id), int(ciInf.Id)
		uuid := fmt.Sprintf("MIG-%s-%d-%d", strings.TrimPrefix(d.UUID, "GPU-"), giID, ciID)
		attrs := nvml.DeviceAttributes{
			MultiprocessorCount:       ciInfo.MultiprocessorCount,
			GpuInstanceSliceCount:     info.SliceCount,
			ComputeInstanceSliceCount: ciInfo.SliceCount,
			MemorySizeMB:              info.MemorySizeMB,
		}
		md := &mock.Device{
			GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return giID, nvml.SUCCESS },
			GetComputeInstanceIdFunc: func() (int, nvml.Return) { return ciID, nvml.SUCCESS },
			GetAttributesFunc:        func() (nvml.DeviceAttributes, nvml.Return) { return attrs, nvml.SUCCESS },
			IsMigDeviceHandleFunc:    func() (bool, nvml.Return) { return true, nvml.SUCCESS },
			GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) {
				return d, nvml.SUCCESS
			},
		}
		migs = append(migs, md)
		lines = append(lines,
			fmt.Sprintf("gpu%d/gi%d/access %d", d.Minor, giID, *nextMinor),
			fmt.Sprintf("gpu%d/gi%d/ci%d/access %d", d.Minor, giID, ciID, *nextMinor+1))
		*nextMinor += 2
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		if n < 0 || n >= 7 {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		if n >= len(migs) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[n], nvml.SUCCESS
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		for g := range d.GpuInstances {
			if int(g.Info.Id) == id {
				return g, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	return lines
}

// stableUUIDs replaces the mocks' random UUIDs by fixed ones, so golden
// files do not change from run to run.
func stableUUIDs(s *server.Server, prefix string) {
	for i, d := range s.Devices {
		d.(*server.Device).UUID = fmt.Sprintf("GPU-%s-0000-0000-0000-%012d", prefix, i)
	}
}

// writeMIGMinors writes a mig-minors file under a new root and returns it.
func writeMIGMinors(t *testing.T, lines []string) string {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, MIGMinorsPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "config 1\nmonitor 2\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}
