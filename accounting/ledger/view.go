package ledger

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/table"
)

// StateRow is one row of show ingest --json: a source's watermark and
// passes; a time that never happened is left out.
type StateRow struct {
	Cluster            string     `json:"cluster"`
	Source             string     `json:"source"`
	CompleteThrough    *time.Time `json:"completeThrough,omitempty"`
	RunningAsOf        *time.Time `json:"runningAsOf,omitempty"`
	ChangesSeenThrough *time.Time `json:"changesSeenThrough,omitempty"`
	ChangesPassAt      *time.Time `json:"changesPassAt,omitempty"`
	VerifiedFrom       *time.Time `json:"verifiedFrom,omitempty"`
	VerifiedThrough    *time.Time `json:"verifiedThrough,omitempty"`
	VerifiedAt         *time.Time `json:"verifiedAt,omitempty"`
}

// StateTable lays out the ledger's state per source (show ingest).
func StateTable(cluster string, s State) table.Table {
	t := table.Table{
		Header: []string{"Cluster", "Source", "CompleteThrough", "RunningAsOf", "ChangesSeenThrough", "ChangesPassAt", "VerifiedFrom", "VerifiedThrough", "VerifiedAt"},
		Keys:   []string{"cluster", "source", "completeThrough", "runningAsOf", "changesSeenThrough", "changesPassAt", "verifiedFrom", "verifiedThrough", "verifiedAt"},
	}
	at := func(v int64) *time.Time {
		if v == 0 {
			return nil
		}
		t := time.Unix(v, 0).UTC()
		return &t
	}
	passes := map[[2]string]meter.Pass{}
	for _, p := range s.Passes {
		passes[[2]string{p.Source, p.Kind}] = p
	}
	raw := []StateRow{}
	for _, src := range slices.Sorted(maps.Keys(s.Watermarks)) {
		ch, ve := passes[[2]string{src, meter.PassChanges}], passes[[2]string{src, meter.PassVerify}]
		t.Rows = append(t.Rows, []string{cluster, src, stamp(s.Watermarks[src].Through), stamp(s.AccrualsAsOf), stamp(ch.AsOf), stamp(ch.Finished),
			stamp(ve.From), stamp(ve.AsOf), stamp(ve.Finished)})
		raw = append(raw, StateRow{Cluster: cluster, Source: src, CompleteThrough: at(s.Watermarks[src].Through), RunningAsOf: at(s.AccrualsAsOf),
			ChangesSeenThrough: at(ch.AsOf), ChangesPassAt: at(ch.Finished), VerifiedFrom: at(ve.From), VerifiedThrough: at(ve.AsOf), VerifiedAt: at(ve.Finished)})
	}
	t.Raw = raw
	return t
}

// StateViews is what show ingest prints of s for the output options o:
// the table, a note when nothing was ingested yet (not with --json), and
// in text (neither --json nor -P) the StateText after the table.
func StateViews(cluster string, s State, o table.Options) (t table.Table, note, text string) {
	t = StateTable(cluster, s)
	if len(t.Rows) == 0 && !o.JSON {
		note = fmt.Sprintf("nothing ingested into this ledger yet for cluster %s: run gpubridge ingest", cluster)
	}
	if !o.JSON && !o.Parsable {
		text = StateText(s)
	}
	return t, note, text
}

// StateText is what show ingest prints after the table: the end-time
// ranges ingested and the closed periods.
func StateText(s State) string {
	var cov []string
	for _, r := range s.Coverage {
		cov = append(cov, stamp(r[0])+".."+stamp(r[1]))
	}
	var closed []string
	for _, p := range slices.Sorted(maps.Keys(s.Closed)) {
		closed = append(closed, p.String())
	}
	return fmt.Sprintf("\ningested end times: %s\nclosed periods: %s\n", noneIfEmpty(strings.Join(cov, ", ")), noneIfEmpty(strings.Join(closed, ", ")))
}

// stamp is a Unix time in RFC 3339 (UTC), "-" for never.
func stamp(v int64) string {
	if v == 0 {
		return "-"
	}
	return time.Unix(v, 0).UTC().Format(time.RFC3339)
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
