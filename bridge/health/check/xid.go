package check

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The NVIDIA driver reports GPU errors as XIDs in the kernel log, one line
// each, in every log format (dmesg, dmesg --time-format iso, journalctl -k):
//
//	NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
//
// nvidia-smi has no query for them. The built-in xid check's command greps
// these lines from the kernel log since boot and ends with a line
// `xid-scan=ok lines=N`, so that a log that could not be read is told apart
// from a log without XIDs.

var (
	xidLine = regexp.MustCompile(`NVRM: Xid \((PCI:[0-9A-Fa-f:.]+)\): (\d+),\s*(.*)$`)
	// Newer drivers put the process between the number and the message.
	xidProcess = regexp.MustCompile(`^pid=[^,]*,\s*name=[^,]*,\s*`)
)

// DefaultFailXIDs are XIDs that need a GPU reset, a reboot or a repair
// (NVIDIA's XID catalog): 48 double-bit ECC error, 62 internal
// micro-controller halt, 64 ECC page retirement or row remapper recording
// failure, 74 NVLink error, 79 GPU fallen off the bus, 95 uncontained ECC
// error, 119 and 120 GSP errors, 140 unrecovered ECC error. Others warn.
var DefaultFailXIDs = []int{48, 62, 64, 74, 79, 95, 119, 120, 140}

// parseXID reads the xid check's output. Any XID in failXIDs fails the
// node, any other warns; values count each XID number (xid_79=2).
func parseXID(in Input, failXIDs []int) Result {
	if in.ExitCode != 0 {
		return failf("kernel log not read (exit %d): %s", in.ExitCode, firstLine(in.Output))
	}
	counts := map[int]int{}
	var order []int
	var examples []string
	scanned := false
	for _, l := range strings.Split(string(in.Output), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "xid-scan=ok") {
			scanned = true
			continue
		}
		m := xidLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		if counts[n] == 0 {
			order = append(order, n)
			msg := xidProcess.ReplaceAllString(m[3], "")
			examples = append(examples, fmt.Sprintf("Xid %d on %s: %s", n, m[1], clip(msg, 80)))
		}
		counts[n]++
	}
	if !scanned {
		return failf("no xid-scan=ok line: the kernel log was not read to the end (truncated output or a failed command)")
	}
	res := Result{Verdict: Pass}
	var failed, warned []string
	for i, n := range order {
		res.Values = append(res.Values, Value{Name: "xid_" + strconv.Itoa(n), Value: float64(counts[n]), Unit: "events"})
		if slices.Contains(failXIDs, n) {
			failed = append(failed, examples[i])
		} else {
			warned = append(warned, examples[i])
		}
	}
	switch {
	case len(failed) > 0:
		res.Verdict = Fail
		res.Reason = strings.Join(failed, "; ")
	case len(warned) > 0:
		res.Verdict = Warn
		res.Reason = strings.Join(warned, "; ")
	}
	res.Reason = clip(res.Reason, 300)
	return res
}
