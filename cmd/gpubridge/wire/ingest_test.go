package wire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

func TestIngestSource(t *testing.T) {
	withDB := config.Config{SlurmDB: config.SlurmDB{DSN: "x"}}
	without := config.Config{}
	for _, tc := range []struct {
		c     config.Config
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
		got, err := IngestSource(tc.c, tc.in)
		if got != tc.want || (err != nil) != tc.isErr || (err != nil && !errors.Is(err, ErrUnknownSource)) {
			t.Errorf("IngestSource(%q) = %q, %v", tc.in, got, err)
		}
	}
	// slurmdb without a DSN: the configuration's error (the cluster
	// handle is nil: opening would panic).
	if _, err := Ingester(context.Background(), config.Config{}, nil, nil, nil, "slurmdb"); err == nil || !strings.Contains(err.Error(), "slurmdb.dsn") {
		t.Errorf("slurmdb without a DSN: %v", err)
	}
}
