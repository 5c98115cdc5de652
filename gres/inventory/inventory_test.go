package inventory

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeRefuses(t *testing.T) {
	cases := map[string]struct {
		in   string
		msgs []string
	}{
		"unknown field": {`{"version":1,"gpus":[],"gpuz":1}`, []string{`unknown field "gpuz"`}},
		"trailing data": {`{"version":1,"gpus":[]} {}`, []string{"trailing data"}},
		"other version": {`{"version":2,"gpus":[]}`, []string{"version: 2 is not supported"}},
		"every problem": {`{"version":1,"gpus":[
			{"index":0,"name":"X","migCurrent":"on"},
			{"index":0,"name":"","migCurrent":"disabled","migDevices":[{"index":0,"profile":"","gpuInstanceSlices":0,"files":[]}]}]}`, []string{
			`gpus[0]: migCurrent "on" is not one of enabled, disabled, unsupported`,
			"gpus[1]: GPU index 0 appears twice", "gpus[1]: name is empty",
			"gpus[1]: has 1 MIG devices but MIG is disabled",
			"gpus[1].migDevices[0]: profile is empty", "gpus[1].migDevices[0]: gpuInstanceSlices must be positive",
			"gpus[1].migDevices[0]: no device files"}},
		"not JSON": {`gpus: []`, []string{"decode inventory"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, m := range tc.msgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error\n%s\ndoes not say %q", err, m)
				}
			}
		})
	}
}

func TestRoundTripAndSorted(t *testing.T) {
	inv := Inventory{Version: CurrentVersion, Host: "n", GPUs: []GPU{
		{Index: 1, Minor: 1, Name: "NVIDIA H100 80GB HBM3", MIGCurrent: MIGEnabled, MIGPending: MIGEnabled, MIGDevices: []MIGDevice{
			{Index: 1, Profile: "3g.40gb", GPUInstanceSlices: 3, ComputeInstanceSlices: 3, Files: []string{"/dev/nvidia1"}},
			{Index: 0, Profile: "3g.40gb", GPUInstanceSlices: 3, ComputeInstanceSlices: 3, Files: []string{"/dev/nvidia1"}},
		}},
		{Index: 0, Lost: "get the UUID: ERROR_GPU_IS_LOST"},
	}}
	var b bytes.Buffer
	if err := Encode(&b, inv); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(inv, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	s := inv.Sorted()
	if s.GPUs[0].Index != 0 || s.GPUs[1].MIGDevices[0].Index != 0 || inv.GPUs[0].Index != 1 || inv.GPUs[0].MIGDevices[0].Index != 1 {
		t.Errorf("Sorted() = %+v (and must not change its receiver)", s)
	}
}

func TestMIGModes(t *testing.T) {
	cases := map[string]struct {
		g              GPU
		active, change bool
	}{
		"enabled":         {GPU{MIGCurrent: MIGEnabled, MIGPending: MIGEnabled}, true, false},
		"pending enable":  {GPU{MIGCurrent: MIGDisabled, MIGPending: MIGEnabled}, false, true},
		"pending disable": {GPU{MIGCurrent: MIGEnabled, MIGPending: MIGDisabled}, true, true},
		"unsupported":     {GPU{MIGCurrent: MIGUnsupported, MIGPending: MIGUnsupported}, false, false},
		"no pending info": {GPU{MIGCurrent: MIGDisabled}, false, false},
	}
	for name, tc := range cases {
		if tc.g.MIGActive() != tc.active || tc.g.MIGChangePending() != tc.change {
			t.Errorf("%s: active %v pending %v", name, tc.g.MIGActive(), tc.g.MIGChangePending())
		}
	}
	if f := (GPU{Minor: 3}).DeviceFile(); f != "/dev/nvidia3" {
		t.Errorf("DeviceFile = %s", f)
	}
}
