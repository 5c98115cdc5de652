package credit

import (
	"fmt"
	"strconv"

	"github.com/gpubridge/gpubridge/internal/table"
)

// ReportTable lays out what one run of the job wrote (`gpubridge credit
// run-once`): one row per new credit line.
func ReportTable(r Report) table.Table {
	t := table.Table{
		Header: []string{"Key", "Kind", "Tenant", "Account", "JobID", "Node", "Event", "Amount", "Currency", "Reason"},
		Keys:   []string{"key", "kind", "tenant", "account", "jobId", "node", "eventId", "amount", "currency", "reason"},
		Kinds: []table.Kind{table.String, table.String, table.String, table.String, table.Number, table.String, table.Number,
			table.Decimal, table.String, table.String},
		Rows: [][]string{},
	}
	for _, c := range r.Written {
		num := func(v int64) string {
			if v == 0 {
				return ""
			}
			return strconv.FormatInt(v, 10)
		}
		t.Rows = append(t.Rows, []string{c.Key, string(c.Kind), c.Tenant, c.Account, num(c.JobID), c.Node, num(c.EventID),
			c.Amount.String(), c.Amount.Currency().Code, c.Reason})
	}
	return t
}

// Summary says in one line what a run wrote and what it found owed.
func Summary(r Report) string {
	return fmt.Sprintf("%d new credit line(s); %d owed in %s..%s from %d run(s) that ended other than COMPLETED\n",
		len(r.Written), r.Computed, r.From.UTC().Format("2006-01-02T15:04:05Z"), r.To.UTC().Format("2006-01-02T15:04:05Z"), r.Runs)
}
