package clients

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// CheckSlurm builds the slurmrestd client if needed and pings it: an
// error unless slurmrestd answers, accepts the token and reaches a
// responding primary slurmctld.
func (s *Set) CheckSlurm(ctx context.Context) error {
	cl, err := s.Slurm(ctx)
	if err != nil {
		return err
	}
	p, err := cl.Ping(ctx)
	if err != nil {
		return err
	}
	if !p.Up() {
		return fmt.Errorf("slurmrestd at %s: no primary slurmctld responds (slurmctld is down, or refuses the token)", p.URL)
	}
	return nil
}

// CheckDB opens gpubridge's database if needed (schema policy included),
// pings it and asks one connection which server it is on
// (sqldb.Status, kept for the metrics as sqldb.LastStatus): a Galera node
// that is not Synced (joining, donor, desynced) is not ready, as its reads
// may be stale and its writes are refused or wait.
func (s *Set) CheckDB(ctx context.Context) error {
	db, err := s.DB(ctx)
	if err != nil {
		return err
	}
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := sqldb.Status(ctx, conn)
	if err != nil {
		return err
	}
	if !st.Synced() {
		return fmt.Errorf("database node %s: Galera wsrep_local_state %d (%s), not 4 (Synced): not ready until it syncs (or list the other nodes in database.dsn)",
			st.Node, st.LocalState, sqldb.LocalStateName(st.LocalState))
	}
	return nil
}

// CheckSlurmDB opens slurmdbd's database if needed and pings it.
func (s *Set) CheckSlurmDB(ctx context.Context) error {
	db, err := s.SlurmDB(ctx)
	if err != nil {
		return err
	}
	return db.PingContext(ctx)
}

// Permanent reports whether err will not go away by trying again in a
// few seconds: a configuration problem, a database gpubridge may not use,
// a credential slurmrestd refuses, an API version it does not serve.
func Permanent(err error) bool {
	var ve config.ValidationError
	return errors.As(err, &ve) ||
		errors.Is(err, sqldb.ErrNoSchema) || errors.Is(err, sqldb.ErrForeignSchema) ||
		errors.Is(err, slurmrest.ErrUnauthorized) || errors.Is(err, slurmrest.ErrUnsupportedVersion) ||
		errors.Is(err, slurmrest.ErrInvalid) || errors.Is(err, ErrClosed)
}
