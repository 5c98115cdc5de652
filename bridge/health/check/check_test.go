package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorded is one fixture and what it must parse to.
type recorded struct {
	file    string
	check   string
	model   string
	gpus    int
	exit    int
	verdict Verdict
	reason  string             // substring of the reason ("" = empty reason)
	values  map[string]float64 // "name" or "name@gpu" -> value; a subset
	// complete is a line (substring) the output must reach to be whole:
	// every prefix of the output that ends before it must fail.
	complete string
}

// h100 thresholds used for the bandwidth fixtures.
var h100 = Thresholds{"h100": {
	"host_to_device_memcpy_ce_min_gbps":        {Min: f64(40)},
	"device_to_host_memcpy_ce_min_gbps":        {Min: f64(40)},
	"device_to_device_memcpy_read_ce_min_gbps": {Min: f64(300)},
	"busbw_gbps": {Min: f64(350)},
}}

var fixtures = map[string]recorded{
	"dcgm r1 table pass": {file: "dcgm-r1-pass.txt", check: "dcgm-r1", verdict: Pass, values: map[string]float64{"tests_run": 9, "tests_failed": 0},
		complete: "| Inforom"},
	"dcgm r1 table fail": {file: "dcgm-r1-fail.txt", check: "dcgm-r1", exit: 226, verdict: Fail,
		reason: "Persistence Mode failed: Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode", values: map[string]float64{"tests_failed": 1}},
	"dcgm r2 table pass": {file: "dcgm-r2-pass.txt", check: "dcgm-r2", verdict: Pass, values: map[string]float64{"tests_run": 12},
		complete: "| Memory Bandwidth"},
	"dcgm r2 table fail": {file: "dcgm-r2-fail.txt", check: "dcgm-r2", exit: 226, verdict: Fail,
		reason: "GPU Memory failed on GPU 1: GPU 1 Error using CUDA API cudaMalloc", values: map[string]float64{"tests_failed": 1, "tests_run": 12}},
	"dcgm r3 table pass (DCGM 4)": {file: "dcgm-r3-pass.txt", check: "dcgm-r3", verdict: Pass, values: map[string]float64{"tests_run": 7},
		complete: "| memory_bandwidth"},
	"dcgm r3 table fail (DCGM 4)": {file: "dcgm-r3-fail.txt", check: "dcgm-r3", exit: 226, verdict: Fail,
		reason: "targeted_power failed on GPU 2: Detected 4 GPU(s) with power below 650.00 W"},
	"dcgm r1 json pass": {file: "dcgm-r1-pass.json", check: "dcgm-r1", verdict: Pass, values: map[string]float64{"tests_run": 9},
		complete: `"version"`},
	"dcgm r1 json fail": {file: "dcgm-r1-fail.json", check: "dcgm-r1", exit: 226, verdict: Fail, reason: "Persistence Mode failed on GPU 0: Persistence mode for GPU 0"},
	"dcgm r2 json pass": {file: "dcgm-r2-pass.json", check: "dcgm-r2", verdict: Pass, values: map[string]float64{"tests_run": 11},
		complete: `"version"`},
	"dcgm r2 json fail": {file: "dcgm-r2-fail.json", check: "dcgm-r2", exit: 226, verdict: Fail, reason: "GPU Memory failed on GPU 1: GPU 1 Error using CUDA API cudaMalloc"},
	"dcgm r3 json pass (DCGM 4)": {file: "dcgm-r3-pass.json", check: "dcgm-r3", verdict: Pass, values: map[string]float64{"tests_run": 7},
		complete: `"version" : "4.2.3"`},
	"dcgm r3 json fail (DCGM 4)":     {file: "dcgm-r3-fail.json", check: "dcgm-r3", exit: 226, verdict: Fail, reason: "targeted_power failed on GPU 2: Detected 4 GPU(s)"},
	"dcgm json runtime error":        {file: "dcgm-runtime-error.json", check: "dcgm-r1", exit: 251, verdict: Fail, reason: "Host engine connection invalid"},
	"dcgm host engine error":         {file: "dcgm-hostengine-error.txt", check: "dcgm-r2", exit: 251, verdict: Fail, reason: "dcgmi: Error: Unable to complete diagnostic"},
	"dcgm r1 output for an r3 check": {file: "dcgm-r1-pass.txt", check: "dcgm-r3", verdict: Fail, reason: "no stress results: the run is incomplete"},

	"smi ecc pass": {file: "smi-ecc-pass.csv", check: "nvidia-smi-ecc", gpus: 4, verdict: Pass,
		values: map[string]float64{"ecc_corrected_volatile@1": 3, "ecc_uncorrected_volatile@3": 0}, complete: "3, 00000000:5D:00.0"},
	"smi ecc uncorrected": {file: "smi-ecc-fail.csv", check: "nvidia-smi-ecc", gpus: 4, verdict: Fail,
		reason: "GPU 1 ecc_uncorrected_volatile=2", values: map[string]float64{"ecc_uncorrected_volatile@1": 2, "ecc_corrected_volatile@1": 17}},
	"smi ecc a GPU missing": {file: "smi-ecc-missing-gpu.csv", check: "nvidia-smi-ecc", gpus: 4, verdict: Fail, reason: "nvidia-smi lists 3 GPU(s), the node has 4"},
	"smi ecc disabled":      {file: "smi-ecc-disabled.csv", check: "nvidia-smi-ecc", gpus: 4, verdict: Warn, reason: "GPU 0 ECC disabled"},
	"smi pages pass (h100, row remapping)": {file: "smi-pages-pass-h100.csv", check: "nvidia-smi-pages", gpus: 4, verdict: Pass,
		values: map[string]float64{"remapped_rows_correctable@1": 1}, complete: "3, 00000000:5D:00.0"},
	"smi pages remap pending": {file: "smi-pages-fail-remap.csv", check: "nvidia-smi-pages", gpus: 4, verdict: Fail,
		reason: "GPU 2 remapped_rows.pending=Yes (GPU reset needed)", values: map[string]float64{"remapped_rows_uncorrectable@2": 1}},
	"smi pages retired over the RMA line (v100)": {file: "smi-pages-fail-v100.csv", check: "nvidia-smi-pages", model: "v100", gpus: 2, verdict: Fail,
		reason: "GPU 1 retired_pages_total=64 > 59", values: map[string]float64{"retired_pages_sbe@1": 41, "retired_pages_dbe@1": 23, "retired_pages_total@0": 2}},
	"smi driver error": {file: "smi-driver-error.txt", check: "nvidia-smi-ecc", gpus: 4, exit: 9, verdict: Fail,
		reason: "nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"},
	"smi driver error, exit 0": {file: "smi-driver-error.txt", check: "nvidia-smi-pages", gpus: 4, verdict: Fail, reason: "no CSV header"},

	"xid none": {file: "xid-none.txt", check: "xid", verdict: Pass, complete: "xid-scan=ok"},
	"xid 79":   {file: "xid-79.txt", check: "xid", verdict: Fail, reason: "Xid 79 on PCI:0000:3b:00: GPU has fallen off the bus", values: map[string]float64{"xid_79": 2}},
	"xid 13":   {file: "xid-13.txt", check: "xid", verdict: Warn, reason: "Xid 13 on PCI:0000:18:00", values: map[string]float64{"xid_13": 2}},

	"nvbandwidth h100": {file: "nvbandwidth-h100.txt", check: "nvbandwidth", model: "h100", gpus: 4, verdict: Pass,
		values:   map[string]float64{"host_to_device_memcpy_ce_min_gbps": 55.46, "device_to_device_memcpy_read_ce_min_gbps": 391.88, "device_to_device_memcpy_read_ce_sum_gbps": 4705.93},
		complete: "SUM device_to_device_memcpy_read_ce"},
	"nvbandwidth h100 degraded link": {file: "nvbandwidth-h100-degraded.txt", check: "nvbandwidth", model: "h100", gpus: 4, verdict: Fail,
		reason: "device_to_device_memcpy_read_ce_min_gbps=118.42 < 300 (h100)"},
	"nvbandwidth without a threshold for the model": {file: "nvbandwidth-h100.txt", check: "nvbandwidth", model: "a100", gpus: 4, verdict: Warn,
		reason: "not judged: no threshold for GPU model a100"},

	"nccl 1 node h100": {file: "nccl-1node-h100.txt", check: "nccl-1node", model: "h100", gpus: 4, verdict: Pass,
		values: map[string]float64{"busbw_gbps": 376.70, "avg_busbw_gbps": 162.891, "max_size_bytes": 8589934592}, complete: "# Avg bus bandwidth"},
	"nccl 1 node wrong elements": {file: "nccl-1node-wrong.txt", check: "nccl-1node", model: "h100", gpus: 4, verdict: Fail,
		reason: "12 wrong elements at size 1073741824 (data corruption); out of bounds values: 12 FAILED"},
	"nccl 2 nodes below threshold": {file: "nccl-2node-h100.txt", check: "nccl-2node", model: "h100", gpus: 4, verdict: Fail,
		reason: "busbw_gbps=155.79 < 350 (h100)", values: map[string]float64{"busbw_gbps": 155.79}},
	"nccl rank failure": {file: "nccl-failure.txt", check: "nccl-1node", model: "h100", gpus: 4, exit: 1, verdict: Fail, reason: "Test NCCL failure common.cu:958"},
}

