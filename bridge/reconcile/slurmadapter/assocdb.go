package slurmadapter

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// AssocDB reads a cluster's associations straight from slurmdbd's
// database, through its read-only user (config slurmdb.dsn): one query of
// `<cluster>_assoc_table`. slurmrestd's GET associations/ of a thousand
// tenants' 4,000 associations takes over a second of slurmdbd's and
// slurmrestd's time on the testbed (an 8 MB answer, whatever the client
// does); the query takes milliseconds. It gives exactly what that request
// gives with slurmrest.AssociationFilter.Own (each association's own QOS
// list and default QOS, nothing inherited), so a plan is the same either
// way (TestIntegrationAssocDBMatchesREST).
type AssocDB struct {
	DB *sqlx.DB
}

// clusterName is what a cluster's table names may be made of (Slurm
// lower-cases cluster names; they name tables, so nothing else is let in).
var clusterName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

type assocRow struct {
	User      string `db:"user"`
	Acct      string `db:"acct"`
	Partition string `db:"partition"`
	IsDef     int    `db:"is_def"`
	QOS       string `db:"qos"`
	DeltaQOS  string `db:"delta_qos"`
	DefQOS    *int64 `db:"def_qos_id"`
	Parent    string `db:"parent_acct"`
}

// Associations returns the cluster's live associations (account and user
// ones, per-partition ones included), their QOS named by qosName (a QOS id
// it does not know is left out, as slurmrestd leaves out a deleted one).
func (d AssocDB) Associations(ctx context.Context, cluster string, qosName map[int]string) ([]slurmrest.Association, error) {
	if !clusterName.MatchString(cluster) {
		return nil, fmt.Errorf("read associations from slurmdbd's database: cluster name %q cannot name a table", cluster)
	}
	var rows []assocRow
	q := "SELECT `user`, acct, `partition`, is_def, qos, delta_qos, def_qos_id, parent_acct FROM `" + cluster + "_assoc_table` WHERE deleted = 0"
	if err := d.DB.SelectContext(ctx, &rows, q); err != nil {
		return nil, fmt.Errorf("read associations from slurmdbd's database (table %s_assoc_table): %w", cluster, err)
	}
	out := make([]slurmrest.Association, 0, len(rows))
	for _, r := range rows {
		a := slurmrest.Association{Cluster: cluster, Account: r.Acct, User: r.User, Partition: r.Partition, IsDefault: r.IsDef == 1,
			QOS: ownQOS(r.QOS, r.DeltaQOS, qosName), ParentAccount: r.Parent}
		if r.DefQOS != nil {
			a.DefaultQOS = qosName[int(*r.DefQOS)]
		}
		out = append(out, a)
	}
	return out, nil
}

// ownQOS is an association's own QOS list as slurmdbd reports it without
// its parents' (Own): the qos column (",3,1,") when set; otherwise the
// QOS its delta_qos column adds (",+3,-1,": "+" adds, "-" removes from
// the parents' list, which is not read). Names in the column's order.
func ownQOS(qos, delta string, qosName map[int]string) []string {
	var out []string
	if qos != "" {
		for _, f := range strings.Split(qos, ",") {
			if id, err := strconv.Atoi(f); err == nil {
				if n, ok := qosName[id]; ok {
					out = append(out, n)
				}
			}
		}
		return out
	}
	for _, f := range strings.Split(delta, ",") {
		if rest, ok := strings.CutPrefix(f, "+"); ok {
			if id, err := strconv.Atoi(rest); err == nil {
				if n, ok := qosName[id]; ok {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

type qosRow struct {
	ID          int            `db:"id"`
	Name        string         `db:"name"`
	Description sql.NullString `db:"description"`
	GrpTRES     string         `db:"grp_tres"`
	MaxSubmitPU sql.NullInt64  `db:"max_submit_jobs_per_user"`
	Flags       sql.NullInt64  `db:"flags"`
}

// qosFlagReqResv is Slurm's QOS_FLAG_REQ_RESV (slurmdb.h: SLURM_BIT(5)),
// REQUIRED_RESERVATION in slurmrestd's answers, as qos_table.flags holds it.
const qosFlagReqResv = 1 << 5

type tresRow struct {
	ID   int    `db:"id"`
	Type string `db:"type"`
	Name string `db:"name"`
}

// QOS returns the live QOS with what a plan compares (id, name,
// description, GrpTRES, MaxSubmitJobsPerUser, REQUIRED_RESERVATION), from qos_table and
// tres_table: two queries, milliseconds, where slurmrestd's GET qos/ of a
// thousand tenants' QOS takes about 160 ms. A GrpTRES entry whose TRES id
// tres_table does not know is an error (never guessed).
func (d AssocDB) QOS(ctx context.Context) ([]slurmrest.QOS, error) {
	var tres []tresRow
	if err := d.DB.SelectContext(ctx, &tres, "SELECT id, type, name FROM tres_table WHERE deleted = 0"); err != nil {
		return nil, fmt.Errorf("read TRES from slurmdbd's database (tres_table): %w", err)
	}
	byID := make(map[int]tresRow, len(tres))
	for _, t := range tres {
		byID[t.ID] = t
	}
	var rows []qosRow
	if err := d.DB.SelectContext(ctx, &rows, "SELECT id, name, description, grp_tres, max_submit_jobs_per_user, flags FROM qos_table WHERE deleted = 0"); err != nil {
		return nil, fmt.Errorf("read QOS from slurmdbd's database (qos_table): %w", err)
	}
	out := make([]slurmrest.QOS, 0, len(rows))
	for _, r := range rows {
		q := slurmrest.QOS{ID: r.ID, Name: r.Name, Description: r.Description.String}
		for _, f := range strings.Split(r.GrpTRES, ",") {
			if f == "" {
				continue
			}
			k, v, ok := strings.Cut(f, "=")
			id, err1 := strconv.Atoi(k)
			n, err2 := strconv.ParseInt(v, 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("read QOS from slurmdbd's database: QOS %s: grp_tres %q is not a list of id=count", r.Name, r.GrpTRES)
			}
			t, known := byID[id]
			if !known {
				return nil, fmt.Errorf("read QOS from slurmdbd's database: QOS %s: grp_tres names TRES id %d, which tres_table does not hold", r.Name, id)
			}
			if n < 0 {
				continue // a limit being cleared
			}
			q.GrpTRES = append(q.GrpTRES, slurmrest.TRES{Type: t.Type, Name: t.Name, ID: id, Count: n})
		}
		if r.Flags.Int64&qosFlagReqResv != 0 {
			q.Flags = append(q.Flags, reconcile.FlagRequiredReservation)
		}
		if r.MaxSubmitPU.Valid && r.MaxSubmitPU.Int64 >= 0 {
			q.MaxSubmitPerUser = slurmrest.LimitOf(r.MaxSubmitPU.Int64)
		}
		out = append(out, q)
	}
	return out, nil
}
