package conf

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/gres/mig"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Options say how to render one node.
type Options struct {
	// Node is the Slurm NodeName (required; NodeName gives the default).
	Node string
	// AutoDetect renders the AutoDetect=nvml variant of gres.conf: one
	// line, slurmd finds the devices itself. Otherwise every device gets an
	// explicit line with AutoDetect=off.
	AutoDetect bool
	// DeviceMap replaces device files (test clusters with fake devices).
	DeviceMap DeviceMap
	// Types renames GRES types. A key is a default type ("h100",
	// "1g.10gb") or an NVIDIA profile name ("1g.10gb+me"); the value is the
	// type to render. Every rename is checked like a default type.
	Types map[string]string
	// GPUWeights is the billing weight of one whole GPU per whole-GPU type
	// (default 1). A MIG type weighs its compute slices / 7 of its parent
	// GPU's weight. Each key must be a whole-GPU type of the node; a weight
	// is a finite number from 0 to MaxGPUWeight.
	GPUWeights map[string]float64
	// SkipLost renders without GPUs NVML lost, instead of refusing.
	SkipLost bool
	// Cores binds each GPU (by index) and its MIG devices to Slurm core
	// ids ("0-3"), written as Cores= on the explicit lines. NVML's CPU
	// affinity is in machine CPU ids, which are not Slurm's, so it is not
	// guessed: give it (see `slurmd -C`) or leave it out.
	Cores map[int]string
}

// MaxGPUWeight bounds a GPU's billing weight: Slurm multiplies it into
// every job's billing TRES.
const MaxGPUWeight = 1e6

// Device is one GRES unit: a whole GPU, or a MIG device.
type Device struct {
	GPU     int    `json:"gpu"`
	MIG     *int   `json:"mig,omitempty"`     // MIG device index, for a MIG device
	Profile string `json:"profile,omitempty"` // NVIDIA's profile name, for a MIG device
	Type    string `json:"type"`
	// AutoDetectName is what slurmd's NVML autodetect reports for the
	// device; Type is a substring of it.
	AutoDetectName string   `json:"autoDetectName"`
	Files          []string `json:"files"`
	Cores          string   `json:"cores,omitempty"`
	ComputeSlices  int      `json:"computeSlices"` // of 7; 7 for a whole GPU
	parentType     string
}

// TypeCount is how many devices of one type the node has.
type TypeCount struct {
	Type          string `json:"type"`
	Count         int    `json:"count"`
	WholeGPU      bool   `json:"wholeGPU"`
	ComputeSlices int    `json:"computeSlices"`
	BillingWeight string `json:"billingWeight"`
}

// Result is everything rendered for one node; all of it derives from the
// same Devices.
type Result struct {
	Node    string      `json:"node"`
	Devices []Device    `json:"devices"`
	Types   []TypeCount `json:"types"`
	// Gres is the slurm.conf NodeName Gres= value: "gpu:1g.10gb:7,gpu:3g.40gb:2".
	Gres string `json:"gres"`
	// AccountingStorageTRES lists gres/gpu and every typed gres/gpu:<type>.
	AccountingStorageTRES []string `json:"accountingStorageTRES"`
	// TRESBillingWeights is the partition value: "GRES/gpu:1g.10gb=0.142857,...".
	TRESBillingWeights string `json:"tresBillingWeights"`
	// QuotaTypes are the type names tenant quotas use (GrpTRES=gres/gpu:<type>).
	QuotaTypes []string `json:"quotaTypes"`
	Notes      []string `json:"notes,omitempty"`
	GresConf   string   `json:"gresConf"`
	SlurmConf  string   `json:"slurmConf"`
}

// NodeName is the Slurm NodeName to render for: node when given, else the
// short host name the inventory records.
func NodeName(inv inventory.Inventory, node string) (string, error) {
	if node != "" {
		return node, nil
	}
	node, _, _ = strings.Cut(inv.Host, ".")
	if node == "" {
		return "", errors.New("the inventory names no host: give the Slurm node name with --node")
	}
	return node, nil
}

