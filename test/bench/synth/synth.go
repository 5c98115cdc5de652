package synth

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// MinJobID is the lowest id_job of a synthetic row. The benchmark uses
// [MinJobID, MinJobID+2e6); tests use ranges above (see TestIDs).
const MinJobID = 900_000_000

// TestIDs is the first id_job the integration tests use; each test takes
// its own block of 10,000 from there.
const TestIDs = 902_000_000

// BigBenchIDs is where a benchmark of more rows than [MinJobID, TestIDs)
// holds puts them: [BigBenchIDs, BigBenchIDs+BigBenchRows).
const (
	BigBenchIDs  = 3_000_000_000
	BigBenchRows = 100_000_000
)

// AccountPrefix starts every synthetic row's account.
const AccountPrefix = "m4syn"

// Slurm job states as stored in the job table.
const (
	StateRunning   = 1
	StateCompleted = 3
	StateCancelled = 4
	StateRequeued  = 0x400 // JOB_REQUEUE
)

// Row is one synthetic job run.
type Row struct {
	JobID                        uint32
	Submit, Start, End, Eligible int64
	Account, Partition           string
	QOS                          int64 // qos_table id
	Assoc                        int64
	User                         int64 // uid
	State                        int
	TRES                         string // tres_alloc, "1=4,2=4000,4=1,5=4,1001=1,1004=1"
}

// TRES holds the testbed's TRES ids, read from tres_table (never hard-coded).
type TRES struct {
	GPU  int64            // gres/gpu
	Type map[string]int64 // gres/gpu:<type>
}

// LoadTRES reads the GPU TRES ids.
func LoadTRES(ctx context.Context, db *sqlx.DB) (TRES, error) {
	t := TRES{Type: map[string]int64{}}
	rows, err := db.QueryContext(ctx, "SELECT id, name FROM tres_table WHERE type = 'gres'")
	if err != nil {
		return t, fmt.Errorf("read tres_table: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return t, err
		}
		if typ, ok := slurmstr.GPUOf(name); ok && typ == "" {
			t.GPU = id
		} else if ok {
			t.Type[typ] = id
		}
	}
	if t.GPU == 0 || t.Type["h100"] == 0 || t.Type["1g.10gb"] == 0 || t.Type["3g.40gb"] == 0 {
		return t, fmt.Errorf("tres_table lacks gres/gpu, gres/gpu:h100, gres/gpu:1g.10gb or gres/gpu:3g.40gb (%v)", t)
	}
	return t, rows.Err()
}

