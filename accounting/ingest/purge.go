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
//
// The rollups also give each association the idle time of the
// reservations it is in (as_mysql_rollup.c, as_mysql_hourly_rollup, "now
// figure out how much more to add to the associations that could had run
// in the reservation"): per <cluster>_resv_table row read for the hour
// (time_start < hour end and time_end >= hour start, deleted rows too) and
// TRES of its tres, idle = count x the row's seconds in the hour (start
// raised to time_force when later) minus, for each job row with its
// id_resv and an eligible time, the reservation's count x the job's
// seconds in the hour and the row's window; a positive idle, divided
// (integer division) by the entries of assoclist, goes to each of them.
// rollupCheck computes the same and adds it to the job rows' side, with
// one difference that can only allow more: slurmdbd stops at the first
// TRES of the row whose idle time is not positive ("since this will be the
// same for all TRES"), the check gives every GPU TRES's idle time.
//
// What can then go undetected: the idle share a missing row's absence adds
// hides that row's use for the association that gets the share. An
// account reservation's assoclist (gpubridge's bookings) holds the
// account's own association, which runs no jobs: a missing row of a
// user's job in it is found in full. With users' associations in the list
// (users= reservations), a missing row of such a user's job hides its part
// inside the reservation up to the reservation's count x those seconds
// divided by the entries of assoclist (all of it with one entry). And an
// association in any reservation's list can hide missing rows up to that
// reservation's GPU idle time in the hours slurmdbd gave it none (the
// first-TRES stop above).

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
	// slurmdbd's rollups and as the job rows give them; IdleSeconds is the
	// association's share of the idle GPU time of the reservations it is
	// in, which slurmdbd's rollups add to it.
	RollupSeconds, JobSeconds, IdleSeconds int64
}

// Seconds is the GPU-seconds that neither a job row nor a reservation's
// idle time accounts for.
func (m Missing) Seconds() int64 { return m.RollupSeconds - m.JobSeconds - m.IdleSeconds }

func (m Missing) String() string {
	who := m.Account
	if m.User != "" {
		who += "/" + m.User
	}
	idle := ""
	if m.IdleSeconds != 0 {
		idle = fmt.Sprintf(", reservations' idle time %d", m.IdleSeconds)
	}
	return fmt.Sprintf("%s: %d GPU-seconds (rollups %d, job rows %d%s) in %s..%s", who, m.Seconds(), m.RollupSeconds, m.JobSeconds, idle,
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
	c := newRollupCheck(ids, h0, h1)
	if err := s.readRollups(ctx, tx, c, ids, h0, h1); err != nil {
		return nil, err
	}
	if len(c.rollup) == 0 {
		return nil, nil // nothing rolled up (rows written with SQL are not): nothing can be missing
	}
	if err := s.readResvRows(ctx, tx, c, ids, h0, h1); err != nil {
		return nil, err
	}
	if err := s.readJobRows(ctx, tx, lk, c, ids, h0, h1); err != nil {
		return nil, err
	}
	var out []Missing
	for id, m := range c.missing() {
		a, ok := lk.assocs[id]
		if !ok {
			a.account = fmt.Sprintf("(association %d)", id)
		}
		m.Account, m.User = a.account, a.user
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Missing) int { return strings.Compare(a.Account+"/"+a.User, b.Account+"/"+b.User) })
	return out, nil
}

