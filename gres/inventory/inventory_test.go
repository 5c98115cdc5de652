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

// Every text field of an inventory reaches gres.conf or the terminal: a
// fixture or an NVML answer with a newline, a comment sign, a list
// separator or a relative device path is refused, naming the field.
func TestDecodeRefusesUnsafeText(t *testing.T) {
	gpu := func(fields string) string {
		return `{"version":1,"gpus":[{"index":0,"minor":0,"name":"NVIDIA H100 80GB HBM3","migCurrent":"enabled",` + fields + `}]}`
	}
	mig := func(files string) string {
		return gpu(`"migDevices":[{"index":0,"profile":"1g.10gb","gpuInstanceSlices":1,"files":` + files + `}]`)
	}
	cases := map[string]struct{ in, msg string }{
		"name injects lines":      {`{"version":1,"gpus":[{"index":0,"name":"H100\nNodeName=x Name=gpu File=/etc/shadow","migCurrent":"disabled"}]}`, `gpus[0].name: "H100\nNodeName=x Name=gpu File=/etc/shadow" has the character '\n'`},
		"comment in name":         {`{"version":1,"gpus":[{"index":0,"name":"H100 # x","migCurrent":"disabled"}]}`, `gpus[0].name: "H100 # x" has the character '#'`},
		"comma in name":           {`{"version":1,"gpus":[{"index":0,"name":"H100,gpu","migCurrent":"disabled"}]}`, `gpus[0].name:`},
		"carriage return in lost": {`{"version":1,"gpus":[{"index":0,"lost":"gone\r\nNodeName=x"}]}`, `gpus[0].lost: "gone\r\nNodeName=x" has the character '\r'`},
		"uuid with space":         {`{"version":1,"gpus":[{"index":0,"name":"X","uuid":"GPU 1","migCurrent":"disabled"}]}`, `gpus[0].uuid:`},
		"host with slash":         {`{"version":1,"host":"a/b","gpus":[]}`, `host: "a/b" has the character '/'`},
		"driver with space":       {`{"version":1,"driverVersion":"550 x","gpus":[]}`, `driverVersion:`},
		"negative minor":          {`{"version":1,"gpus":[{"index":0,"minor":-1,"name":"X","migCurrent":"disabled"}]}`, `gpus[0]: minor -1 is not from 0 to 4095`},
		"huge index":              {`{"version":1,"gpus":[{"index":99999,"name":"X","migCurrent":"disabled"}]}`, `gpus[0]: index 99999 is not from 0 to 4095`},
		"profile with colon":      {gpu(`"migDevices":[{"index":0,"profile":"1g:10gb","gpuInstanceSlices":1,"files":["/dev/nvidia0"]}]`), `gpus[0].migDevices[0].profile:`},
		"relative file":           {mig(`["dev/nvidia0"]`), `gpus[0].migDevices[0].files[0]: device path "dev/nvidia0" is not absolute`},
		"dot-dot file":            {mig(`["/dev/../etc/shadow"]`), `device path "/dev/../etc/shadow" is not clean`},
		"comma in file":           {mig(`["/dev/nvidia0,/etc/shadow"]`), `has the character ','`},
		"bracket in file":         {mig(`["/dev/nvidia[0-7]"]`), `has the character '['`},
		"space in file":           {mig(`["/dev/nvidia 0"]`), `has the character ' '`},
		"newline in file":         {mig(`["/dev/nvidia0\nNodeName=x"]`), `has the character '\n'`},
		"empty file":              {mig(`[""]`), `empty device path`},
		"trailing slash":          {mig(`["/dev/nvidia0/"]`), `is not clean`},
		"too many MIG devices": {gpu(`"migDevices":[` + strings.Repeat(`{"index":0,"profile":"1g.10gb","gpuInstanceSlices":1,"files":["/dev/nvidia0"]},`, 8) +
			`{"index":0,"profile":"1g.10gb","gpuInstanceSlices":1,"files":["/dev/nvidia0"]}]`), `gpus[0]: 9 MIG devices; a GPU has at most 7`},
		"too many GPUs": {`{"version":1,"gpus":[` + strings.Repeat(`{"index":0,"lost":"x"},`, 64) + `{"index":0,"lost":"x"}]}`, "gpus: 65 GPUs; a node has at most 64"},
		"too large":     {`{"version":1,"host":"` + strings.Repeat("a", MaxFileSize) + `","gpus":[]}`, "more than 1024 KiB; an inventory is far smaller"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error\n%v\nwant one containing %q", err, tc.msg)
			}
		})
	}
}

func TestCheckDevicePath(t *testing.T) {
	for _, ok := range []string{"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap147", "/dev/fakemig0", "/dev/dri/card_1.x"} {
		if why := CheckDevicePath(ok); why != "" {
			t.Errorf("%s refused: %s", ok, why)
		}
	}
	for _, bad := range []string{"", "nvidia0", "/dev//nvidia0", "/dev/./nvidia0", "/dev/..", "/dev/x y", "/dev/x#", "/dev/x=1", "/dev/x\t", "/dev/ä"} {
		if CheckDevicePath(bad) == "" {
			t.Errorf("%q accepted", bad)
		}
	}
}