// Render derives the node's GPU configuration from inv. It refuses, with
// every reason at once, an inventory it cannot render faithfully: a lost
// GPU (unless SkipLost), MIG enabled without MIG devices (slurmd's
// autodetect stops on it), a type name slurmd's autodetect would not
// match, or two types slurmd could confuse.
func Render(inv inventory.Inventory, o Options) (Result, error) {
	if !validNodeName(o.Node) {
		return Result{}, fmt.Errorf("node name %q: give the Slurm NodeName of this node (--node; letters, digits, '-', '_', '.', at most 64)", o.Node)
	}
	if err := inv.Validate(); err != nil {
		return Result{}, fmt.Errorf("the inventory cannot be rendered:\n%w", indentErr(err))
	}
	if err := o.DeviceMap.Validate(); err != nil {
		return Result{}, err
	}
	inv = inv.Sorted()
	r := &renderer{o: o, res: Result{Node: o.Node}, usedRename: map[string]bool{}}
	for _, g := range inv.GPUs {
		r.gpu(g)
	}
	r.checkCores(inv)
	r.checkOptions()
	if len(r.res.Devices) == 0 && len(r.errs) == 0 {
		r.fail("the inventory has no GPUs to render")
	}
	res, errs := r.res, append(r.errs, checkTypes(r.res.Devices)...)
	if len(errs) > 0 {
		return Result{}, fmt.Errorf("cannot render the GPU configuration of %s:\n%w", o.Node, indentErr(errors.Join(errs...)))
	}
	types, err := countTypes(res.Devices, o.GPUWeights)
	if err != nil {
		return Result{}, fmt.Errorf("cannot render the GPU configuration of %s: %w", o.Node, err)
	}
	res.Types = types
	nodeValues(&res, types)
	if !o.DeviceMap.IsZero() {
		mapDevices(res.Devices, o.DeviceMap)
	}
	res.GresConf = gresConf(res, o, r.comments)
	res.SlurmConf = slurmConf(res)
	return res, nil
}

// renderer is Render's work in progress: the devices and notes so far, the
// comments of gres.conf, every reason to refuse, and the --type renames
// that matched a device.
type renderer struct {
	o          Options
	res        Result
	errs       []error
	usedRename map[string]bool
	comments   []string
}

// fail records one reason to refuse the inventory.
func (r *renderer) fail(format string, a ...any) { r.errs = append(r.errs, fmt.Errorf(format, a...)) }

// rename is the type to render for a device known by keys (most specific
// first, the default type last): the first key the --type renames name,
// else the default.
func (r *renderer) rename(keys ...string) string {
	for _, k := range keys {
		if t, ok := r.o.Types[k]; ok {
			r.usedRename[k] = true
			return t
		}
	}
	return keys[len(keys)-1]
}

// gpu renders one GPU: a lost one is left out (SkipLost) or refused, a
// GPU without MIG is one device of its whole-GPU type, a MIG GPU is its
// MIG devices.
func (r *renderer) gpu(g inventory.GPU) {
	if g.Lost != "" {
		if r.o.SkipLost {
			r.comments = append(r.comments, fmt.Sprintf("GPU %d: left out, NVML lost it (%s)", g.Index, g.Lost))
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("GPU %d is left out (--skip-lost): NVML lost it; the node's Gres= in slurm.conf must match", g.Index))
			return
		}
		r.fail("GPU %d: NVML lost it (%s); refusing to render a configuration without it (fix the GPU, or pass --skip-lost and change slurm.conf to match)", g.Index, g.Lost)
		return
	}
	gpuAuto := AutoDetectGPUName(g.Name)
	parent := gpuAuto
	if m, ok := mig.Identify(g.Name, g.MemoryMiB, g.PCIDeviceID); ok && matches(m.Type, gpuAuto) {
		parent = m.Type
	}
	parent = r.rename(parent)
	state := "MIG " + string(g.MIGCurrent)
	if g.MIGChangePending() {
		state += fmt.Sprintf(", MIG %s after the next GPU reset", g.MIGPending)
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("GPU %d: MIG mode is %s now and %s after the next GPU reset; rendered as it is now, regenerate after the reset", g.Index, g.MIGCurrent, g.MIGPending))
	}
	if !g.MIGActive() {
		r.comments = append(r.comments, fmt.Sprintf("GPU %d: %s %s, %s", g.Index, g.Name, g.UUID, state))
		r.res.Devices = append(r.res.Devices, Device{
			GPU: g.Index, Type: parent, AutoDetectName: gpuAuto, Files: []string{g.DeviceFile()},
			ComputeSlices: mig.ComputeSlicesPerGPU, parentType: parent,
		})
		return
	}
	if len(g.MIGDevices) == 0 {
		r.fail("GPU %d: MIG is enabled but it has no MIG devices; slurmd's NVML autodetect stops on that. Create the instances (nvidia-mig-parted apply) or disable MIG", g.Index)
		return
	}
	r.comments = append(r.comments, fmt.Sprintf("GPU %d: %s %s, %s, %d MIG device%s", g.Index, g.Name, g.UUID, state, len(g.MIGDevices), plural(len(g.MIGDevices))))
	for _, md := range g.MIGDevices {
		r.migDevice(g, md, parent)
	}
}

