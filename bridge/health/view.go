package health

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
	"github.com/gpubridge/gpubridge/internal/table"
)

// The tables of the health commands (check node, show checks, show
// health, health run-once); the status page lays out the same views.

// ReportTable lays out a cycle: one line per thing it did.
func ReportTable(rep Report) table.Table {
	t := table.Table{Header: []string{"What", "Node", "Detail"}, Raw: rep}
	for _, r := range rep.Finished {
		d := fmt.Sprintf("run %d (%s) job %d %s", r.ID, strings.Join(r.Checks, ","), r.JobID, r.State)
		if r.Note != "" {
			d += ": " + r.Note
		}
		t.Rows = append(t.Rows, []string{"finished", strings.Join(r.AllNodes(), ","), d})
	}
	for _, e := range rep.Events {
		from := string(e.From)
		if from == "" {
			from = "new"
		}
		t.Rows = append(t.Rows, []string{"state", e.Node, from + " -> " + string(e.To) + ": " + e.Reason})
	}
	for _, x := range rep.Actions {
		d := string(x.Kind)
		if x.Reason != "" {
			d += " " + strconv.Quote(x.Reason)
		}
		t.Rows = append(t.Rows, []string{"slurm", x.Node, d})
	}
	for _, r := range rep.Submitted {
		t.Rows = append(t.Rows, []string{"submitted", strings.Join(r.AllNodes(), ","), fmt.Sprintf("run %d (%s) job %d", r.ID, strings.Join(r.Checks, ","), r.JobID)})
	}
	skipped := make([]string, 0, len(rep.Skipped))
	for n := range rep.Skipped {
		skipped = append(skipped, n)
	}
	slices.Sort(skipped)
	for _, n := range skipped {
		t.Rows = append(t.Rows, []string{"skipped", n, rep.Skipped[n]})
	}
	for _, b := range rep.Bookings {
		t.Rows = append(t.Rows, []string{"booking", "", b})
	}
	for _, e := range rep.Errors {
		t.Rows = append(t.Rows, []string{"error", "", e})
	}
	return t
}

// RunsTable lays out check runs.
func RunsTable(rs []Run) table.Table {
	if rs == nil {
		rs = []Run{}
	}
	t := table.Table{Header: []string{"Run", "Node", "Checks", "Purpose", "Tenant", "JobID", "State"}, Raw: rs,
		Kinds: []table.Kind{table.Number, table.String, table.String, table.String, table.String, table.Number, table.String}}
	for _, r := range rs {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(r.ID, 10), strings.Join(r.AllNodes(), ","), strings.Join(r.Checks, ","), string(r.Purpose), r.Tenant,
			strconv.FormatInt(r.JobID, 10), string(r.State)})
	}
	return t
}

// ResultsTable lays out check results.
func ResultsTable(rs []StoredResult) table.Table {
	if rs == nil {
		rs = []StoredResult{}
	}
	t := table.Table{Header: []string{"At", "Run", "Node", "Check", "Verdict", "Reason", "Values", "Duration", "JobID", "Tenant", "Purpose"}, Raw: rs}
	for _, r := range rs {
		var vals []string
		for _, v := range r.Values {
			vals = append(vals, v.String())
		}
		t.Rows = append(t.Rows, []string{r.At.UTC().Format(time.RFC3339), strconv.FormatInt(r.RunID, 10), r.Node, r.Check, string(r.Verdict),
			r.Reason, strings.Join(vals, " "), r.Duration().String(), strconv.FormatInt(r.JobID, 10), r.Tenant, string(r.Purpose)})
	}
	return t
}

// NodesTable lays out `show health`: each managed node's lifecycle state,
// passes while held, why, since when, Slurm's view and its checks.
func NodesTable(vs []NodeView) table.Table {
	if vs == nil {
		vs = []NodeView{}
	}
	t := table.Table{Header: []string{"Node", "State", "Passes", "Reason", "Since", "Slurm", "SlurmReason", "Fenced", "Running", "LastCheck"}, Raw: vs}
	for _, v := range vs {
		state, passes, since := string(v.State), "", ""
		if state == "" {
			state = "new"
		}
		if v.State.Held() {
			passes = fmt.Sprintf("%d/%d", v.Passes, v.Needed)
		}
		if !v.Since.IsZero() {
			since = v.Since.UTC().Format(time.RFC3339)
		}
		running, last := "", ""
		switch {
		case v.Running != nil && v.Running.ID == 0:
			running = v.Running.Note // another tenant's, redacted
		case v.Running != nil:
			running = fmt.Sprintf("run %d (%s)", v.Running.ID, strings.Join(v.Running.Checks, ","))
		}
		if v.Last != nil {
			last = fmt.Sprintf("%s %s %s", v.Last.Check, v.Last.Verdict, v.Last.At.UTC().Format(time.RFC3339))
		}
		t.Rows = append(t.Rows, []string{v.Name, state, passes, v.Reason, since, v.SlurmState, v.SlurmReason,
			strconv.FormatBool(v.Fenced), running, last})
	}
	return t
}

// ResumePrompt is the confirmation of resume node (an admin override).
func ResumePrompt(node string) string {
	return "Resume " + node + " now, without its requalify runs (audited)"
}

// NodeTable is one node after an override (resume node).
func NodeTable(n Node) table.Table {
	return table.Table{Header: []string{"Node", "State", "Reason"}, Rows: [][]string{{n.Name, string(n.State), n.Reason}}, Raw: []Node{n}}
}

// HistoryTable lays out a tenant's view of the nodes it used (show health
// tenant=X history), newest first.
func HistoryTable(hs []HistoryEntry) table.Table {
	if hs == nil {
		hs = []HistoryEntry{}
	}
	t := table.Table{Header: []string{"At", "Node", "What", "Detail"}, Raw: hs}
	for _, h := range hs {
		t.Rows = append(t.Rows, []string{h.At.UTC().Format(time.RFC3339), h.Node, h.What, h.Detail()})
	}
	return t
}

// JudgeTable is one recorded output judged (health judge).
func JudgeTable(name, file string, r check.Result) table.Table {
	var vals []string
	for _, v := range r.Values {
		vals = append(vals, v.String())
	}
	return table.Table{Header: []string{"File", "Check", "Verdict", "Reason", "Values"},
		Rows: [][]string{{file, name, string(r.Verdict), r.Reason, strings.Join(vals, " ")}}, Raw: r}
}
