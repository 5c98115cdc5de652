package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/clients"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

// The ingest sources.
const (
	SourceSlurmDB    = "slurmdb"    // slurm_acct_db through a read-only MariaDB user
	SourceSlurmrestd = "slurmrestd" // slurmrestd's /slurmdb/jobs
)

// ErrUnknownSource is returned for a source name that is neither.
var ErrUnknownSource = errors.New("unknown ingest source")

// IngestSource names the source to read: source when given ("rest" is
// slurmrestd), else slurmdb when slurmdb.dsn is set, else slurmrestd.
func IngestSource(c config.Config, source string) (string, error) {
	switch source {
	case "":
		if c.SlurmDB.DSN == "" {
			return SourceSlurmrestd, nil
		}
		return SourceSlurmDB, nil
	case SourceSlurmDB:
		return SourceSlurmDB, nil
	case SourceSlurmrestd, "rest":
		return SourceSlurmrestd, nil
	}
	return "", fmt.Errorf("%w: source=%s: want slurmdb or slurmrestd", ErrUnknownSource, source)
}

// Ingester returns the ingester of the cluster h from the named source
// (see IngestSource) into the ledger, with c's tier rules. The handle
// names the cluster and opens the connection, only for the source in use.
func Ingester(ctx context.Context, c config.Config, h *clients.Cluster, l ingest.Ledger, log *slog.Logger, source string) (*ingest.Ingester, error) {
	name, err := IngestSource(c, source)
	if err != nil {
		return nil, err
	}
	if name == SourceSlurmDB {
		if err := c.RequireSlurmDB(); err != nil {
			return nil, err
		}
	}
	cluster, err := h.Name(ctx)
	if err != nil {
		return nil, err
	}
	var src ingest.Source
	switch name {
	case SourceSlurmDB:
		db, err := h.SlurmDB(ctx)
		if err != nil {
			return nil, err
		}
		if src, err = ingest.NewSlurmDB(db, cluster); err != nil {
			return nil, err
		}
	case SourceSlurmrestd:
		cl, err := h.Slurm(ctx)
		if err != nil {
			return nil, err
		}
		r := ingest.NewREST(cl, cluster)
		r.Log = log
		src = r
	}
	return &ingest.Ingester{
		Cluster: cluster, Source: src, Ledger: l,
		Rules:        meter.TierRules{OnDemandPartition: c.Tenants.OnDemandPartition, OnDemandQOS: c.Tenants.OnDemandQOS, BookingPrefix: c.Bookings.ReservationPrefix},
		ChangesEvery: every(c.Ingest.ChangesEvery.Duration), VerifyEvery: every(c.Ingest.VerifyEvery.Duration),
		Log: log,
	}, nil
}

// every maps the configuration's "0 is off" to the ingester's "negative is
// never" (its 0 is the default).
func every(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