// migDevice renders one MIG device of g (whose whole-GPU type is parent):
// a compute instance smaller than its GPU instance is refused, and a
// profile NVIDIA names otherwise than slurmd gets a note.
func (r *renderer) migDevice(g inventory.GPU, md inventory.MIGDevice, parent string) {
	def := SlurmMIGSuffix(md)
	nvidia := md.Profile
	if ci := md.ComputeInstanceSlices; ci > 0 && ci != md.GPUInstanceSlices {
		r.fail("GPU %d MIG device %d (%s): its compute instance has %d of its GPU instance's %d slices; slurmd names every compute instance of a GPU instance %q, so Slurm cannot tell them apart. Use one full-size compute instance per GPU instance",
			g.Index, md.Index, nvidia, ci, md.GPUInstanceSlices, AutoDetectMIGName(g.Name, md))
		return
	}
	if base, _, _ := strings.Cut(nvidia, "+"); base != def {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("GPU %d MIG device %d: NVIDIA calls the profile %s; slurmd's autodetect calls it %s, so its type is %s", g.Index, md.Index, nvidia, AutoDetectMIGName(g.Name, md), def))
	}
	idx := md.Index
	r.res.Devices = append(r.res.Devices, Device{
		GPU: g.Index, MIG: &idx, Profile: nvidia, Type: r.rename(nvidia, def),
		AutoDetectName: AutoDetectMIGName(g.Name, md), Files: slices.Clone(md.Files),
		ComputeSlices: md.GPUInstanceSlices, parentType: parent,
	})
}

// checkCores refuses --cores for a GPU the inventory lacks or in a form
// Slurm cannot read, and binds each device to its GPU's cores.
func (r *renderer) checkCores(inv inventory.Inventory) {
	seenGPU := map[int]bool{}
	for _, g := range inv.GPUs {
		seenGPU[g.Index] = true
	}
	for _, i := range slices.Sorted(maps.Keys(r.o.Cores)) {
		switch {
		case !seenGPU[i]:
			r.fail("--cores %d=%s: the inventory has no GPU %d", i, r.o.Cores[i], i)
		case !validCores(r.o.Cores[i]):
			r.fail("--cores %d=%s: not a Slurm core list such as 0-3 or 0,2,4-5 (digits, '-' and ',' only; core ids up to %d)", i, r.o.Cores[i], maxCoreID)
		}
	}
	for i := range r.res.Devices {
		r.res.Devices[i].Cores = r.o.Cores[r.res.Devices[i].GPU]
	}
}

// checkOptions refuses a --type rename that matched no device, and a
// --gpu-weight out of range or for a whole-GPU type the node lacks.
func (r *renderer) checkOptions() {
	for _, k := range slices.Sorted(maps.Keys(r.o.Types)) {
		if !r.usedRename[k] {
			r.fail("--type %s=%s: no device of this node has the type or profile %q", k, r.o.Types[k], k)
		}
	}
	wholeTypes := map[string]bool{}
	for _, d := range r.res.Devices {
		wholeTypes[d.parentType] = true
	}
	for _, k := range slices.Sorted(maps.Keys(r.o.GPUWeights)) {
		switch w := r.o.GPUWeights[k]; {
		case math.IsNaN(w) || math.IsInf(w, 0) || w < 0 || w > MaxGPUWeight:
			r.fail("--gpu-weight %s=%v: the weight must be a non-negative finite number, at most %v", k, w, MaxGPUWeight)
		case !wholeTypes[k]:
			r.fail("--gpu-weight %s: no GPU of this node has the type %q (its GPU types: %s); weigh the types the node has", k, k, strings.Join(slices.Sorted(maps.Keys(wholeTypes)), ", "))
		}
	}
}