// readRollups adds to c slurmdbd's hourly rollups of the GPU TRES ids for
// the hours [h0, h1), per association. The hour table's key is (id,
// id_tres, time_start): the query starts from the associations so each
// one is a key range.
func (s *SlurmDB) readRollups(ctx context.Context, tx *sqlx.Tx, c *rollupCheck, ids []int64, h0, h1 int64) error {
	idList := make([]string, len(ids))
	for i, id := range ids {
		idList[i] = strconv.FormatInt(id, 10)
	}
	rows, err := tx.QueryContext(ctx, "SELECT STRAIGHT_JOIN a.id_assoc, u.time_start, CAST(SUM(u.alloc_secs) AS SIGNED) FROM `"+s.cluster+"_assoc_table` a JOIN `"+
		s.cluster+"_assoc_usage_hour_table` u ON u.id = a.id_assoc AND u.id_tres IN ("+strings.Join(idList, ",")+
		") AND u.time_start >= ? AND u.time_start < ? GROUP BY a.id_assoc, u.time_start", h0, h1)
	if err != nil {
		return fmt.Errorf("read hourly rollups: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, at, sec int64
		if err := rows.Scan(&id, &at, &sec); err != nil {
			return fmt.Errorf("read hourly rollups: %w", err)
		}
		c.addRollup(id, at, sec)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read hourly rollups: %w", err)
	}
	return nil
}

// readResvRows adds to c the reservation rows slurmdbd's rollup of the
// hours [h0, h1) read (its _setup_resv_usage: deleted rows too), to give
// each reservation's idle GPU time to its associations as the rollup did.
func (s *SlurmDB) readResvRows(ctx context.Context, tx *sqlx.Tx, c *rollupCheck, ids []int64, h0, h1 int64) error {
	rows, err := tx.QueryContext(ctx, "SELECT id_resv, time_start, time_end, time_force, COALESCE(assoclist, ''), COALESCE(tres, '') FROM `"+s.cluster+
		"_resv_table` WHERE time_start < ? AND time_end >= ?", h1, h0)
	if err != nil {
		return fmt.Errorf("read reservation rows of the checked hours: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r resvRow
		var assocs, tres string
		if err := rows.Scan(&r.ID, &r.Start, &r.End, &r.Force, &assocs, &tres); err != nil {
			return fmt.Errorf("read reservation rows of the checked hours: %w", err)
		}
		r.Assocs, r.N = parseAssocList(assocs)
		r.Count = counts([]byte(tres), ids)
		c.addResv(r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read reservation rows of the checked hours: %w", err)
	}
	return nil
}

// readJobRows adds to c the job rows with GPUs that ran during the hours
// [h0, h1) and that c wants.
func (s *SlurmDB) readJobRows(ctx context.Context, tx *sqlx.Tx, lk *lookups, c *rollupCheck, ids []int64, h0, h1 int64) error {
	rows, err := tx.QueryContext(ctx, "SELECT t.id_assoc, t.id_resv, t.time_eligible, t.time_start, t.time_end, t.tres_alloc FROM `"+s.cluster+"_job_table` t WHERE t.time_start > 0 AND t.time_start < "+
		strconv.FormatInt(h1, 10)+" AND (t.time_end = 0 OR t.time_end > "+strconv.FormatInt(h0, 10)+") AND "+lk.gpus.filter())
	if err != nil {
		return fmt.Errorf("read job rows of the checked hours: %w", err)
	}
	defer rows.Close()
	var j jobRow
	var tres sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&j.Assoc, &j.Resv, &j.Eligible, &j.Start, &j.End, &tres); err != nil {
			return fmt.Errorf("read job rows of the checked hours: %w", err)
		}
		if !c.wants(j) {
			continue
		}
		j.Count = countsInto(j.Count[:0], tres, ids)
		c.addJob(j)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read job rows of the checked hours: %w", err)
	}
	return nil
}

// counts gives the count of each of ids in a tres string (as count does,
// id by id).
func counts(s []byte, ids []int64) []int64 { return countsInto(nil, s, ids) }

func countsInto(dst []int64, s []byte, ids []int64) []int64 {
	for _, id := range ids {
		dst = append(dst, count(s, []int64{id}))
	}
	return dst
}

// resvRow is one <cluster>_resv_table row (one version of a reservation)
// as slurmdbd's hourly rollup reads it.
type resvRow struct {
	ID                int64
	Start, End, Force int64 // time_start, time_end, time_force
	// Assocs are the association ids of assoclist that get a share of the
	// idle time; N is the divisor: the number of distinct entries of
	// assoclist (a denied "-id" entry counts and gets nothing, as in
	// slurmdbd).
	Assocs []int64
	N      int64
	// Count is the reservation's count of each measured GPU TRES id
	// (rollupCheck.ids order).
	Count []int64
}

// jobRow is one job row of the checked hours.
type jobRow struct {
	Assoc, Resv          int64   // id_assoc, id_resv (0: none)
	Eligible, Start, End int64   // time_eligible, time_start, time_end (0: running)
	Count                []int64 // GPUs per measured TRES id (rollupCheck.ids order)
}

// parseAssocList splits an assoclist as slurmdbd's rollup does
// (slurm_addto_char_list: comma-separated, blanks trimmed, empty entries
// and duplicates dropped): n is the number of entries, ids those that are
// association ids.
func parseAssocList(s string) (ids []int64, n int64) {
	seen := map[string]bool{}
	for e := range strings.SplitSeq(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" || seen[e] {
			continue
		}
		seen[e] = true
		n++
		if id, err := strconv.ParseInt(e, 10, 64); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids, n
}

// rollupCheck compares, for the hours [h0, h1), slurmdbd's hourly rollups
// of the GPU TRES ids with what the job rows and the reservation rows
// make of them, per association. It is fed the rollups (addRollup), the
// reservation rows (addResv), then the job rows (addJob), and does no I/O.
type rollupCheck struct {
	ids    []int64
	h0, h1 int64
	rollup map[int64]map[int64]int64 // association -> hour -> GPU-seconds of the rollups
	jobs   map[int64]map[int64]int64 // association -> hour -> GPU-seconds of the job rows
	resv   []resvRow
	byID   map[int64][]int     // id_resv -> indexes in resv
	used   []map[int64][]int64 // per resv row: hour -> per id TRES-seconds of its jobs, as slurmdbd counts them
}

func newRollupCheck(ids []int64, h0, h1 int64) *rollupCheck {
	return &rollupCheck{ids: ids, h0: h0, h1: h1, rollup: map[int64]map[int64]int64{}, jobs: map[int64]map[int64]int64{}, byID: map[int64][]int{}}
}

func (c *rollupCheck) addRollup(assoc, at, sec int64) {
	if sec <= 0 || at < c.h0 || at >= c.h1 {
		return
	}
	if c.rollup[assoc] == nil {
		c.rollup[assoc] = map[int64]int64{}
	}
	c.rollup[assoc][at/hour*hour] += sec
}

func (c *rollupCheck) addResv(r resvRow) {
	c.byID[r.ID] = append(c.byID[r.ID], len(c.resv))
	c.resv = append(c.resv, r)
	c.used = append(c.used, map[int64][]int64{})
}

// window is the part of the hour [at, at+hour) that slurmdbd's rollup
// counts for the row (_setup_resv_usage): the row is read when
// time_start < hour end and time_end >= hour start; its start is raised to
// time_force when later, both ends are clipped to the hour; ok is false
// when that leaves less than a second.
func (r resvRow) window(at int64) (s, e int64, ok bool) {
	he := at + hour
	if r.Start >= he || r.End < at {
		return 0, 0, false
	}
	s = r.Start
	if r.Force > s {
		s = r.Force
	}
	s = max(s, at)
	e = r.End
	if e == 0 || e > he {
		e = he
	}
	return s, e, e-s >= 1
}

// wants says whether a job row can change the outcome: it belongs to an
// association with rollups, or it ran in a reservation of the hours.
func (c *rollupCheck) wants(j jobRow) bool {
	if _, ok := c.rollup[j.Assoc]; ok {
		return true
	}
	return j.Resv != 0 && len(c.byID[j.Resv]) > 0
}

func (c *rollupCheck) addJob(j jobRow) {
	var n int64
	for _, v := range j.Count {
		n += v
	}
	if n <= 0 || j.Start <= 0 {
		return
	}
	end := j.End
	if end == 0 || end > c.h1 {
		end = c.h1
	}
	if _, ok := c.rollup[j.Assoc]; ok {
		if c.jobs[j.Assoc] == nil {
			c.jobs[j.Assoc] = map[int64]int64{}
		}
		for at := max(j.Start, c.h0) / hour * hour; at < end; at += hour {
			if s, e := max(j.Start, at, c.h0), min(end, at+hour); e > s {
				c.jobs[j.Assoc][at] += n * (e - s)
			}
		}
	}
	if j.Resv == 0 || j.Eligible == 0 {
		return // slurmdbd's rollup reads only jobs with an eligible time
	}
	for _, ri := range c.byID[j.Resv] {
		r := c.resv[ri]
		for at := max(j.Start, r.Start, c.h0) / hour * hour; at < min(end, r.End); at += hour {
			if j.Eligible >= at+hour {
				continue
			}
			// The job's seconds in the hour, clipped to the row's window
			// (as_mysql_hourly_rollup: every row of the job's id_resv).
			rs, re, ok := r.window(at)
			if !ok {
				continue
			}
			s, e := max(j.Start, at, rs), min(end, at+hour, re)
			if e <= s {
				continue
			}
			u := c.used[ri][at]
			if u == nil {
				u = make([]int64, len(c.ids))
				c.used[ri][at] = u
			}
			// slurmdbd counts a job in the reservation as the
			// reservation's count of each TRES the job holds, times its
			// seconds (_add_time_tres_list with times_count).
			for k := range c.ids {
				if k < len(j.Count) && j.Count[k] > 0 {
					u[k] += r.Count[k] * (e - s)
				}
			}
		}
	}
}

// idle gives each association's share of the reservations' idle GPU time,
// per hour, as slurmdbd's hourly rollup adds it to the association's
// alloc_secs: per row, hour and TRES, count x the row's seconds in the
// hour minus its jobs' TRES-seconds; when positive, divided (integer
// division) by the entries of assoclist and added to each association in
// it. slurmdbd stops at the first TRES of the row whose idle time is not
// positive; the check does not (it gives every GPU TRES's idle time), so it
// may allow more than slurmdbd gave, never less.
func (c *rollupCheck) idle() map[int64]map[int64]int64 {
	out := map[int64]map[int64]int64{}
	for ri, r := range c.resv {
		if len(r.Assocs) == 0 {
			continue
		}
		hi := r.End
		if hi == 0 || hi > c.h1 {
			hi = c.h1
		}
		for at := max(r.Start, c.h0) / hour * hour; at < hi; at += hour {
			s, e, ok := r.window(at)
			if !ok {
				continue
			}
			var share int64
			for k := range c.ids {
				if r.Count[k] <= 0 {
					continue
				}
				idle := r.Count[k] * (e - s)
				if u := c.used[ri][at]; u != nil {
					idle -= u[k]
				}
				if idle > 0 {
					share += idle / r.N
				}
			}
			if share == 0 {
				continue
			}
			for _, a := range r.Assocs {
				if _, ok := c.rollup[a]; !ok {
					continue
				}
				if out[a] == nil {
					out[a] = map[int64]int64{}
				}
				out[a][at] += share
			}
		}
	}
	return out
}

// missing compares each association's rollups with its job rows and its
// share of the reservations' idle time.
func (c *rollupCheck) missing() map[int64]Missing {
	idle := c.idle()
	out := map[int64]Missing{}
	for id, byHour := range c.rollup {
		if m, ok := missingOf(byHour, c.jobs[id], idle[id]); ok {
			out[id] = m
		}
	}
	return out
}

// missingOf compares one association's rollups with its job rows and its
// share of the reservations' idle time, hour by hour. Use is missing when
// the rollups of the checked hours hold more GPU-seconds than the job rows
// and the idle share do over those hours (one sum, so the hours a job is
// counted in on either side do not matter); the Missing then spans the
// first to the last hour in which the rollups exceed them, with the sums
// of that span.
func missingOf(rollup, jobs, idle map[int64]int64) (Missing, bool) {
	var r, j int64
	for _, v := range rollup {
		r += v
	}
	for _, v := range jobs {
		j += v
	}
	for _, v := range idle {
		j += v
	}
	if r <= j {
		return Missing{}, false
	}
	var m Missing
	for at, v := range rollup {
		if v > jobs[at]+idle[at] {
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
	for at, v := range idle {
		if at >= m.From && at < m.To {
			m.IdleSeconds += v
		}
	}
	return m, true
}
