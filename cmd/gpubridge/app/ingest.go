package app

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/internal/table"
)

// IngestRequest is one `gpubridge ingest`: the window, the source, the
// pass and the gap of purged rows accepted.
type IngestRequest struct {
	Window ingest.Window
	// Source is slurmdb or slurmrestd; empty is the configured default.
	Source string
	// Pass is "" (the window), changes (the window plus a changes pass),
	// verify (re-read the open periods in full) or scheduled (what the
	// daemon's ingest job does).
	Pass string
	// AcceptMissing, when set, ingests past a gap of purged job rows.
	AcceptMissing *ingest.Accept
}

// ParseIngest reads ingest's keys: from=, to=, source=, pass= and
// accept-missing=.
func ParseIngest(where map[string]string) (IngestRequest, error) {
	var r IngestRequest
	var err error
	if v, ok := where["from"]; ok {
		if r.Window.From, err = ParseTime("from", v); err != nil {
			return r, err
		}
	}
	if v, ok := where["to"]; ok {
		if r.Window.To, err = ParseTime("to", v); err != nil {
			return r, err
		}
	}
	if v, ok := where["accept-missing"]; ok {
		if r.AcceptMissing, err = ParseAccept(v); err != nil {
			return r, err
		}
	}
	r.Source, r.Pass = where["source"], where["pass"]
	switch r.Pass {
	case "":
	case "changes":
		r.Window.Changes = true
	case "verify", "scheduled":
		if !r.Window.From.IsZero() {
			return r, Inputf("pass=%s chooses its own window: leave out from=", r.Pass)
		}
	default:
		return r, Inputf("pass=%s: want changes, verify or scheduled", r.Pass)
	}
	return r, nil
}

// ParseAccept reads accept-missing=FROM..TO.
func ParseAccept(v string) (*ingest.Accept, error) {
	f, t, ok := strings.Cut(v, "..")
	if !ok {
		return nil, Inputf("accept-missing=%q: want FROM..TO, e.g. accept-missing=2026-11-20T12:00..2026-11-20T14:00 (the hours the refusal named)", v)
	}
	from, err := ParseTime("accept-missing", f)
	if err != nil {
		return nil, err
	}
	to, err := ParseTime("accept-missing", t)
	if err != nil {
		return nil, err
	}
	if !to.After(from) {
		return nil, Inputf("accept-missing=%q: the end must be after the start", v)
	}
	return &ingest.Accept{From: from, To: to, Actor: Actor()}, nil
}

// Ingest runs the ingest r asks for (ParseIngest reads ingest's keys),
// showing its progress on progress when given (a bar on a terminal, a line
// every few seconds otherwise; cleared before it returns). It logs only
// when Verbose (the command prints the summary line).
func (e *Env) Ingest(ctx context.Context, r IngestRequest, progress io.Writer) (ingest.Result, error) {
	in, err := e.Ingester(ctx, r.Source)
	if err != nil {
		return ingest.Result{}, err
	}
	if !e.Verbose {
		in.Log = nil // the summary line says it; -v shows the ingest's log
	}
	in.AcceptMissing = r.AcceptMissing
	if progress != nil {
		prog := ingest.NewProgressPrinter(progress)
		defer prog.Finish()
		in.Progress = prog.Update
	}
	switch r.Pass {
	case "verify":
		in.VerifyEvery, in.ChangesEvery = time.Nanosecond, time.Nanosecond
		return in.Scheduled(ctx)
	case "scheduled":
		return in.Scheduled(ctx)
	}
	return in.Ingest(ctx, r.Window)
}

// IngestStatus is what the ledger holds of the configured cluster (show
// ingest).
type IngestStatus struct {
	Cluster string
	ledger.State
}

// Printout is what show ingest prints for the output options o: the
// table, and in text the end times ingested and the closed periods
// (ledger.StateViews).
func (s IngestStatus) Printout(o table.Options) Printout {
	t, note, text := ledger.StateViews(s.Cluster, s.State, o)
	return Printout{}.Notes(note).Table(t).Text(text)
}

// IngestState is the ledger's state for the configured cluster (show
// ingest).
func (e *Env) IngestState(ctx context.Context) (IngestStatus, error) {
	_, err := e.Config()
	if err != nil {
		return IngestStatus{}, err
	}
	st, err := e.Ledger(ctx)
	if err != nil {
		return IngestStatus{}, err
	}
	cluster, err := e.ClusterName(ctx)
	if err != nil {
		return IngestStatus{}, err
	}
	s, err := st.State(ctx, cluster)
	return IngestStatus{Cluster: cluster, State: s}, err
}
