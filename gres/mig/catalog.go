package mig

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A GPU in MIG mode has 8 memory slices and 7 compute slices (A100, H100,
// H200, B200). A GPU instance takes a run of memory slices starting at one
// of its profile's allowed start slots, and some compute slices.
//
// Sources: NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html):
// the profile tables (fraction of memory and SMs, "Number of Instances
// Available", "+me" being available on a single 1g instance) and the
// placements that `nvidia-smi mig -lgipp` prints there for H100:
//
//	Profile ID 19 (1g)       Placements: {0,1,2,3,4,5,6}:1
//	Profile ID 20 (1g+me)    Placements: {0,1,2,3,4,5,6}:1
//	Profile ID 15 (1g, 2/8)  Placements: {0,2,4,6}:2
//	Profile ID 14 (2g)       Placements: {0,2,4}:2
//	Profile ID  9 (3g)       Placements: {0,4}:4
//	Profile ID  5 (4g)       Placement : {0}:4
//	Profile ID  0 (7g)       Placement : {0}:8
//
// A100 prints the same placements (its 1g.10gb on the 40GB card is the
// 2/8-memory 1g profile). H200 and B200 use the same geometry; their profile
// names were cross-checked with NVIDIA/mig-parted's
// deployments/systemd/config-default.yaml.
const (
	ComputeSlicesPerGPU = 7
	MemorySlicesPerGPU  = 8
)

// Profile is one GPU-instance profile of a model.
type Profile struct {
	Name          string // NVIDIA's name: "1g.10gb", "1g.10gb+me"
	ComputeSlices int    // of 7
	MemorySlices  int    // of 8: the placement size
	MemoryGB      int    // the nominal size in the name
	// MediaExtensions marks "+me": the GPU's media engines (NVDEC, NVJPG,
	// OFA) go with this instance, so only one such instance fits.
	MediaExtensions bool
	MaxInstances    int   // NVIDIA's "Number of Instances Available"
	Starts          []int // allowed start slots on the memory-slice axis
}

// Model is a MIG-capable GPU model and its profiles.
type Model struct {
	Name string // "H100-80GB"
	// Type is the short GRES type for the whole GPU ("h100"). It is a
	// substring of slurmd's NVML name for the product.
	Type string
	// key is what the lower-cased NVML product name contains.
	key string
	// minGiB and maxGiB bound the total memory that tells apart models
	// sharing a key (A100 40GB and 80GB).
	minGiB, maxGiB uint64
	PCIDeviceIDs   []string
	Profiles       []Profile
}

// Standard placements, in memory-slice start slots (see the table above).
var (
	starts1g     = []int{0, 1, 2, 3, 4, 5, 6}
	starts1gWide = []int{0, 2, 4, 6}
	starts2g     = []int{0, 2, 4}
	starts3g     = []int{0, 4}
	starts4g     = []int{0}
	starts7g     = []int{0}
)

// profiles builds a model's seven standard profiles from the nominal
// memory sizes of its 1/8, 2/8, 4/8 and 8/8 memory fractions.
func profiles(gb1, gb2, gb4, gb8 int) []Profile {
	n := func(c, gb int) string { return fmt.Sprintf("%dg.%dgb", c, gb) }
	return []Profile{
		{Name: n(1, gb1), ComputeSlices: 1, MemorySlices: 1, MemoryGB: gb1, MaxInstances: 7, Starts: starts1g},
		{Name: n(1, gb1) + "+me", ComputeSlices: 1, MemorySlices: 1, MemoryGB: gb1, MediaExtensions: true, MaxInstances: 1, Starts: starts1g},
		{Name: n(1, gb2), ComputeSlices: 1, MemorySlices: 2, MemoryGB: gb2, MaxInstances: 4, Starts: starts1gWide},
		{Name: n(2, gb2), ComputeSlices: 2, MemorySlices: 2, MemoryGB: gb2, MaxInstances: 3, Starts: starts2g},
		{Name: n(3, gb4), ComputeSlices: 3, MemorySlices: 4, MemoryGB: gb4, MaxInstances: 2, Starts: starts3g},
		{Name: n(4, gb4), ComputeSlices: 4, MemorySlices: 4, MemoryGB: gb4, MaxInstances: 1, Starts: starts4g},
		{Name: n(7, gb8), ComputeSlices: 7, MemorySlices: 8, MemoryGB: gb8, MaxInstances: 1, Starts: starts7g},
	}
}

var models = []Model{
	{Name: "A100-40GB", Type: "a100", key: "a100", minGiB: 30, maxGiB: 50,
		PCIDeviceIDs: []string{"0x20B010DE", "0x20B110DE", "0x20F110DE", "0x20F610DE"},
		Profiles:     profiles(5, 10, 20, 40)},
	{Name: "A100-80GB", Type: "a100", key: "a100", minGiB: 70, maxGiB: 90,
		PCIDeviceIDs: []string{"0x20B210DE", "0x20B510DE", "0x20F310DE", "0x20F510DE"},
		Profiles:     profiles(10, 20, 40, 80)},
	{Name: "H100-80GB", Type: "h100", key: "h100", minGiB: 70, maxGiB: 90,
		PCIDeviceIDs: []string{"0x233010DE", "0x233110DE", "0x232210DE", "0x232410DE"},
		Profiles:     profiles(10, 20, 40, 80)},
	{Name: "H200-141GB", Type: "h200", key: "h200", minGiB: 130, maxGiB: 150,
		PCIDeviceIDs: []string{"0x233510DE", "0x233B10DE"},
		Profiles:     profiles(18, 35, 71, 141)},
	{Name: "B200", Type: "b200", key: "b200", minGiB: 170, maxGiB: 200,
		PCIDeviceIDs: []string{"0x290110DE"},
		Profiles:     profiles(23, 45, 90, 180)},
}

// Models returns the catalog, in a fixed order.
func Models() []Model {
	out := make([]Model, len(models))
	copy(out, models)
	return out
}

// ModelNamed finds a model by its catalog name, case-insensitively
// ("h100-80gb").
func ModelNamed(name string) (Model, error) {
	for _, m := range models {
		if strings.EqualFold(m.Name, name) {
			return m, nil
		}
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return Model{}, fmt.Errorf("unknown GPU model %q; known models: %s", name, strings.Join(names, ", "))
}

// Identify finds the model of a GPU from what NVML reports: the PCI device
// id when it is a known one, else the product name and total memory.
func Identify(productName string, memoryMiB uint64, pciDeviceID string) (Model, bool) {
	for _, m := range models {
		for _, id := range m.PCIDeviceIDs {
			if pciDeviceID != "" && strings.EqualFold(id, pciDeviceID) {
				return m, true
			}
		}
	}
	name := strings.ToLower(productName)
	gib := (memoryMiB + 1023) / 1024
	for _, m := range models {
		if strings.Contains(name, m.key) && gib >= m.minGiB && gib <= m.maxGiB {
			return m, true
		}
	}
	return Model{}, false
}

// Profile finds a profile of m by name.
func (m Model) Profile(name string) (Profile, bool) {
	for _, p := range m.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileNames lists m's profile names in catalog order.
func (m Model) ProfileNames() []string {
	n := make([]string, len(m.Profiles))
	for i, p := range m.Profiles {
		n[i] = p.Name
	}
	return n
}

// ProfileFor names the profile of a GPU instance from what NVML tells about
// it: its compute slices, its memory, and whether it holds the media
// extensions. Among m's profiles with that many compute slices it picks the
// one whose nominal memory is nearest.
func (m Model) ProfileFor(computeSlices int, memoryMiB uint64, mediaExtensions bool) (Profile, bool) {
	best, found := Profile{}, false
	bestDiff := uint64(0)
	for _, p := range m.Profiles {
		if p.ComputeSlices != computeSlices || p.MediaExtensions != mediaExtensions {
			continue
		}
		nominal := uint64(p.MemoryGB) * 1024
		diff := max(nominal, memoryMiB) - min(nominal, memoryMiB)
		if !found || diff < bestDiff {
			best, bestDiff, found = p, diff, true
		}
	}
	return best, found
}

// ComputeSlicesOf returns the compute slices in a profile name such as
// "3g.40gb", "1g.10gb+me" or "1c.3g.40gb" (the compute instance's share).
func ComputeSlicesOf(profile string) (int, bool) {
	s := profile
	if c, rest, ok := strings.Cut(s, "c."); ok && strings.Contains(rest, "g.") {
		n, err := strconv.Atoi(c)
		return n, err == nil && n > 0
	}
	g, _, ok := strings.Cut(s, "g.")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(g)
	return n, err == nil && n > 0
}

func (p Profile) startsString() string {
	s := make([]string, len(p.Starts))
	for i, v := range p.Starts {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// sortProfiles orders profile names biggest first (compute slices, then
// memory slices, then name), the order configs and layouts are printed in.
func (m Model) sortProfiles(names []string) {
	slices.SortFunc(names, func(a, b string) int {
		pa, _ := m.Profile(a)
		pb, _ := m.Profile(b)
		if pa.ComputeSlices != pb.ComputeSlices {
			return pb.ComputeSlices - pa.ComputeSlices
		}
		if pa.MemorySlices != pb.MemorySlices {
			return pb.MemorySlices - pa.MemorySlices
		}
		return strings.Compare(a, b)
	})
}

// article is the model's name with "a" or "an" as it is read aloud
// ("an H100-80GB", "a B200").
func (m Model) article() string {
	if m.Name != "" && strings.ContainsRune("AEFHILMNORSX", rune(m.Name[0])) {
		return "an " + m.Name
	}
	return "a " + m.Name
}
