package slurmconf

import (
	"errors"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	ok := Finding{Partition: "pool", Key: "PriorityTier", Want: "10", Got: "10", Status: OK}
	unknown := Finding{Key: "PreemptType", Want: "preempt/partition_prio", Status: Unknown}
	differs := Finding{Partition: "ondemand", Key: "PriorityTier", Want: "1", Got: "5", Status: Differs}
	if err := Verdict([]Finding{ok}, false); err != nil {
		t.Errorf("all ok: %v", err)
	}
	if err := Verdict([]Finding{ok, unknown}, false); err == nil || !strings.Contains(err.Error(), "1 setting(s) could not be verified") {
		t.Errorf("unknown: %v", err)
	}
	if err := Verdict([]Finding{ok, unknown}, true); err != nil {
		t.Errorf("unknown allowed: %v", err)
	}
	if err := Verdict([]Finding{differs, unknown}, true); !errors.Is(err, ErrDiffers) {
		t.Errorf("differs: %v", err)
	}
	if got := FindingsTable([]Finding{differs}).Rows[0]; strings.Join(got, "|") != "ondemand|PriorityTier|1|5|differs" {
		t.Errorf("row %q", got)
	}
}