func catalogFor(t *testing.T) Catalog {
	t.Helper()
	cat, err := NewCatalog([]Def{{Name: "nvbandwidth", Thresholds: h100}, {Name: "nccl-1node", Thresholds: h100}, {Name: "nccl-2node", Thresholds: h100}}, "health.checks")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestFixtures(t *testing.T) {
	cat := catalogFor(t)
	for name, tc := range fixtures {
		t.Run(name, func(t *testing.T) {
			c := cat[tc.check]
			got := c.Evaluate(Input{Output: fixture(t, tc.file), ExitCode: tc.exit, Model: tc.model, GPUs: tc.gpus})
			if got.Verdict != tc.verdict {
				t.Fatalf("verdict %s (%s), want %s", got.Verdict, got.Reason, tc.verdict)
			}
			if tc.reason == "" && tc.verdict == Pass && got.Reason != "" {
				t.Errorf("reason %q, want none", got.Reason)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q, want it to contain %q", got.Reason, tc.reason)
			}
			vals := map[string]float64{}
			for _, v := range got.Values {
				k := v.Name
				if v.GPU != "" {
					k += "@" + v.GPU
				}
				vals[k] = v.Value
			}
			for k, want := range tc.values {
				if g, ok := vals[k]; !ok || g != want {
					t.Errorf("value %s = %v (present %v), want %v; all: %v", k, g, ok, want, vals)
				}
			}
		})
	}
}

// TestTruncatedFixturesFail cuts every complete fixture before the line
// that completes it, at every line boundary and every 61st byte: no prefix
// may pass or warn.
func TestTruncatedFixturesFail(t *testing.T) {
	cat := catalogFor(t)
	for name, tc := range fixtures {
		if tc.complete == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out := fixture(t, tc.file)
			end := bytes.Index(out, []byte(tc.complete))
			if end < 0 {
				t.Fatalf("%q not in %s", tc.complete, tc.file)
			}
			end = bytes.IndexByte(out[end:], '\n') + end // the completing line must be whole
			var cuts []int
			for i := 0; i < end; i++ {
				if out[i] == '\n' || i%61 == 0 {
					cuts = append(cuts, i)
				}
			}
			c := cat[tc.check]
			for _, n := range cuts {
				got := c.Evaluate(Input{Output: out[:n], Model: tc.model, GPUs: tc.gpus})
				if got.Verdict != Fail {
					t.Fatalf("cut at byte %d of %d: verdict %s (%q), want fail\n--- output ---\n%s", n, len(out), got.Verdict, got.Reason, out[:n])
				}
				if got.Reason == "" {
					t.Fatalf("cut at byte %d: a fail without a reason", n)
				}
			}
		})
	}
}

