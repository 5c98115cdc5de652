package health

import (
	"context"
	"errors"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrConflict: the record changed under us (another process wrote it);
	// nothing was written. The next cycle reads it again.
	ErrConflict = errors.New("health record changed concurrently")
	// ErrNotAllowed: the requester may not check this node.
	ErrNotAllowed = errors.New("not allowed")
	// ErrRateLimited: the tenant triggered too many checks lately.
	ErrRateLimited = errors.New("rate limited")
	// ErrBusy: a run is in flight on the node, or the cap of runs at once
	// is reached.
	ErrBusy = errors.New("busy")
	// ErrUnknownNode: the node is not under gpubridge's health management.
	ErrUnknownNode = errors.New("unknown node")
	// ErrInvalid: the request names something that does not exist.
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound: no such run.
	ErrNotFound = errors.New("not found")
	// ErrNoOutput: a run's output file does not exist (its job never
	// started, or the output directory is not shared with gpubridge).
	ErrNoOutput = errors.New("no output file")
	// ErrBadOutput: a run's output file was refused (a symbolic link, not
	// a regular file, hard-linked, or outside the output directory): the
	// run gives no verdict.
	ErrBadOutput = errors.New("output file refused")
)

// NodeControl reads and changes nodes in Slurm.
type NodeControl interface {
	// Nodes returns every node slurmctld knows.
	Nodes(ctx context.Context) ([]SlurmNode, error)
	// Fences returns the nodes that have a health reservation now.
	Fences(ctx context.Context) (map[string]bool, error)
	// Fence creates the node's health reservation (a whole-node MAINT,
	// IGNORE_JOBS reservation for the health user only), once.
	Fence(ctx context.Context, node string) error
	// Unfence deletes it; a missing one is not an error.
	Unfence(ctx context.Context, node string) error
	// Drain sets DRAIN with reason (running jobs finish).
	Drain(ctx context.Context, node, reason string) error
	// Down sets DOWN with reason (running jobs are killed).
	Down(ctx context.Context, node, reason string) error
	// Resume resumes a drained or down node.
	Resume(ctx context.Context, node string) error
}

// FenceName is the health reservation of a node. The prefix is not the
// bookings' "gpubridge-<id>", so neither side takes the other's for its own.
func FenceName(node string) string { return "gpubridge_health_" + node }

// JobRequest is a check run's batch job.
type JobRequest struct {
	Name        string
	Comment     string // carries the run key, to find a job whose id was lost
	Account     string
	User        string // the health service user the job runs as
	QOS         string
	Partition   string
	Reservation string
	Nodes       []string // the job runs on exactly these nodes
	GPUs        string   // per node, as Slurm TRES: gres/gpu:h100:4; "" for none
	Script      string
	TimeLimit   time.Duration
	StdOut      string // the output file, as the node sees it
}

// JobState is a job's state as slurmctld reports it.
type JobState struct {
	State string // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
	Start time.Time
	End   time.Time
}

// Pending reports whether the job waits to start.
func (s JobState) Pending() bool {
	return s.State == "PENDING" || s.State == "CONFIGURING" || s.State == "REQUEUED"
}

// Active reports whether the job has not ended.
func (s JobState) Active() bool {
	switch s.State {
	case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED", "STAGE_OUT", "SIGNALING":
		return true
	}
	return false
}

// JobRunner submits and follows check jobs.
type JobRunner interface {
	Submit(ctx context.Context, r JobRequest) (int64, error)
	// States returns the state of each job slurmctld still knows; an id
	// missing from the map has ended long enough ago to be forgotten.
	States(ctx context.Context, ids []int64) (map[int64]JobState, error)
	// Find returns the job whose comment carries the run key.
	Find(ctx context.Context, key string) (int64, bool, error)
	Cancel(ctx context.Context, id int64) error
}

// Outputs reads the check jobs' output files.
type Outputs interface {
	// Path is the output file of run key as the node sees it.
	Path(key string) string
	// Read returns up to max bytes of the run's output, ErrNoOutput, or
	// ErrBadOutput for a file it refuses to read.
	Read(ctx context.Context, key string, max int64) ([]byte, error)
	Remove(ctx context.Context, key string) error
}

// TenantUsage says which nodes run a tenant's jobs now.
type TenantUsage interface {
	TenantNodes(ctx context.Context, tenant string) ([]string, error)
}

// Bookings says which nodes are booked for a tenant at a time
// (bridge/reserve provides it; NoBookings until then).
type Bookings interface {
	BookedNodes(ctx context.Context, tenant string, at time.Time) ([]string, error)
}

// NoBookings books nothing.
type NoBookings struct{}

// BookedNodes returns none.
func (NoBookings) BookedNodes(context.Context, string, time.Time) ([]string, error) { return nil, nil }

// BookingMover re-projects the bookings on nodes gpubridge has just taken
// out of service or returned to it (bridge/reserve's projector: a booking
// on a drained node is marked at risk, and moved to healthy GPUs where the
// ledger has room), so that a drain does not wait for the next bookings
// run. It returns one line per booking it marked or moved.
type BookingMover interface {
	Reproject(ctx context.Context, nodes []string) ([]string, error)
}

// Observer receives the service's measurements (bridge/health/metrics).
type Observer interface {
	NodeStates(counts map[State]int)
	CheckResult(check string, v check.Verdict, d time.Duration)
}

// Purpose says why a run was submitted.
type Purpose string

const (
	PurposeSchedule   Purpose = "schedule"   // a schedule's checks on a node in service
	PurposeAcceptance Purpose = "acceptance" // burn-in or requalify of a held node
	PurposeTenant     Purpose = "tenant"     // triggered by a tenant
	PurposeAdmin      Purpose = "admin"      // triggered by an admin
)

