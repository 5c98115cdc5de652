package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// versionTable is goose's history table (goose.DefaultTablename).
const versionTable = "goose_db_version"

// Kind says what a database holds, as far as gpubridge is concerned.
type Kind int

const (
	// Empty: no tables at all (or only goose's history table with no
	// migration applied: a first migration that failed). gpubridge may
	// create its schema here, when told to.
	Empty Kind = iota
	// Gpubridge: goose's history table with at least one of gpubridge's
	// migrations applied. Pending migrations may be applied.
	Gpubridge
	// Foreign: tables, but not gpubridge's. Never migrated.
	Foreign
)

func (k Kind) String() string {
	switch k {
	case Empty:
		return "empty"
	case Gpubridge:
		return "gpubridge"
	case Foreign:
		return "foreign"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Schema is what Inspect found in a database.
type Schema struct {
	Kind     Kind
	Database string   // the database's name (DATABASE())
	Tables   []string // sorted
	Applied  int      // gpubridge migrations applied
	Pending  int      // gpubridge migrations not applied yet
}

// ErrNoSchema is returned by Prepare for an empty database when it may not
// create gpubridge's schema there.
var ErrNoSchema = errors.New("the database has no gpubridge schema")

// ErrForeignSchema is returned by Prepare for a database that holds tables
// but not gpubridge's: it is never migrated.
var ErrForeignSchema = errors.New("the database holds tables that are not gpubridge's")

// Inspect reads the database's table list and goose's history and says
// what the database is. It changes nothing.
func Inspect(ctx context.Context, db *sqlx.DB) (Schema, error) {
	var s Schema
	if err := db.GetContext(ctx, &s.Database, "SELECT IFNULL(DATABASE(), '')"); err != nil {
		return s, fmt.Errorf("inspect schema: %w", err)
	}
	if s.Database == "" {
		return s, fmt.Errorf("inspect schema: the DSN names no database (add /gpubridge before the ?)")
	}
	if err := db.SelectContext(ctx, &s.Tables, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = DATABASE() ORDER BY table_name`); err != nil {
		return s, fmt.Errorf("inspect schema: list tables: %w", err)
	}
	var applied []int64
	if slices.Contains(s.Tables, versionTable) {
		if err := db.SelectContext(ctx, &applied, "SELECT DISTINCT version_id FROM "+versionTable+" WHERE is_applied"); err != nil {
			return s, fmt.Errorf("inspect schema: read %s: %w", versionTable, err)
		}
	}
	ours, err := versions()
	if err != nil {
		return s, err
	}
	s.Kind, s.Applied, s.Pending = classify(s.Tables, applied, ours)
	return s, nil
}

// classify is Inspect's rule, pure: tables of the database, versions goose
// recorded as applied, and the versions this build embeds.
func classify(tables []string, applied, ours []int64) (kind Kind, nApplied, nPending int) {
	for _, v := range ours {
		if slices.Contains(applied, v) {
			nApplied++
		}
	}
	nPending = len(ours) - nApplied
	// goose records version 0 when it creates its table.
	anyApplied := slices.ContainsFunc(applied, func(v int64) bool { return v != 0 })
	switch {
	case nApplied > 0:
		return Gpubridge, nApplied, nPending
	case len(tables) == 0, len(tables) == 1 && tables[0] == versionTable && !anyApplied:
		return Empty, 0, len(ours)
	}
	return Foreign, nApplied, nPending
}

// versions lists the migration versions this build embeds, ascending.
func versions() ([]int64, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var vs []int64
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", base)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs, nil
}

// current reports whether every migration this build embeds is applied,
// with one query on goose's table (a command's start-up pays for it each
// time): then the database is gpubridge's and nothing is to be done. false
// (never an error) when the table is missing, unreadable or anything is
// pending: Inspect then looks at the whole database.
func current(ctx context.Context, db *sqlx.DB) (Schema, bool) {
	var row struct {
		Database string         `db:"db"`
		Applied  sql.NullString `db:"applied"`
	}
	if err := db.GetContext(ctx, &row, "SELECT IFNULL(DATABASE(), '') AS db, GROUP_CONCAT(DISTINCT version_id) AS applied FROM "+versionTable+" WHERE is_applied"); err != nil || row.Database == "" {
		return Schema{}, false
	}
	ours, err := versions()
	if err != nil {
		return Schema{}, false
	}
	applied := map[int64]bool{}
	for f := range strings.SplitSeq(row.Applied.String, ",") {
		if v, err := strconv.ParseInt(f, 10, 64); err == nil {
			applied[v] = true
		}
	}
	for _, v := range ours {
		if !applied[v] {
			return Schema{}, false
		}
	}
	return Schema{Kind: Gpubridge, Database: row.Database, Applied: len(ours)}, true
}

// Policy says what Prepare may do to an empty database.
type Policy struct {
	// InitEmpty lets Prepare create gpubridge's schema in an empty
	// database. Without it an empty database is refused with ErrNoSchema.
	InitEmpty bool
}

// Prepare makes db usable by gpubridge: a gpubridge schema gets its
// pending migrations; an empty database gets the whole schema only when
// p.InitEmpty; a foreign one is refused. It returns what it found before
// it migrated.
func Prepare(ctx context.Context, db *sqlx.DB, p Policy) (Schema, error) {
	if s, ok := current(ctx, db); ok {
		return s, nil // the common case: every migration applied, one query
	}
	s, err := Inspect(ctx, db)
	if err != nil {
		return s, err
	}
	switch s.Kind {
	case Foreign:
		return s, fmt.Errorf("database %q: %w (%d tables, e.g. %s); point database.dsn at gpubridge's database or at an empty one",
			s.Database, ErrForeignSchema, len(s.Tables), strings.Join(s.Tables[:min(3, len(s.Tables))], ", "))
	case Empty:
		if !p.InitEmpty {
			return s, fmt.Errorf("database %q: %w; refusing to create it: run `gpubridge migrate` (or `gpubridge serve --init`, or set database.init: true) once if this is the right database", s.Database, ErrNoSchema)
		}
	}
	if s.Pending == 0 {
		return s, nil
	}
	return s, migrateBeside(ctx, db)
}

// migrateBeside applies the pending migrations while another process may
// be applying them too (a `gpubridge migrate` beside a `serve --init`
// preparing the same empty database). goose takes no lock on MySQL, so
// the second process to run one of a migration's statements fails (a
// duplicate table or column) and stops there, while the first goes on.
// The one that failed then looks again, every 250 ms for up to 10 s: once
// every migration is recorded, the schema is current and this is a
// success; as long as the other process makes progress, it tries the rest
// again. Without progress in that time, its first error stands.
func migrateBeside(ctx context.Context, db *sqlx.DB) error {
	first := Migrate(ctx, db)
	if first == nil {
		return nil
	}
	for wait := 0; wait < 40; wait++ {
		select {
		case <-ctx.Done():
			return first
		case <-time.After(250 * time.Millisecond):
		}
		if _, ok := current(ctx, db); ok {
			return nil
		}
		if Migrate(ctx, db) == nil {
			return nil
		}
	}
	return first
}
