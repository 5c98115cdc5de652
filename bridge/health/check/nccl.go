package check

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// nccl-tests (all_reduce_perf and its siblings) print a commented header,
// one row per message size,
//
//	#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//	#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//	  8589934592    2147483648     float     sum      -1    35021  245.28  429.24      0    34988  245.51  429.64      0
//
// (out-of-place, then in-place), and a summary:
//
//	# Out of bounds values : 0 OK
//	# Avg bus bandwidth    : 112.345
//
// A row's #wrong counts elements that came back wrong (data corruption);
// "N/A" when validation is off. A failing rank prints "Test NCCL failure" or
// "Test CUDA failure". Values: busbw_gbps (the bus bandwidth at the largest
// size, the better of out-of-place and in-place) and avg_busbw_gbps.

// The header lists each rank's host and device,
//
//	#  Rank  4 Group  0 Pid  38764 on      gpu-c device  0 [0x18] NVIDIA H100 80GB HBM3
//
// a check that spans nodes (nccl-2node) fails when its ranks sat on fewer
// hosts than it asked for (srun did not spread over the allocation, and
// the run measured NVLink, not the network). Values: ranks and hosts.

var (
	ncclRank = regexp.MustCompile(`^#\s*Rank\s+(\d+)\s.*\son\s+(\S+)\s+device\s+(\d+)`)
	ncclAvg  = regexp.MustCompile(`^#\s*Avg bus bandwidth\s*:\s*([0-9.]+)`)
	ncclOOB  = regexp.MustCompile(`^#\s*Out of bounds values\s*:\s*(\d+)\s*(\w+)`)
)

func parseNCCL(in Input, nodes int) Result {
	ranks, hosts := 0, map[string]bool{}
	var header []string
	var busCols, wrongCols []int
	sizeCol := -1
	var lastSize int64 = -1
	var lastBus float64
	rows := 0
	avg, haveAvg := 0.0, false
	var failures []string
	for _, raw := range strings.Split(strings.ReplaceAll(string(in.Output), "\r\n", "\n"), "\n") {
		l := strings.TrimSpace(raw)
		if l == "" {
			continue
		}
		if strings.Contains(l, "Test NCCL failure") || strings.Contains(l, "Test CUDA failure") || strings.Contains(l, "Test failure") {
			failures = append(failures, clip(l, 120))
			continue
		}
		if m := ncclRank.FindStringSubmatch(l); m != nil && header == nil {
			ranks++
			hosts[m[2]] = true
			continue
		}
		if m := ncclAvg.FindStringSubmatch(l); m != nil {
			avg, _ = strconv.ParseFloat(m[1], 64)
			haveAvg = true
			continue
		}
		if m := ncclOOB.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > 0 || !strings.EqualFold(m[2], "OK") {
				failures = append(failures, fmt.Sprintf("out of bounds values: %s %s", m[1], m[2]))
			}
			continue
		}
		if strings.HasPrefix(l, "#") {
			f := strings.Fields(strings.TrimPrefix(l, "#"))
			if len(f) > 0 && f[0] == "size" && header == nil {
				header = f
				for i, h := range f {
					switch h {
					case "busbw":
						busCols = append(busCols, i)
					case "#wrong":
						wrongCols = append(wrongCols, i)
					case "size":
						sizeCol = i
					}
				}
			}
			continue
		}
		if header == nil {
			continue // mpirun or NCCL INFO lines before the table
		}
		f := strings.Fields(l)
		if len(f) != len(header) || !isInt(f[0]) {
			continue // NCCL INFO/WARN lines between rows
		}
		size, err := strconv.ParseInt(f[sizeCol], 10, 64)
		if err != nil {
			return failf("nccl-tests row %q: size is not a number", clip(l, 60))
		}
		rows++
		for _, c := range wrongCols {
			if f[c] == "N/A" {
				continue
			}
			n, err := strconv.ParseInt(f[c], 10, 64)
			if err != nil {
				return failf("nccl-tests row of size %d: #wrong %q is not a number", size, f[c])
			}
			if n > 0 {
				failures = append(failures, fmt.Sprintf("%d wrong elements at size %d (data corruption)", n, size))
			}
		}
		best := math.NaN()
		for _, c := range busCols {
			v, err := strconv.ParseFloat(f[c], 64)
			if err != nil {
				return failf("nccl-tests row of size %d: busbw %q is not a number", size, f[c])
			}
			if math.IsNaN(best) || v > best {
				best = v
			}
		}
		if size >= lastSize {
			lastSize, lastBus = size, best
		}
	}
	if len(failures) > 0 {
		return failf("%s", clip(strings.Join(failures, "; "), 300))
	}
	if in.ExitCode != 0 {
		return failf("nccl-tests exited %d: %s", in.ExitCode, lastMeaningful(in.Output))
	}
	switch {
	case header == nil || sizeCol < 0 || len(busCols) == 0:
		return failf("no nccl-tests result table in the output (garbage or truncated output)")
	case rows == 0:
		return failf("nccl-tests printed its header but no result row (truncated output)")
	case !haveAvg:
		return failf("no 'Avg bus bandwidth' line: the nccl-tests output is truncated")
	case nodes > 1 && len(hosts) < nodes:
		names := make([]string, 0, len(hosts))
		for h := range hosts {
			names = append(names, h)
		}
		sort.Strings(names)
		return failf("the ranks ran on %d host(s) (%s), the check spans %d nodes: srun did not spread over the allocation, so the network was not measured",
			len(hosts), strings.Join(names, ","), nodes)
	}
	vals := []Value{
		{Name: "busbw_gbps", Value: lastBus, Unit: "GB/s"},
		{Name: "avg_busbw_gbps", Value: avg, Unit: "GB/s"},
		{Name: "max_size_bytes", Value: float64(lastSize), Unit: "B"},
	}
	if ranks > 0 {
		vals = append(vals, Value{Name: "ranks", Value: float64(ranks)}, Value{Name: "hosts", Value: float64(len(hosts))})
	}
	return Result{Verdict: Pass, Values: vals}
}
