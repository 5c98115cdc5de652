//go:build linux && cgo

package device

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/gres/inventory"
	"github.com/gpubridge/gpubridge/internal/golden"
)

// fixtureDir holds the golden inventories; they double as fixtures for
// gres/conf and the CLI.
const fixtureDir = "../../test/fixtures/gres"

const (
	p1g   = nvml.GPU_INSTANCE_PROFILE_1_SLICE
	p1gme = nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1
	p1g2m = nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2
	p2g   = nvml.GPU_INSTANCE_PROFILE_2_SLICE
	p3g   = nvml.GPU_INSTANCE_PROFILE_3_SLICE
	p4g   = nvml.GPU_INSTANCE_PROFILE_4_SLICE
	p7g   = nvml.GPU_INSTANCE_PROFILE_7_SLICE
)

func all1g() []gi {
	var out []gi
	for s := range uint32(7) {
		out = append(out, gi{p1g, s, 1})
	}
	return out
}

// layouts are the mock machines the adapter is tested on. Each returns the
// server and the mig-minors lines of the instances it created.
var layouts = map[string]func(t *testing.T) (*server.Server, []string){
	"dgxa100-mig-off": func(t *testing.T) (*server.Server, []string) {
		s := dgxa100.New()
		stableUUIDs(s, "a100")
		return s, nil
	},
	"dgxh100-all-1g": func(t *testing.T) (*server.Server, []string) {
		s := dgxh100.New()
		stableUUIDs(s, "h100")
		minor, lines := 3, []string(nil)
		for _, d := range s.Devices {
			lines = append(lines, migLayout(t, d.(*server.Device), all1g(), &minor)...)
		}
		return s, lines
	},
	"dgxh100-mixed": func(t *testing.T) (*server.Server, []string) {
		s := dgxh100.New()
		stableUUIDs(s, "h100")
		minor, lines := 3, []string(nil)
		dev := func(i int) *server.Device { return s.Devices[i].(*server.Device) }
		lines = append(lines, migLayout(t, dev(0), []gi{{p4g, 0, 4}, {p2g, 4, 2}, {p1g, 6, 1}}, &minor)...)
		lines = append(lines, migLayout(t, dev(1), []gi{{p3g, 0, 4}, {p3g, 4, 4}}, &minor)...)
		lines = append(lines, migLayout(t, dev(2), []gi{{p1g2m, 0, 2}, {p1g2m, 2, 2}, {p1g2m, 4, 2}, {p1g2m, 6, 2}}, &minor)...)
		lines = append(lines, migLayout(t, dev(3), []gi{{p7g, 0, 8}}, &minor)...)
		me := append([]gi{{p1gme, 0, 1}}, all1g()[1:]...)
		lines = append(lines, migLayout(t, dev(4), me, &minor)...)
		return s, lines // GPUs 5-7 stay whole
	},
	"dgxa100-mixed": func(t *testing.T) (*server.Server, []string) {
		s := dgxa100.New()
		stableUUIDs(s, "a100")
		minor, lines := 3, []string(nil)
		dev := func(i int) *server.Device { return s.Devices[i].(*server.Device) }
		lines = append(lines, migLayout(t, dev(0), []gi{{p3g, 0, 4}, {p2g, 4, 2}, {p1g, 6, 1}}, &minor)...)
		lines = append(lines, migLayout(t, dev(1), []gi{{p1g2m, 0, 2}, {p1g2m, 2, 2}, {p1g2m, 4, 2}, {p1g2m, 6, 2}}, &minor)...)
		return s, lines
	},
	"dgxh200-mig-pending": func(t *testing.T) (*server.Server, []string) {
		s := dgxh200.New()
		stableUUIDs(s, "h200")
		minor, lines := 3, []string(nil)
		lines = append(lines, migLayout(t, s.Devices[0].(*server.Device), all1g(), &minor)...)
		lines = append(lines, migLayout(t, s.Devices[1].(*server.Device), []gi{{p3g, 0, 4}, {p2g, 4, 2}, {p1g, 6, 1}}, &minor)...)
		// GPU 2: MIG was switched on but the GPU was not reset yet.
		d := s.Devices[2].(*server.Device)
		d.GetMigModeFunc = func() (int, int, nvml.Return) {
			return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
		}
		return s, lines
	},
	"dgxh100-lost-gpu": func(t *testing.T) (*server.Server, []string) {
		s := dgxh100.New()
		stableUUIDs(s, "h100")
		minor, lines := 3, []string(nil)
		lines = append(lines, migLayout(t, s.Devices[0].(*server.Device), all1g(), &minor)...)
		// GPU 5 fell off the bus: NVML answers GPU_IS_LOST for it.
		byIndex := s.DeviceGetHandleByIndexFunc
		s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
			if i == 5 {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
			return byIndex(i)
		}
		// GPU 6 answers its handle but loses it on the UUID.
		s.Devices[6].(*server.Device).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		return s, lines
	},
}

