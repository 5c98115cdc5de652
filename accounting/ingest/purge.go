package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// Rows that slurmdbd purged (PurgeJobAfter) or that were deleted before
// gpubridge read them leave no trace in the job table, but slurmdbd's
// hourly rollups (<cluster>_assoc_usage_hour_table, kept for
// PurgeUsageAfter, usually longer) still hold their GPU use per
// association. Before an ingest reads a window, the SlurmDB source compares
// the two for the hours it has not checked before: GPU-seconds in the
// rollups that no job row accounts for are missing rows, and the ingest
// stops instead of billing them as zero.

// ErrMissingRows: slurmdbd's rollups hold GPU use that no job row accounts
// for (rows purged or deleted before they were ingested). errors.As gives
// the *MissingError.
var ErrMissingRows = errors.New("job rows missing from slurm_acct_db")

// Missing is one association's GPU use that the rollups hold and the job
// rows do not, over the hours [From, To) (Unix seconds, whole hours).
type Missing struct {
	Account, User string
	From, To      int64
	// RollupSeconds and JobSeconds are the GPU-seconds of the hours in
	// slurmdbd's rollups and as the job rows give them.
	RollupSeconds, JobSeconds int64
}

// Seconds is the GPU-seconds no job row accounts for.
func (m Missing) Seconds() int64 { return m.RollupSeconds - m.JobSeconds }

func (m Missing) String() string {
	who := m.Account
	if m.User != "" {
		who += "/" + m.User
	}
	return fmt.Sprintf("%s: %d GPU-seconds (rollups %d, job rows %d) in %s..%s", who, m.Seconds(), m.RollupSeconds, m.JobSeconds,
		unixUTC(m.From).Format(time.RFC3339), unixUTC(m.To).Format(time.RFC3339))
}

// MissingError reports missing job rows; nothing was written.
type MissingError struct{ Missing []Missing }

func (e *MissingError) Error() string {
	var total, from, to int64
	parts := make([]string, 0, len(e.Missing))
	for i, m := range e.Missing {
		total += m.Seconds()
		parts = append(parts, m.String())
		if i == 0 || m.From < from {
			from = m.From
		}
		to = max(to, m.To)
	}
	return fmt.Sprintf("%v: slurmdbd's hourly rollups hold %d GPU-seconds of %d association(s) that no job row accounts for (%s); "+
		"the rows were purged (slurmdbd.conf PurgeJobAfter) or deleted before gpubridge ingested them, and billing them as zero would be wrong. "+
		"Nothing was written: restore the rows (sacctmgr archive load) and ingest again; if they are gone for good, accept the gap "+
		"(not billed, written to the audit log): gpubridge ingest accept-missing=%s..%s",
		ErrMissingRows, total, len(e.Missing), strings.Join(parts, "; "), unixUTC(from).Format("2006-01-02T15:04"), unixUTC(to).Format("2006-01-02T15:04"))
}

// Is makes errors.Is(err, ErrMissingRows) true.
func (e *MissingError) Is(target error) bool { return target == ErrMissingRows }

// hour is one hour in seconds.
const hour = 3600

// checkHours returns the whole hours [h0, h1) that can be checked: from
// from (rounded up), to the earlier of to and the end of what slurmdbd has
// rolled up (both rounded down; rolledUp 0: unknown, to alone). Hours not
// rolled up have no rollup rows and so cannot show missing use.
func checkHours(from, to, rolledUp int64) (h0, h1 int64) {
	h0 = (from + hour - 1) / hour * hour
	if rolledUp > 0 {
		to = min(to, rolledUp)
	}
	h1 = to / hour * hour
	return h0, h1
}