// RunState is where a run is.
type RunState string

const (
	RunSubmitting RunState = "submitting" // stored; the job is being submitted
	RunSubmitted  RunState = "submitted"  // its job is in Slurm
	RunDone       RunState = "done"       // results stored
	RunAborted    RunState = "aborted"    // no verdict (cancelled, never started)
)

// Run is one check job on one node (or two, for a two-node check).
type Run struct {
	ID   int64  `json:"id"`
	Key  string `json:"key"`
	Node string `json:"node"`
	// Peers are the other nodes of a two-node check (nccl-2node): the
	// job spans Node and Peers, and its results apply to each.
	Peers       []string  `json:"peers,omitempty"`
	Checks      []string  `json:"checks"`
	Purpose     Purpose   `json:"purpose"`
	Schedule    string    `json:"schedule,omitempty"`
	Held        bool      `json:"held"`             // an acceptance run on a held node
	Tenant      string    `json:"tenant,omitempty"` // the tenant that triggered it
	Actor       string    `json:"actor,omitempty"`
	State       RunState  `json:"state"`
	JobID       int64     `json:"jobId,omitempty"`
	Model       string    `json:"model,omitempty"`
	GPUs        int       `json:"gpus,omitempty"`
	RequestedAt time.Time `json:"requestedAt"`
	FinishedAt  time.Time `json:"finishedAt,omitzero"`
	Note        string    `json:"note,omitempty"` // why aborted
}

// AllNodes are the run's nodes: Node, then Peers.
func (r Run) AllNodes() []string { return append([]string{r.Node}, r.Peers...) }

// StoredResult is one check's result in a run, as stored.
type StoredResult struct {
	RunID    int64         `json:"runId"`
	Node     string        `json:"node"`
	Check    string        `json:"check"`
	Verdict  check.Verdict `json:"verdict"`
	Reason   string        `json:"reason,omitempty"`
	Values   []check.Value `json:"values,omitempty"`
	Start    time.Time     `json:"start,omitzero"`
	End      time.Time     `json:"end,omitzero"`
	ExitCode int           `json:"exitCode"`
	JobID    int64         `json:"jobId"`
	Tenant   string        `json:"tenant,omitempty"`
	Purpose  Purpose       `json:"purpose"`
	At       time.Time     `json:"at"`
}

// Duration is how long the check ran (0 when unknown).
func (r StoredResult) Duration() time.Duration {
	if r.Start.IsZero() || r.End.Before(r.Start) {
		return 0
	}
	return r.End.Sub(r.Start)
}

// Finish is everything a finished run writes, in one transaction.
type Finish struct {
	Run     Run // State RunDone or RunAborted, FinishedAt, Note
	Results []StoredResult
	// Evidence is the run's output, capped.
	Evidence []byte
	// Nodes are the records the run changed (compare-and-set on Version),
	// Events their state changes.
	Nodes  []Node
	Events []Event
}

// ResultFilter selects stored results; empty fields match everything.
type ResultFilter struct {
	Node   string
	Check  string
	Tenant string
	// VisibleTo keeps what this tenant may see: the results of its own
	// runs and of the runs no tenant triggered (scheduled, acceptance,
	// an admin's), never another tenant's.
	VisibleTo string
	RunID     int64
	Since     time.Time
	Limit     int // 0: 200
}

// Override is an admin's change of a node's record (resume node), stored
// with its event and an audit row in one transaction.
type Override struct {
	Node   Node
	Event  Event
	Actor  string
	Action string
	Before any
	After  any
}

// Store keeps one cluster's health records.
type Store interface {
	Nodes(ctx context.Context) (map[string]Node, error)
	// PutNode writes a record (insert when Version is 0, else
	// compare-and-set on Version) and its event; it returns the record with
	// its new Version, or ErrConflict.
	PutNode(ctx context.Context, n Node, ev *Event) (Node, error)
	// CreateRun stores a new run (State RunSubmitting) and returns it with
	// its ID.
	CreateRun(ctx context.Context, r Run) (Run, error)
	// CreateTenantRun stores a run that tenant r.Tenant triggered, as
	// CreateRun does, only while the tenant's runs requested since since
	// number fewer than max; else ErrRateLimited. The count and the insert
	// are one step for every process and replica sharing the store.
	CreateTenantRun(ctx context.Context, r Run, since time.Time, max int) (Run, error)
	// SetRunJob records the run's job (State RunSubmitted).
	SetRunJob(ctx context.Context, id, jobID int64) error
	// InFlight returns the runs not finished (submitting or submitted).
	InFlight(ctx context.Context) ([]Run, error)
	// FinishRun writes a finished run, its results, evidence, node records
	// and events, unless another process finished the run first (false) or
	// a record changed (ErrConflict); then nothing is written.
	FinishRun(ctx context.Context, f Finish) (bool, error)
	Run(ctx context.Context, id int64) (Run, error)
	// Evidence returns a run's stored output.
	Evidence(ctx context.Context, id int64) ([]byte, error)
	Results(ctx context.Context, f ResultFilter) ([]StoredResult, error)
	Events(ctx context.Context, node string, since time.Time) ([]Event, error)
	// TenantRuns counts the runs a tenant triggered since a time.
	TenantRuns(ctx context.Context, tenant string, since time.Time) (int, error)
	// Override writes an admin's change with its audit row.
	Override(ctx context.Context, o Override) (Node, error)
	// Prune deletes finished runs, their results and evidence older than
	// before; events are kept (credits link to them).
	Prune(ctx context.Context, before time.Time) (int64, error)
}