// TestGarbageFails feeds every built-in parser output that is not its
// tool's: none may pass, and each says why.
func TestGarbageFails(t *testing.T) {
	garbage := map[string][]byte{
		"empty":       nil,
		"spaces":      []byte("  \n\n\t\n"),
		"binary":      {0x00, 0xff, 0x13, 0x37, '\n', 0x80},
		"html":        []byte("<html><body>502 Bad Gateway</body></html>\n"),
		"shell error": []byte("bash: line 1: dcgmi: command not found\n"),
		"json":        []byte(`{"hello": "world"}`),
		"half json":   []byte(`{"DCGM Diagnostic": {"test_categories": [`),
	}
	cat := Catalog(Builtins())
	for _, name := range cat.Names() {
		c := cat[name]
		for gname, g := range garbage {
			for _, exit := range []int{0, 127} {
				got := c.Evaluate(Input{Output: g, ExitCode: exit, Model: "h100", GPUs: 4})
				if got.Verdict != Fail || got.Reason == "" {
					t.Errorf("%s on %s (exit %d): %s %q, want fail with a reason", name, gname, exit, got.Verdict, got.Reason)
				}
			}
		}
	}
}

func TestSiteCheck(t *testing.T) {
	cat, err := NewCatalog([]Def{{Name: "temp", Command: "read-temps", Thresholds: Thresholds{AnyModel: {"temp_c": {Max: f64(85)}}, "h100": {"temp_c": {Max: f64(90)}}}}}, "health.checks")
	if err != nil {
		t.Fatal(err)
	}
	c := cat["temp"]
	cases := map[string]struct {
		out   string
		exit  int
		model string
		want  Result
	}{
		"exit 0":                {out: "all good\n", want: Result{Verdict: Pass}},
		"exit 1":                {out: "sensor 3 unreadable\n", exit: 1, want: Result{Verdict: Fail, Reason: "exit 1"}},
		"exit 1 with a reason":  {out: "reason=sensor 3 unreadable\n", exit: 1, want: Result{Verdict: Fail, Reason: "sensor 3 unreadable (exit 1)"}},
		"values within bounds":  {out: "temp_c=80\nfans=6\n", want: Result{Verdict: Pass, Values: []Value{{Name: "temp_c", Value: 80}, {Name: "fans", Value: 6}}}},
		"value over any model":  {out: "temp_c=88\n", model: "a100", want: Result{Verdict: Fail, Reason: "temp_c=88 > 85 (a100)", Values: []Value{{Name: "temp_c", Value: 88}}}},
		"the model's own bound": {out: "temp_c=88\n", model: "h100", want: Result{Verdict: Pass, Values: []Value{{Name: "temp_c", Value: 88}}}},
		"stated warn":           {out: "verdict=warn\nreason=fan 2 slow\n", want: Result{Verdict: Warn, Reason: "fan 2 slow"}},
		"stated pass, exit 2":   {out: "verdict=pass\n", exit: 2, want: Result{Verdict: Fail, Reason: "exit 2"}},
		"bad verdict":           {out: "verdict=great\n", want: Result{Verdict: Fail, Reason: `site command printed verdict="great"; want pass, warn or fail`}},
		"exit 1 and a value over": {out: "temp_c=99\n", exit: 1, model: "a100",
			want: Result{Verdict: Fail, Reason: "exit 1; temp_c=99 > 85 (a100)", Values: []Value{{Name: "temp_c", Value: 99}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := c.Evaluate(Input{Output: []byte(tc.out), ExitCode: tc.exit, Model: tc.model})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestNewCatalogProblems(t *testing.T) {
	neg := -1.0
	one := 1.0
	_, err := NewCatalog([]Def{
		{Name: "Bad Name", Command: "x"},
		{Name: "nocmd"},
		{Name: "dup", Command: "x"},
		{Name: "dup", Command: "y"},
		{Name: "slow", Command: "x", Timeout: 48 * 3600e9},
		{Name: "bounds", Command: "x", Thresholds: Thresholds{"h100": {"a": {}, "b": {Min: &one, Max: &neg}}}},
		{Name: "dcgm-r1", FailXIDs: []int{79}},
	}, "health.checks")
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("err = %v, want Problems", err)
	}
	var fields []string
	for _, p := range ps {
		fields = append(fields, p.Field)
	}
	want := []string{"health.checks[0].name", "health.checks[nocmd].command", "health.checks[dup]", "health.checks[slow].timeout",
		"health.checks[bounds].thresholds.h100.a", "health.checks[bounds].thresholds.h100.b", "health.checks[dcgm-r1].failXIDs"}
	if diff := cmp.Diff(want, fields, sortStrings); diff != "" {
		t.Errorf("problem fields (-want +got)\n%s\n%v", diff, err)
	}
}

var sortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestResolve(t *testing.T) {
	cat := Catalog(Builtins())
	cs, err := cat.Resolve([]string{"xid", "dcgm-r1"})
	if err != nil || len(cs) != 2 || cs[0].Name != "xid" || cs[1].Name != "dcgm-r1" {
		t.Fatalf("Resolve = %v, %v", cs, err)
	}
	if _, err := cat.Resolve([]string{"xid", "nope"}); err == nil || !strings.Contains(err.Error(), "unknown check(s) nope") {
		t.Fatalf("Resolve(nope) err = %v", err)
	}
}

func TestVerdictWorse(t *testing.T) {
	if Pass.Worse(Warn) != Warn || Warn.Worse(Pass) != Warn || Warn.Worse(Fail) != Fail || Fail.Worse(Pass) != Fail || Pass.Worse("odd") != "odd" {
		t.Error("Worse does not order pass < warn < fail (unknown counts as fail)")
	}
}

// TestNCCLTwoNodeSpan: nccl-2node passes on the recorded two-host run when
// its bandwidth meets the threshold, with its ranks and hosts as values;
// the same run with every rank on one host fails (the network was not
// measured), which the single-node check does not ask for; a cut run
// fails.
func TestNCCLTwoNodeSpan(t *testing.T) {
	low := Thresholds{"h100": {"busbw_gbps": {Min: f64(150)}}}
	cat, err := NewCatalog([]Def{{Name: "nccl-2node", Thresholds: low}, {Name: "nccl-1node", Thresholds: low}}, "health.checks")
	if err != nil {
		t.Fatal(err)
	}
	two := cat["nccl-2node"].Evaluate(Input{Output: fixture(t, "nccl-2node-h100.txt"), Model: "h100", GPUs: 4})
	vals := map[string]float64{}
	for _, v := range two.Values {
		vals[v.Name] = v.Value
	}
	if two.Verdict != Pass || vals["ranks"] != 8 || vals["hosts"] != 2 || vals["busbw_gbps"] != 155.79 {
		t.Errorf("two hosts: %s %q %v", two.Verdict, two.Reason, vals)
	}
	one := fixture(t, "nccl-2node-one-host.txt")
	got := cat["nccl-2node"].Evaluate(Input{Output: one, Model: "h100", GPUs: 4})
	if got.Verdict != Fail || !strings.Contains(got.Reason, "the ranks ran on 1 host(s) (gpu-a), the check spans 2 nodes") {
		t.Errorf("one host, two-node check: %s %q", got.Verdict, got.Reason)
	}
	if got := cat["nccl-1node"].Evaluate(Input{Output: one, Model: "h100", GPUs: 4}); got.Verdict != Pass {
		t.Errorf("one host, single-node check: %s %q", got.Verdict, got.Reason)
	}
	cut := fixture(t, "nccl-2node-h100.txt")
	if got := cat["nccl-2node"].Evaluate(Input{Output: cut[:len(cut)/2], Model: "h100", GPUs: 4}); got.Verdict != Fail {
		t.Errorf("cut two-node run: %s", got.Verdict)
	}
}