// nodeValues fills in res the slurm.conf values derived from the types:
// Gres=, AccountingStorageTRES, TRESBillingWeights and the quota types.
func nodeValues(res *Result, types []TypeCount) {
	var gres, tres, weights []string
	tres = append(tres, "gres/gpu")
	for _, t := range types {
		gres = append(gres, fmt.Sprintf("gpu:%s:%d", t.Type, t.Count))
		tres = append(tres, "gres/gpu:"+t.Type)
		weights = append(weights, fmt.Sprintf("GRES/gpu:%s=%s", t.Type, t.BillingWeight))
		res.QuotaTypes = append(res.QuotaTypes, t.Type)
	}
	res.Gres = strings.Join(gres, ",")
	res.AccountingStorageTRES = tres
	res.TRESBillingWeights = strings.Join(weights, ",")
}

// checkTypes refuses type names Slurm cannot parse, names that are not a
// substring of the device's autodetect name (slurmd would not match them
// and would leave the device out), and names slurmd could confuse: on one
// node, the most specific type matching a device's autodetect name must be
// the device's own.
func checkTypes(devs []Device) []error {
	var errs []error
	seen := map[string]bool{}
	var all []string
	for _, d := range devs {
		if !seen[d.Type] {
			seen[d.Type] = true
			all = append(all, d.Type)
		}
	}
	reported := map[string]bool{}
	for _, d := range devs {
		what := fmt.Sprintf("GPU %d", d.GPU)
		if d.MIG != nil {
			what = fmt.Sprintf("GPU %d MIG device %d (%s)", d.GPU, *d.MIG, d.Profile)
		}
		if err := checkTypeName(d.Type); err != nil {
			if !reported["name "+d.Type] {
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
				reported["name "+d.Type] = true
			}
			continue
		}
		if !matches(d.Type, d.AutoDetectName) {
			errs = append(errs, fmt.Errorf("%s: type %q is not a substring of %q, the name slurmd's NVML autodetect reports for it; Slurm could not match it and would ignore the device (use a part of that name, e.g. %q)",
				what, d.Type, d.AutoDetectName, suggestion(d)))
			continue
		}
		for _, u := range all {
			if u == d.Type || !matches(u, d.AutoDetectName) || len(u) < len(d.Type) {
				continue
			}
			key := d.Type + "|" + u
			if reported[key] {
				continue
			}
			reported[key] = true
			errs = append(errs, fmt.Errorf("%s: type %q is meant for it, but type %q of another device of this node also matches its autodetect name %q and is at least as specific; slurmd could count it under either. Rename one of them",
				what, d.Type, u, d.AutoDetectName))
		}
	}
	return errs
}

func suggestion(d Device) string {
	if d.MIG != nil {
		if i := strings.LastIndexByte(d.AutoDetectName, '_'); i >= 0 {
			return d.AutoDetectName[i+1:]
		}
	}
	return d.AutoDetectName
}

// countTypes groups devices by type in order of first appearance and
// computes each type's billing weight.
func countTypes(devs []Device, gpuWeights map[string]float64) ([]TypeCount, error) {
	var out []TypeCount
	index := map[string]int{}
	weight := map[string]float64{}
	for _, d := range devs {
		base := 1.0
		if w, ok := gpuWeights[d.parentType]; ok {
			base = w
		}
		w := base * float64(d.ComputeSlices) / float64(mig.ComputeSlicesPerGPU)
		i, ok := index[d.Type]
		if !ok {
			index[d.Type] = len(out)
			weight[d.Type] = w
			out = append(out, TypeCount{Type: d.Type, WholeGPU: d.MIG == nil, ComputeSlices: d.ComputeSlices, BillingWeight: formatWeight(w)})
			i = len(out) - 1
		}
		t := &out[i]
		if t.WholeGPU != (d.MIG == nil) {
			return nil, fmt.Errorf("type %q names both whole GPUs and MIG devices; give them different types", d.Type)
		}
		if t.ComputeSlices != d.ComputeSlices || formatWeight(weight[d.Type]) != formatWeight(w) {
			return nil, fmt.Errorf("type %q groups devices of different sizes or parent weights (%d and %d compute slices, weight %s and %s); give them different types",
				d.Type, t.ComputeSlices, d.ComputeSlices, t.BillingWeight, formatWeight(w))
		}
		t.Count++
	}
	return out, nil
}

