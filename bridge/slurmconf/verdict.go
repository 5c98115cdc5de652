package slurmconf

import (
	"errors"
	"fmt"

	"github.com/gpubridge/gpubridge/internal/table"
)

// ErrDiffers is config check's verdict when a setting differs from the
// cluster's or is missing there (its findings are printed first).
var ErrDiffers = errors.New("the cluster's configuration differs from gpubridge's (see above)")

// Verdict is config check's result over its findings: ErrDiffers when a
// setting differs or is missing; an error counting the settings that could
// not be verified (status unknown) unless allowUnknown; nil otherwise.
func Verdict(fs []Finding, allowUnknown bool) error {
	if Differ(fs) {
		return ErrDiffers
	}
	if n := Unverified(fs); n > 0 && !allowUnknown {
		return fmt.Errorf("%d setting(s) could not be verified (status unknown: give --scontrol where scontrol reaches the cluster, or --allow-unknown to accept them)", n)
	}
	return nil
}

// FindingsTable lays out the findings (config check).
func FindingsTable(fs []Finding) table.Table {
	t := table.Table{Header: []string{"Partition", "Key", "Want", "Got", "Status"}, Rows: [][]string{}}
	for _, x := range fs {
		t.Rows = append(t.Rows, []string{x.Partition, x.Key, x.Want, x.Got, string(x.Status)})
	}
	return t
}