func TestCollectMockLayouts(t *testing.T) {
	for name, build := range layouts {
		t.Run(name, func(t *testing.T) {
			s, lines := build(t)
			root := writeMIGMinors(t, lines)
			inv, err := collect(s, Options{Root: root, Host: "node1"})
			if err != nil {
				t.Fatalf("collect: %v", err)
			}
			var buf bytes.Buffer
			if err := inventory.Encode(&buf, inv); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join(fixtureDir, "mock-"+name+".json"), buf.String())
			// The JSON is the fixture format: it reads back to the same value.
			back, err := inventory.Decode(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("decode own output: %v", err)
			}
			if diff := cmp.Diff(inv, back); diff != "" {
				t.Errorf("round trip (-collected +decoded):\n%s", diff)
			}
		})
	}
}

func TestCollectErrors(t *testing.T) {
	cases := map[string]struct {
		build   func(t *testing.T) (nvml.Interface, string)
		wantIs  error
		wantMsg string
	}{
		"no driver library": {
			build: func(t *testing.T) (nvml.Interface, string) {
				return &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}, ""
			},
			wantIs:  ErrNoNVML,
			wantMsg: "libnvidia-ml.so.1 was not found",
		},
		"driver not loaded": {
			build: func(t *testing.T) (nvml.Interface, string) {
				return &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }}, ""
			},
			wantIs:  ErrNoNVML,
			wantMsg: "kernel driver is not loaded",
		},
		"error mid-way through the GPUs": {
			build: func(t *testing.T) (nvml.Interface, string) {
				s := dgxh100.New()
				s.Devices[3].(*server.Device).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
				return s, ""
			},
			wantMsg: "GPU 3: get the product name: ERROR_UNKNOWN",
		},
		"mig-minors missing": {
			build: func(t *testing.T) (nvml.Interface, string) {
				s := dgxh100.New()
				minor := 3
				migLayout(t, s.Devices[0].(*server.Device), all1g(), &minor)
				return s, t.TempDir() // no mig-minors file under this root
			},
			wantMsg: "GPU 0: MIG device 0: read MIG capability minors",
		},
		"mig-minors without the instance": {
			build: func(t *testing.T) (nvml.Interface, string) {
				s := dgxh100.New()
				minor := 3
				lines := migLayout(t, s.Devices[0].(*server.Device), all1g(), &minor)
				return s, writeMIGMinors(t, lines[:4])
			},
			wantMsg: `GPU 0: MIG device 2: the MIG capability minors have no entry "gpu0/gi2/access"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lib, root := tc.build(t)
			inv, err := collect(lib, Options{Root: root, Host: "node1"})
			if err == nil {
				t.Fatalf("collect succeeded: %+v", inv)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
			if len(inv.GPUs) != 0 {
				t.Errorf("a failed collect returned a partial inventory of %d GPUs", len(inv.GPUs))
			}
		})
	}
}

// On a machine without the NVIDIA driver (this project's CI), the real
// library fails with ErrNoNVML and nothing else.
func TestCollectWithoutDriver(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("an NVIDIA driver is present; test/gpu/check.sh covers real GPUs")
	}
	_, err := Collect(Options{})
	if !errors.Is(err, ErrNoNVML) {
		t.Fatalf("Collect without a driver: got %v, want ErrNoNVML", err)
	}
}

func TestParseMIGMinors(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    migMinors
		wantErr string
	}{
		"driver format": {
			in:   "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n\n",
			want: migMinors{"config": 1, "monitor": 2, "gpu0/gi1/access": 12, "gpu0/gi1/ci0/access": 13},
		},
		"bad minor":   {in: "gpu0/gi1/access x\n", wantErr: `line 1: minor "x" is not a number`},
		"extra field": {in: "gpu0/gi1/access 1 2\n", wantErr: "line 1: expected"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseMIGMinors(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
