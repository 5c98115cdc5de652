package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// SlurmDB reads job runs from slurmdbd's database through a read-only user.
type SlurmDB struct {
	db      *sqlx.DB
	cluster string
}

var _ Source = (*SlurmDB)(nil)

var clusterRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// NewSlurmDB reads cluster's tables (<cluster>_job_table, ...) from db, a
// connection to slurm_acct_db as a user that may only SELECT.
func NewSlurmDB(db *sqlx.DB, cluster string) (*SlurmDB, error) {
	if !clusterRe.MatchString(cluster) {
		return nil, fmt.Errorf("cluster name %q cannot name slurmdbd tables", cluster)
	}
	return &SlurmDB{db: db, cluster: cluster}, nil
}

// Name implements Source.
func (s *SlurmDB) Name() string { return "slurmdb" }

var _ Clocked = (*SlurmDB)(nil)

// Now implements Clocked: the database server's clock.
func (s *SlurmDB) Now(ctx context.Context) (time.Time, error) {
	var sec int64
	if err := s.db.QueryRowContext(ctx, "SELECT UNIX_TIMESTAMP()").Scan(&sec); err != nil {
		return time.Time{}, fmt.Errorf("slurm_acct_db: read the server's clock: %w", err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// jobCols are the job table columns a run needs. `partition` is a reserved
// word in MariaDB, hence the qualified name.
const jobCols = "t.job_db_inx, t.id_job, t.time_submit, t.time_start, t.time_end, t.id_assoc, t.id_qos, t.`partition`, t.account, t.tres_alloc, t.id_resv"

// lookups are the small tables a run's fields are resolved through.
type lookups struct {
	gpus   gpuTRES
	qos    map[int64]string
	assocs map[int64]assoc
	resv   map[int64]string  // reservation id -> name (<cluster>_resv_table)
	strs   map[string]string // interned partitions and accounts
}

// assoc is an association's account and user. A job's account and user
// are its association's, as sacct and slurmrestd report them (the job
// row's own account column is only a copy, used when the association is
// unknown).
type assoc struct{ account, user string }

func (s *SlurmDB) loadLookups(ctx context.Context, tx *sqlx.Tx) (*lookups, error) {
	lk := &lookups{qos: map[int64]string{}, assocs: map[int64]assoc{}, resv: map[int64]string{}, strs: map[string]string{}}
	load := func(what, query string, into map[int64]string) error {
		rows, err := tx.QueryContext(ctx, query)
		if err != nil {
			return fmt.Errorf("read %s: %w", what, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var name sql.NullString
			if err := rows.Scan(&id, &name); err != nil {
				return fmt.Errorf("read %s: %w", what, err)
			}
			into[id] = name.String
		}
		return rows.Err()
	}
	// Every gres row, deleted=1 or not: a job row keeps the TRES ids it was
	// allocated under, so a GPU type that is no longer configured (or a
	// row marked deleted) still names that job's GPUs. (type, name) is
	// unique in tres_table and slurmdbd reuses a row's id when a TRES comes
	// back, so no two rows name the same TRES.
	gres := map[int64]string{}
	if err := load("tres_table", "SELECT id, name FROM tres_table WHERE type = 'gres'", gres); err != nil {
		return nil, err
	}
	lk.gpus = newGPUTRES(gres)
	if err := load("qos_table", "SELECT id, name FROM qos_table", lk.qos); err != nil {
		return nil, err
	}
	// A reservation has a row per version (every update ends one and
	// starts the next), all with its id and name; deleted ones keep theirs.
	if err := load("reservation table", "SELECT DISTINCT id_resv, resv_name FROM `"+s.cluster+"_resv_table`", lk.resv); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id_assoc, acct, user FROM `"+s.cluster+"_assoc_table`")
	if err != nil {
		return nil, fmt.Errorf("read association table: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var a assoc
		if err := rows.Scan(&id, &a.account, &a.user); err != nil {
			return nil, fmt.Errorf("read association table: %w", err)
		}
		lk.assocs[id] = a
	}
	return lk, rows.Err()
}

func (lk *lookups) intern(b []byte) string {
	if v, ok := lk.strs[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(lk.strs) < 1<<16 {
		lk.strs[v] = v
	}
	return v
}

var _ Unordered = (*SlurmDB)(nil)

// Unordered implements Unordered: the window's rows come in the job
// table's order.
func (s *SlurmDB) Unordered() {}

// ReadsChanges implements ChangeReader: runs by key (the job table's
// unique (id_job, time_submit)) and rows by mod_time.
func (s *SlurmDB) ReadsChanges() bool { return true }

// Read implements Source: one read-only REPEATABLE READ transaction, so
// the running and finished runs come from one snapshot of the job table.
// With q.CheckFrom it first compares slurmdbd's hourly rollups with the job
// rows (purge.go) and delivers nothing when rows are missing. After the
// window it delivers, through h.Changed, the runs of q.Lookup it has not
// delivered and that have ended, then (q.ChangedSince) every finished row
// with mod_time >= q.ChangedSince that ended before the window: a full
// scan of the job table, since mod_time has no index.
func (s *SlurmDB) Read(ctx context.Context, q Query, h Handler) error {
	tx, err := s.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return fmt.Errorf("slurm_acct_db: begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	lk, err := s.loadLookups(ctx, tx)
	if err != nil {
		return fmt.Errorf("slurm_acct_db: %w", err)
	}
	if q.CheckFrom != 0 {
		if err := s.checkMissing(ctx, tx, lk, q, h); err != nil {
			return err
		}
	}
	rd := &read{s: s, tx: tx, lk: lk, table: "`" + s.cluster + "_job_table`", delivered: make(map[meter.RunKey]bool, len(q.Lookup))}
	for _, k := range q.Lookup {
		rd.delivered[k] = false
	}
	if err := rd.running(ctx, h); err != nil {
		return err
	}
	if err := rd.window(ctx, q, h); err != nil || h.Changed == nil {
		return err
	}
	if err := rd.endedLookups(ctx, h); err != nil {
		return err
	}
	if q.ChangedSince == 0 {
		return nil
	}
	return rd.changedSince(ctx, q, h)
}

// checkMissing hands the GPU use that the job rows of [q.CheckFrom, q.To)
// lack to h.Missing, or fails with *MissingError when h takes none.
func (s *SlurmDB) checkMissing(ctx context.Context, tx *sqlx.Tx, lk *lookups, q Query, h Handler) error {
	missing, err := s.missingRows(ctx, tx, lk, q.CheckFrom, q.To)
	if err != nil {
		return fmt.Errorf("slurm_acct_db: check for purged job rows: %w", err)
	}
	if len(missing) == 0 {
		return nil
	}
	if h.Missing == nil {
		return fmt.Errorf("slurm_acct_db: %w", &MissingError{Missing: missing})
	}
	return h.Missing(missing)
}

// read is one Read's transaction on the cluster's job table, with the
// lookups (q.Lookup) it has delivered so far, as running or finished.
type read struct {
	s         *SlurmDB
	tx        *sqlx.Tx
	lk        *lookups
	table     string
	delivered map[meter.RunKey]bool
}

// deliver marks a looked-up run as delivered.
func (rd *read) deliver(k meter.RunKey) {
	if _, ok := rd.delivered[k]; ok {
		rd.delivered[k] = true
	}
}

// running hands every run still running to h.Running, at once.
func (rd *read) running(ctx context.Context, h Handler) error {
	var running []meter.Run
	err := rd.s.scan(ctx, rd.tx, rd.lk, "SELECT "+jobCols+" FROM "+rd.table+" t WHERE t.time_end = 0 AND t.time_start > 0",
		func(r meter.Run, _ uint64) error {
			rd.deliver(r.Key)
			running = append(running, r)
			return nil
		})
	if err != nil {
		return err
	}
	return h.Running(running)
}

// window hands every run that ended in [q.From, q.To) to h.Finished.
//
// The bounds are integers formatted into the text (no placeholders), which
// keeps the query on the text protocol: no prepare round trip (the driver
// parses the integer columns itself; scan takes them as they come). Every
// row of the window, GPUs or not (q.AllRows or not): a filter on
// tres_alloc costs the server more than sending the rows (a month of 1M
// rows: 2.9 s filtered, 1.9 s whole, on the testbed), and no ORDER BY,
// which would cost it about as much again (Unordered).
func (rd *read) window(ctx context.Context, q Query, h Handler) error {
	query := "SELECT " + jobCols + " FROM " + rd.table + " t WHERE t.time_end >= " + strconv.FormatInt(q.From, 10) +
		" AND t.time_end < " + strconv.FormatInt(q.To, 10)
	return rd.s.scan(ctx, rd.tx, rd.lk, query, func(r meter.Run, inx uint64) error {
		rd.deliver(r.Key)
		return h.Finished(r, inx)
	})
}

// endedLookups hands to h.Changed the looked-up runs that were running and
// have ended outside the window, found by job id, 1000 ids a query.
func (rd *read) endedLookups(ctx context.Context, h Handler) error {
	var ids []uint32
	for k, done := range rd.delivered {
		if !done {
			ids = append(ids, k.JobID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		var b strings.Builder
		b.WriteString("SELECT " + jobCols + " FROM " + rd.table + " t WHERE t.time_end > 0 AND t.id_job IN (")
		for i, id := range ids[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(uint64(id), 10))
		}
		b.WriteByte(')')
		ids = ids[n:]
		err := rd.s.scan(ctx, rd.tx, rd.lk, b.String(), func(r meter.Run, _ uint64) error {
			if done, ok := rd.delivered[r.Key]; !ok || done {
				return nil // another run of the same job id
			}
			rd.delivered[r.Key] = true
			return h.Changed(r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// changedSince hands to h.Changed the rows changed since the last pass
// that ended before the window (those in it were read with the window,
// those after it are the next window's).
func (rd *read) changedSince(ctx context.Context, q Query, h Handler) error {
	query := "SELECT " + jobCols + " FROM " + rd.table + " t WHERE t.mod_time >= " + strconv.FormatInt(q.ChangedSince, 10) +
		" AND t.time_end > 0 AND t.time_end < " + strconv.FormatInt(q.From, 10)
	return rd.s.scan(ctx, rd.tx, rd.lk, query, func(r meter.Run, _ uint64) error {
		if rd.delivered[r.Key] {
			return nil
		}
		return h.Changed(r)
	})
}

// scan streams query's rows as runs, one row at a time.
func (s *SlurmDB) scan(ctx context.Context, tx *sqlx.Tx, lk *lookups, query string, fn func(meter.Run, uint64) error) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return fmt.Errorf("slurm_acct_db: read jobs: %w", err)
	}
	defer rows.Close()
	// The integer columns are scanned into any: the driver parses them
	// (text protocol too) and database/sql hands the value over as it is,
	// where a RawBytes destination would format it back into text.
	var (
		inx, id, submit, start, end, assocID, qos, resv any
		partition, account, tres                        sql.RawBytes
		buf                                             []meter.Alloc
		slab                                            []meter.Alloc // the runs' GPUs, carved from one array per few thousand runs
		bad                                             int
	)
	for rows.Next() {
		if err := rows.Scan(&inx, &id, &submit, &start, &end, &assocID, &qos, &partition, &account, &tres, &resv); err != nil {
			return fmt.Errorf("slurm_acct_db: read job row: %w", err)
		}
		r := meter.Run{
			Key:       meter.RunKey{Cluster: s.cluster, JobID: uint32(num(id)), Submit: int64(num(submit))},
			Start:     int64(num(start)),
			End:       int64(num(end)),
			Partition: lk.intern(partition),
			QOS:       lk.qos[int64(num(qos))],
		}
		if a, ok := lk.assocs[int64(num(assocID))]; ok && a.account != "" {
			r.Account, r.User = a.account, a.user
		} else {
			r.Account = lk.intern(account)
		}
		if rid := int64(num(resv)); rid != 0 {
			name, ok := lk.resv[rid]
			if !ok && r.Start > 0 {
				// It may be a booking's, whose use is already paid for:
				// refuse rather than bill it at the tier's rate.
				return fmt.Errorf("slurm_acct_db: %w: job %d (submitted %d) ran in reservation id %d, which %s_resv_table does not hold (purged?)",
					ErrUnknownReservation, r.Key.JobID, r.Key.Submit, rid, s.cluster)
			}
			r.Reservation = name
		}
		if r.Start > 0 {
			buf, bad = lk.gpus.allocs(tres, buf)
			if bad > 0 {
				return fmt.Errorf("slurm_acct_db: %w: job %d (submitted %d, job_db_inx %d): tres_alloc %q has %d malformed entr(ies); repair the row, the run is not billed short",
					ErrMalformedTRES, r.Key.JobID, r.Key.Submit, num(inx), tres, bad)
			}
			if len(buf) > 0 {
				r.GPUs, slab = carve(slab, buf)
				sortAllocs(r.GPUs)
			}
		}
		if err := fn(r, num(inx)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("slurm_acct_db: read jobs: %w", err)
	}
	return nil
}

// ErrUnknownReservation: the row of a job that started names a reservation
// id that the reservation table does not hold, so whether the job ran
// inside a booking cannot be told. (A job that never started costs
// nothing: its reservation may have been deleted before it began, which
// leaves no row.)
var ErrUnknownReservation = errors.New("job ran in an unknown reservation")

// carve copies src into slab's spare capacity (a new array of a few
// thousand when it has too little) and returns the copy and the slab
// with the copy taken. The copy's capacity is its length, so an append
// to it cannot write into the next copy.
func carve(slab, src []meter.Alloc) (cp, rest []meter.Alloc) {
	n := len(src)
	if cap(slab)-len(slab) < n {
		slab = make([]meter.Alloc, 0, max(4096, n))
	}
	at := len(slab)
	cp = append(slab[at:at:at+n], src...)
	return cp, slab[:at+n]
}

// num is an integer column's value as the driver delivers it (int64 or
// uint64, or the text of it); anything else, or a negative value, reads
// as 0, as atou reads text.
func num(v any) uint64 {
	switch n := v.(type) {
	case int64:
		if n < 0 {
			return 0
		}
		return uint64(n)
	case uint64:
		return n
	case []byte:
		return atou(n)
	case string:
		return atou([]byte(n))
	}
	return 0
}

// atou parses an unsigned decimal; anything else reads as 0.
func atou(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}