// Alloc renders a tres_alloc string with cpus and GPUs: typed GPUs also
// count in gres/gpu, as Slurm records them. typ "" is an untyped GPU.
func (t TRES) Alloc(cpus int, gpus map[string]int) string {
	var total int
	var typed []string
	for typ, n := range gpus {
		total += n
		if typ != "" {
			typed = append(typed, fmt.Sprintf("%d=%d", t.Type[typ], n))
		}
	}
	s := fmt.Sprintf("1=%d,2=%d,3=18446744073709551614,4=1,5=%d", cpus, cpus*1000, cpus)
	if total > 0 {
		s += fmt.Sprintf(",%d=%d", t.GPU, total)
	}
	// Slurm writes ids in ascending order; so do we (typed ids > gres/gpu).
	sortStrings(typed)
	for _, x := range typed {
		s += "," + x
	}
	return s
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

const cols = "id_job, time_submit, time_eligible, time_start, time_end, account, `partition`, id_qos, id_assoc, id_user, id_group, " +
	"state, tres_alloc, tres_req, job_name, cpus_req, id_resv, id_wckey, het_job_id, het_job_offset, state_reason_prev, nodes_alloc, priority, mod_time"

// Insert writes rows into cluster's job table in multi-row INSERTs of up to
// batch rows, each its own statement (autocommit).
func Insert(ctx context.Context, db *sqlx.DB, cluster string, rows []Row) error {
	const batch = 2000
	var b strings.Builder
	for len(rows) > 0 {
		n := min(len(rows), batch)
		b.Reset()
		b.WriteString("INSERT INTO `" + cluster + "_job_table` (" + cols + ") VALUES ")
		for i, r := range rows[:n] {
			if r.JobID < MinJobID || !strings.HasPrefix(r.Account, AccountPrefix) {
				return fmt.Errorf("synthetic row %d/%s outside the synthetic range", r.JobID, r.Account)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			elig := r.Eligible
			if elig == 0 {
				elig = r.Submit
			}
			fmt.Fprintf(&b, "(%d,%d,%d,%d,%d,'%s','%s',%d,%d,%d,%d,%d,'%s','%s','synthetic',1,0,0,0,4294967294,0,1,1,%d)",
				r.JobID, r.Submit, elig, r.Start, r.End, r.Account, r.Partition, r.QOS, r.Assoc, r.User, r.User,
				r.State, r.TRES, r.TRES, max(r.End, r.Start, r.Submit))
		}
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("insert synthetic rows: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

// Delete removes the synthetic rows with lo <= id_job < hi (lo at least
// MinJobID, synthetic accounts only), in chunks so no transaction grows
// large. It returns the count. Each user of this package deletes only its
// own id range, so a benchmark and a test never remove each other's rows.
func Delete(ctx context.Context, db *sqlx.DB, cluster string, lo, hi uint32) (int64, error) {
	if lo < MinJobID {
		return 0, fmt.Errorf("delete synthetic rows: id range must start at %d or above", MinJobID)
	}
	var total int64
	for {
		res, err := db.ExecContext(ctx, "DELETE FROM `"+cluster+"_job_table` WHERE id_job >= ? AND id_job < ? AND account LIKE ? LIMIT 50000",
			lo, hi, AccountPrefix+"%")
		if err != nil {
			return total, fmt.Errorf("delete synthetic rows: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// Month is a spec for a month of synthetic jobs.
type Month struct {
	Start    time.Time // first second of the month, UTC
	Jobs     int
	Accounts int
	Seed     uint64
	// FirstID is the first job id (MinJobID or above).
	FirstID uint32
	// Prefix starts the account names (default AccountPrefix).
	Prefix string
	// GPUShare and MIGShare are the fractions of jobs with GPUs and with
	// MIG slices (MIG jobs are part of the GPU jobs).
	GPUShare, MIGShare float64
	QOS                map[string]int64 // qos ids for "normal" and "ondemand" (0 if absent)
}

// Generate calls fn with the month's rows in time order, one at a time
// (constant memory): jobs ending inside the month, about GPUShare with GPUs
// (h100 ×1-8, or a MIG slice), MIGShare with MIG slices, ten percent
// on-demand, spread over Accounts accounts.
func (m Month) Generate(t TRES, fn func(Row) error) error {
	rng := rand.New(rand.NewPCG(m.Seed, m.Seed^0x9e3779b97f4a7c15))
	start := m.Start.Unix()
	end := m.Start.AddDate(0, 1, 0).Unix()
	span := end - start
	prefix := m.Prefix
	if prefix == "" {
		prefix = AccountPrefix
	}
	for i := range m.Jobs {
		// End times increase through the month; durations up to 12 h.
		e := start + 1 + int64(i)*(span-2)/int64(max(m.Jobs, 1))
		d := 1 + rng.Int64N(12*3600)
		s := e - d
		sub := s - rng.Int64N(600)
		r := Row{
			JobID: m.FirstID + uint32(i), Submit: sub, Start: s, End: e,
			Account:   prefix + strconv.Itoa(rng.IntN(max(m.Accounts, 1))),
			Partition: "pool", QOS: m.QOS["normal"], State: StateCompleted,
		}
		if rng.IntN(10) == 0 {
			r.Partition, r.QOS = "ondemand", m.QOS["ondemand"]
		}
		x := rng.Float64()
		switch {
		case x < m.MIGShare:
			typ := "1g.10gb"
			if rng.IntN(4) == 0 {
				typ = "3g.40gb"
			}
			r.TRES = t.Alloc(2, map[string]int{typ: 1})
		case x < m.GPUShare:
			r.TRES = t.Alloc(8, map[string]int{"h100": 1 + rng.IntN(8)})
		default:
			r.TRES = t.Alloc(1+rng.IntN(16), nil)
		}
		if rng.IntN(50) == 0 { // cancelled while pending
			r.Start, r.State = 0, StateCancelled
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// QOSIDs reads the ids of the named QOS (0 when absent).
func QOSIDs(ctx context.Context, db *sqlx.DB, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, n := range names {
		var id int64
		err := db.GetContext(ctx, &id, "SELECT id FROM qos_table WHERE name = ? AND deleted = 0", n)
		if err != nil && err != sql.ErrNoRows {
			return nil, err
		}
		out[n] = id
	}
	return out, nil
}

// Period is the spec's month as a "YYYY-MM" billing period.
func (m Month) Period() meter.Period { return meter.PeriodOf(m.Start) }
