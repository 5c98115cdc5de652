package burst

import (
	"fmt"
	"strconv"
	"strings"
)

// ArrayTasks counts the tasks in Slurm's array_task_string, the pending
// tasks an array's meta record still stands for: "1-3" is 3, "1,3,5-7" is
// 5, "0-9:2" (step 2) is 5; a "%N" suffix (at most N at once) does not
// change the count. An empty string is a plain job: 1.
//
// slurmrestd refuses to update a single array task ("Submit job update
// against Array Job's JobID"), so moving the record moves all its pending
// tasks at once: the decision charges the cap and the budget for all of
// them.
func ArrayTasks(s string) (int64, error) {
	s = strings.Trim(strings.TrimSpace(s), "[]")
	if i := strings.IndexByte(s, '%'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return 1, nil
	}
	var n int64
	for part := range strings.SplitSeq(s, ",") {
		rng, stepS, hasStep := strings.Cut(part, ":")
		step := int64(1)
		if hasStep {
			v, err := strconv.ParseInt(stepS, 10, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("array tasks %q: step %q", s, stepS)
			}
			step = v
		}
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, err := strconv.ParseInt(loS, 10, 64)
		if err != nil || lo < 0 {
			return 0, fmt.Errorf("array tasks %q: %q is not a task id", s, loS)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.ParseInt(hiS, 10, 64); err != nil || hi < lo {
				return 0, fmt.Errorf("array tasks %q: bad range %q", s, rng)
			}
		}
		n += (hi-lo)/step + 1
	}
	return n, nil
}