// formatWeight prints a weight with at most 6 decimals: "1.0", "0.142857".
func formatWeight(w float64) string {
	s := strconv.FormatFloat(w, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

func mapDevices(devs []Device, m DeviceMap) {
	nGPU, nMIG := 0, 0
	for i := range devs {
		switch {
		case devs[i].MIG == nil && m.GPU != "":
			devs[i].Files = []string{fmt.Sprintf("%s%d", m.GPU, nGPU)}
			nGPU++
		case devs[i].MIG != nil && m.MIG != "":
			devs[i].Files = []string{fmt.Sprintf("%s%d", m.MIG, nMIG)}
			nMIG++
		}
	}
}

func gresConf(r Result, o Options, comments []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# gres.conf lines for node %s, generated by gpubridge from its NVML inventory.\n", r.Node)
	b.WriteString("# Do not edit: regenerate with `gpubridge gres generate`.\n")
	fmt.Fprintf(&b, "# slurm.conf: NodeName=%s ... Gres=%s\n", r.Node, r.Gres)
	if !o.DeviceMap.IsZero() && !o.AutoDetect {
		fmt.Fprintf(&b, "# Device files are mapped (%s): these are not the real NVIDIA device nodes.\n", o.DeviceMap)
	}
	for _, c := range comments {
		b.WriteString("# " + c + "\n")
	}
	for _, n := range r.Notes {
		b.WriteString("# NOTE: " + n + "\n")
	}
	if o.AutoDetect {
		b.WriteString("# slurmd's NVML autodetect finds the devices itself; it will report:\n")
		var names []string
		count := map[string]int{}
		typ := map[string]string{}
		for _, d := range r.Devices {
			if count[d.AutoDetectName] == 0 {
				names = append(names, d.AutoDetectName)
			}
			count[d.AutoDetectName]++
			typ[d.AutoDetectName] = d.Type
		}
		for _, n := range names {
			fmt.Fprintf(&b, "#   %dx %-36s -> type %s\n", count[n], n, typ[n])
		}
		fmt.Fprintf(&b, "NodeName=%s AutoDetect=nvml\n", r.Node)
		return b.String()
	}
	for _, d := range r.Devices {
		files := "File=" + d.Files[0]
		if len(d.Files) > 1 {
			files = "MultipleFiles=" + strings.Join(d.Files, ",")
		}
		cores := ""
		if d.Cores != "" {
			cores = " Cores=" + d.Cores
		}
		fmt.Fprintf(&b, "NodeName=%s AutoDetect=off Name=gpu Type=%s %s%s\n", r.Node, d.Type, files, cores)
	}
	return b.String()
}

func slurmConf(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# slurm.conf lines for node %s, generated by gpubridge from its NVML inventory.\n", r.Node)
	b.WriteString("GresTypes=gpu\n")
	b.WriteString("# Cluster-wide: keep the entries other nodes need as well.\n")
	fmt.Fprintf(&b, "AccountingStorageTRES=%s\n", strings.Join(r.AccountingStorageTRES, ","))
	b.WriteString("# On this node's NodeName line:\n")
	fmt.Fprintf(&b, "#   NodeName=%s ... Gres=%s\n", r.Node, r.Gres)
	b.WriteString("# On the PartitionName lines of its partitions (a MIG slice weighs its compute slices / 7 of its GPU;\n")
	b.WriteString("# typed weights only, since an untyped GRES/gpu weight would bill every GPU a second time):\n")
	fmt.Fprintf(&b, "#   TRESBillingWeights=\"%s\"\n", r.TRESBillingWeights)
	fmt.Fprintf(&b, "# GPU types for tenant quotas (GrpTRES=gres/gpu:<type>): %s\n", strings.Join(r.QuotaTypes, ", "))
	return b.String()
}

func validNodeName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

func indentErr(err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = "  - " + l
	}
	return errors.New(strings.Join(lines, "\n"))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// maxCoreID bounds the core ids of --cores.
const maxCoreID = 65535

// validCores accepts a Slurm core list: ids and ranges separated by commas
// (slurmstr.ExpandRanges), nothing else.
func validCores(s string) bool {
	_, err := slurmstr.ExpandRanges(s, maxCoreID)
	return err == nil
}
