package check

import (
	"bufio"
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// siteKey is what a site command's key=value line may name: lower-case
// letters, digits, '_' and '.', starting with a letter.
var siteKey = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,63}$`)

// parseSite reads a site command: exit code 0 passes, anything else fails.
// Optional lines `key=value` report values (numbers are measured values,
// judged by the check's thresholds); the keys `verdict` (pass, warn or
// fail) and `reason` let the command judge itself, but a non-zero exit is
// always a fail. Other lines are kept as evidence only.
func parseSite(in Input) Result {
	r := Result{Verdict: Pass}
	var stated Verdict
	var reason string
	sc := bufio.NewScanner(bytes.NewReader(in.Output))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || !siteKey.MatchString(k) {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "verdict":
			stated = Verdict(strings.ToLower(v))
			if !stated.Valid() {
				return failf("site command printed verdict=%q; want pass, warn or fail", clip(v, 40))
			}
			continue
		case "reason":
			reason = clip(v, 200)
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			r.Values = append(r.Values, Value{Name: k, Value: f})
		}
	}
	if err := sc.Err(); err != nil {
		return failf("site command output unreadable: %v", err)
	}
	if stated != "" {
		r.Verdict = stated
	}
	switch {
	case in.ExitCode != 0:
		r.Verdict = Fail
		if reason == "" {
			reason = "exit " + strconv.Itoa(in.ExitCode)
		} else {
			reason += " (exit " + strconv.Itoa(in.ExitCode) + ")"
		}
	case r.Verdict != Pass && reason == "":
		reason = "the command reported " + string(r.Verdict)
	}
	r.Reason = reason
	return r
}
