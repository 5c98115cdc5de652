package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

func TestIngestSource(t *testing.T) {
	withDB := IngestSetup{Config: config.Config{SlurmDB: config.SlurmDB{DSN: "x"}}}
	without := IngestSetup{}
	for _, tc := range []struct {
		s     IngestSetup
		in    string
		want  string
		isErr bool
	}{
		{withDB, "", SourceSlurmDB, false},
		{without, "", SourceSlurmrestd, false},
		{withDB, "rest", SourceSlurmrestd, false},
		{without, "slurmdb", SourceSlurmDB, false},
		{withDB, "sacct", "", true},
	} {
		got, err := tc.s.Source(tc.in)
		if got != tc.want || (err != nil) != tc.isErr || (err != nil && !errors.Is(err, ErrUnknownSource)) {
			t.Errorf("Source(%q) = %q, %v", tc.in, got, err)
		}
	}
	// slurmdb without a DSN: the configuration's error (SlurmDB is nil:
	// opening would panic).
	if _, err := (IngestSetup{}).Ingester(context.Background(), "slurmdb"); err == nil || !strings.Contains(err.Error(), "slurmdb.dsn") {
		t.Errorf("slurmdb without a DSN: %v", err)
	}
}
