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

// ncclScan is what parseNCCL gathered from the output so far.
type ncclScan struct {
	ranks     int
	hosts     map[string]bool
	header    []string
	busCols   []int
	wrongCols []int
	sizeCol   int
	lastSize  int64
	lastBus   float64
	rows      int
	avg       float64
	haveAvg   bool
	failures  []string
}

func parseNCCL(in Input, nodes int) Result {
	s := &ncclScan{hosts: map[string]bool{}, sizeCol: -1, lastSize: -1}
	for _, raw := range strings.Split(strings.ReplaceAll(string(in.Output), "\r\n", "\n"), "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || s.comment(l) {
			continue
		}
		if s.header == nil {
			continue // mpirun or NCCL INFO lines before the table
		}
		if bad, failed := s.row(l); failed {
			return bad
		}
	}
	return s.result(in, nodes)
}

// comment takes in a line that is not a result row: a rank's failure, a
// rank's host, the summary, or the table's header. It reports whether l
// was one of those (every line starting with '#' is).
func (s *ncclScan) comment(l string) bool {
	if strings.Contains(l, "Test NCCL failure") || strings.Contains(l, "Test CUDA failure") || strings.Contains(l, "Test failure") {
		s.failures = append(s.failures, clip(l, 120))
		return true
	}
	if m := ncclRank.FindStringSubmatch(l); m != nil && s.header == nil {
		s.ranks++
		s.hosts[m[2]] = true
		return true
	}
	if m := ncclAvg.FindStringSubmatch(l); m != nil {
		s.avg, _ = strconv.ParseFloat(m[1], 64)
		s.haveAvg = true
		return true
	}
	if m := ncclOOB.FindStringSubmatch(l); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 || !strings.EqualFold(m[2], "OK") {
			s.failures = append(s.failures, fmt.Sprintf("out of bounds values: %s %s", m[1], m[2]))
		}
		return true
	}
	if !strings.HasPrefix(l, "#") {
		return false
	}
	if f := strings.Fields(strings.TrimPrefix(l, "#")); len(f) > 0 && f[0] == "size" && s.header == nil {
		s.columns(f)
	}
	return true
}

// columns takes in the table's header: where the size, the bus
// bandwidths and the wrong-element counts are.
func (s *ncclScan) columns(f []string) {
	s.header = f
	for i, h := range f {
		switch h {
		case "busbw":
			s.busCols = append(s.busCols, i)
		case "#wrong":
			s.wrongCols = append(s.wrongCols, i)
		case "size":
			s.sizeCol = i
		}
	}
}

// row takes in one result row: its wrong elements are failures, and the
// better bus bandwidth of the largest size so far is kept. Lines that are
// not rows (NCCL INFO/WARN between them) are skipped; a row with a value
// that is not a number fails the check (failed is true, with its Result).
func (s *ncclScan) row(l string) (Result, bool) {
	f := strings.Fields(l)
	if len(f) != len(s.header) || !isInt(f[0]) {
		return Result{}, false // NCCL INFO/WARN lines between rows
	}
	size, err := strconv.ParseInt(f[s.sizeCol], 10, 64)
	if err != nil {
		return failf("nccl-tests row %q: size is not a number", clip(l, 60)), true
	}
	s.rows++
	for _, c := range s.wrongCols {
		if f[c] == "N/A" {
			continue
		}
		n, err := strconv.ParseInt(f[c], 10, 64)
		if err != nil {
			return failf("nccl-tests row of size %d: #wrong %q is not a number", size, f[c]), true
		}
		if n > 0 {
			s.failures = append(s.failures, fmt.Sprintf("%d wrong elements at size %d (data corruption)", n, size))
		}
	}
	best := math.NaN()
	for _, c := range s.busCols {
		v, err := strconv.ParseFloat(f[c], 64)
		if err != nil {
			return failf("nccl-tests row of size %d: busbw %q is not a number", size, f[c]), true
		}
		if math.IsNaN(best) || v > best {
			best = v
		}
	}
	if size >= s.lastSize {
		s.lastSize, s.lastBus = size, best
	}
	return Result{}, false
}

// result is the verdict on the whole output: failures and a non-zero exit
// first, then a missing or truncated table, then ranks that did not spread
// over the nodes; a pass carries the bandwidths.
func (s *ncclScan) result(in Input, nodes int) Result {
	if len(s.failures) > 0 {
		return failf("%s", clip(strings.Join(s.failures, "; "), 300))
	}
	if in.ExitCode != 0 {
		return failf("nccl-tests exited %d: %s", in.ExitCode, lastMeaningful(in.Output))
	}
	switch {
	case s.header == nil || s.sizeCol < 0 || len(s.busCols) == 0:
		return failf("no nccl-tests result table in the output (garbage or truncated output)")
	case s.rows == 0:
		return failf("nccl-tests printed its header but no result row (truncated output)")
	case !s.haveAvg:
		return failf("no 'Avg bus bandwidth' line: the nccl-tests output is truncated")
	case nodes > 1 && len(s.hosts) < nodes:
		names := make([]string, 0, len(s.hosts))
		for h := range s.hosts {
			names = append(names, h)
		}
		sort.Strings(names)
		return failf("the ranks ran on %d host(s) (%s), the check spans %d nodes: srun did not spread over the allocation, so the network was not measured",
			len(s.hosts), strings.Join(names, ","), nodes)
	}
	vals := []Value{
		{Name: "busbw_gbps", Value: s.lastBus, Unit: "GB/s"},
		{Name: "avg_busbw_gbps", Value: s.avg, Unit: "GB/s"},
		{Name: "max_size_bytes", Value: float64(s.lastSize), Unit: "B"},
	}
	if s.ranks > 0 {
		vals = append(vals, Value{Name: "ranks", Value: float64(s.ranks)}, Value{Name: "hosts", Value: float64(len(s.hosts))})
	}
	return Result{Verdict: Pass, Values: vals}
}
