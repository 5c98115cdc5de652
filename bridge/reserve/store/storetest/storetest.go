package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// Scratch is a scratch database.
type Scratch struct {
	Name string
	DSN  string
	DB   *sqlx.DB
	root *sqlx.DB
}

// New creates database <prefix>_<random> next to the one dsn names (the
// testbed's gpubridge user may create gpubridge_* databases) and migrates it.
func New(ctx context.Context, dsn, prefix string) (*Scratch, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("scratch database: %s: %w", sqldb.Redact(dsn), err)
	}
	root, err := sqldb.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s_%d_%04d", prefix, time.Now().Unix(), rand.IntN(10000))
	if _, err := root.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		root.Close()
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	cfg.DBName = name
	s := &Scratch{Name: name, DSN: cfg.FormatDSN(), root: root}
	if s.DB, err = sqldb.OpenMigrated(ctx, s.DSN); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close drops the database.
func (s *Scratch) Close() error {
	if s.DB != nil {
		s.DB.Close()
	}
	_, err := s.root.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+s.Name+"`")
	s.root.Close()
	return err
}