// measure picks the TRES ids both sides are summed over: gres/gpu
// (Slurm counts every GPU, typed or not, under it) when tres_table has it,
// else every typed GPU TRES.
func (g gpuTRES) measure() []int64 {
	if g.untyped != 0 {
		return []int64{g.untyped}
	}
	ids := make([]int64, 0, len(g.typed))
	for id := range g.typed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// count sums the counts of ids in a tres_alloc string.
func count(s []byte, ids []int64) int64 {
	var total int64
	for i := 0; i < len(s); {
		var id, n int64
		ok := true
		for ; i < len(s) && s[i] != '='; i++ {
			if s[i] < '0' || s[i] > '9' {
				ok = false
			}
			id = id*10 + int64(s[i]-'0')
		}
		i++
		for ; i < len(s) && s[i] != ','; i++ {
			if s[i] < '0' || s[i] > '9' || n > maxCount {
				ok = false
				continue
			}
			n = n*10 + int64(s[i]-'0')
		}
		i++
		if ok && n > 0 && n <= maxCount && slices.Contains(ids, id) {
			total += n
		}
	}
	return total
}

// missingRows compares, for the hours [h0, h1), slurmdbd's hourly rollups
// of GPU TRES with the job rows, per association, in tx's snapshot.
func (s *SlurmDB) missingRows(ctx context.Context, tx *sqlx.Tx, lk *lookups, from, to int64) ([]Missing, error) {
	var rolled sql.NullInt64
	err := tx.QueryRowContext(ctx, "SELECT MIN(hourly_rollup) FROM `"+s.cluster+"_last_ran_table`").Scan(&rolled)
	if err != nil {
		return nil, fmt.Errorf("read last_ran_table: %w", err)
	}
	return s.missingRowsUpTo(ctx, tx, lk, from, to, rolled.Int64)
}

// missingRowsUpTo is missingRows with slurmdbd's rollups taken to reach
// rolled (0: unknown, to alone).
func (s *SlurmDB) missingRowsUpTo(ctx context.Context, tx *sqlx.Tx, lk *lookups, from, to, rolled int64) ([]Missing, error) {
	h0, h1 := checkHours(from, to, rolled)
	ids := lk.gpus.measure()
	if h1 <= h0 || len(ids) == 0 {
		return nil, nil
	}
	idList := make([]string, len(ids))
	for i, id := range ids {
		idList[i] = strconv.FormatInt(id, 10)
	}
	// The hour table's key is (id, id_tres, time_start): start from the
	// associations so each one is a key range.
	rows, err := tx.QueryContext(ctx, "SELECT STRAIGHT_JOIN a.id_assoc, u.time_start, CAST(SUM(u.alloc_secs) AS SIGNED) FROM `"+s.cluster+"_assoc_table` a JOIN `"+
		s.cluster+"_assoc_usage_hour_table` u ON u.id = a.id_assoc AND u.id_tres IN ("+strings.Join(idList, ",")+
		") AND u.time_start >= ? AND u.time_start < ? GROUP BY a.id_assoc, u.time_start", h0, h1)
	if err != nil {
		return nil, fmt.Errorf("read hourly rollups: %w", err)
	}
	rollup := map[int64]map[int64]int64{} // association -> hour -> GPU-seconds
	for rows.Next() {
		var id, at, sec int64
		if err := rows.Scan(&id, &at, &sec); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read hourly rollups: %w", err)
		}
		if sec > 0 {
			if rollup[id] == nil {
				rollup[id] = map[int64]int64{}
			}
			rollup[id][at/hour*hour] += sec
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read hourly rollups: %w", err)
	}
	if len(rollup) == 0 {
		return nil, nil // nothing rolled up (rows written with SQL are not): nothing can be missing
	}
	jobs := map[int64]map[int64]int64{}
	rows, err = tx.QueryContext(ctx, "SELECT t.id_assoc, t.time_start, t.time_end, t.tres_alloc FROM `"+s.cluster+"_job_table` t WHERE t.time_start > 0 AND t.time_start < "+
		strconv.FormatInt(h1, 10)+" AND (t.time_end = 0 OR t.time_end > "+strconv.FormatInt(h0, 10)+") AND "+lk.gpus.filter())
	if err != nil {
		return nil, fmt.Errorf("read job rows of the checked hours: %w", err)
	}
	defer rows.Close()
	var assocID, start, end int64
	var tres sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&assocID, &start, &end, &tres); err != nil {
			return nil, fmt.Errorf("read job rows of the checked hours: %w", err)
		}
		if _, ok := rollup[assocID]; !ok {
			continue // an association without rollups cannot miss anything
		}
		if end == 0 || end > h1 {
			end = h1
		}
		n := count(tres, ids)
		if n <= 0 {
			continue
		}
		if jobs[assocID] == nil {
			jobs[assocID] = map[int64]int64{}
		}
		for at := max(start, h0) / hour * hour; at < end; at += hour {
			if s, e := max(start, at, h0), min(end, at+hour); e > s {
				jobs[assocID][at] += n * (e - s)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read job rows of the checked hours: %w", err)
	}
	var out []Missing
	for id, byHour := range rollup {
		if m, ok := missingOf(byHour, jobs[id]); ok {
			a, ok := lk.assocs[id]
			if !ok {
				a.account = fmt.Sprintf("(association %d)", id)
			}
			m.Account, m.User = a.account, a.user
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Missing) int { return strings.Compare(a.Account+"/"+a.User, b.Account+"/"+b.User) })
	return out, nil
}

// missingOf compares one association's rollups and job rows, hour by hour.
// Use is missing when the rollups of the checked hours hold more
// GPU-seconds than the job rows do over those hours (one sum, so the hours
// a job is counted in on either side do not matter); the Missing then
// spans the first to the last hour in which the rollups exceed the job
// rows, with the sums of that span.
func missingOf(rollup, jobs map[int64]int64) (Missing, bool) {
	var r, j int64
	for _, v := range rollup {
		r += v
	}
	for _, v := range jobs {
		j += v
	}
	if r <= j {
		return Missing{}, false
	}
	var m Missing
	for at, v := range rollup {
		if v > jobs[at] {
			if m.From == 0 || at < m.From {
				m.From = at
			}
			m.To = max(m.To, at+hour)
		}
	}
	for at, v := range rollup {
		if at >= m.From && at < m.To {
			m.RollupSeconds += v
		}
	}
	for at, v := range jobs {
		if at >= m.From && at < m.To {
			m.JobSeconds += v
		}
	}
	return m, true
}
