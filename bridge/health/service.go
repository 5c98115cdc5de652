package health

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health/check"
)

// Settings configure the service.
type Settings struct {
	// Nodes are the nodes whose health gpubridge manages. Others are never
	// touched.
	Nodes []string
	// Account, User, QOS and Partition of the check jobs: a service account
	// that is no tenant's (its jobs are billed to nobody). An empty
	// Partition takes the node's first partition.
	Account, User, QOS, Partition string
	// MaxConcurrent caps the check jobs in flight at once.
	MaxConcurrent int
	Policy        Policy
	// Acceptance is the set a held node must pass (its Spec drives the
	// acceptance runs); a drained node runs it with the checks that failed.
	Acceptance Schedule
	Schedules  []Schedule
	// TriggerChecks are what `check node` runs without check= (default:
	// the acceptance set).
	TriggerChecks []string
	// TenantChecksPerHour caps the checks a tenant triggers per hour.
	TenantChecksPerHour int
	// StartWait: how long a cycle waits for an acceptance run's job to
	// start before it drains the node again (the node is resumed, behind
	// its reservation, while the job waits).
	StartWait time.Duration
	// MaxPending: a run whose job has not started after this is cancelled
	// (no verdict).
	MaxPending time.Duration
	// Retention: finished runs, results and evidence older than this are
	// deleted.
	Retention time.Duration
	// MaxOutput bounds the output read back per run; MaxEvidence what is
	// stored of it.
	MaxOutput   int64
	MaxEvidence int
}

func (s Settings) withDefaults() Settings {
	if s.MaxConcurrent <= 0 {
		s.MaxConcurrent = 4
	}
	if s.StartWait <= 0 {
		s.StartWait = 2 * time.Minute
	}
	if s.MaxPending <= 0 {
		s.MaxPending = time.Hour
	}
	if s.MaxOutput <= 0 {
		s.MaxOutput = 16 << 20
	}
	if s.MaxEvidence <= 0 {
		s.MaxEvidence = 256 << 10
	}
	if s.Acceptance.Name == "" {
		s.Acceptance.Name = AcceptanceSchedule
	}
	if len(s.TriggerChecks) == 0 {
		s.TriggerChecks = s.Acceptance.Checks
	}
	if s.TenantChecksPerHour <= 0 {
		s.TenantChecksPerHour = 4
	}
	return s
}

// Params are what a Service is built from.
type Params struct {
	Nodes   NodeControl
	Jobs    JobRunner
	Outputs Outputs
	Store   Store
	Usage   TenantUsage
	// History says where a tenant's jobs ran (show health tenant= history).
	History  TenantHistory
	Bookings Bookings
	Catalog  check.Catalog
	Settings Settings
	Logger   *slog.Logger
	Observer Observer
	// Mover re-projects bookings on the nodes a cycle held or released
	// (nil: the bookings job finds them at its next run).
	Mover BookingMover
	// Now is the clock (tests inject one); default time.Now.
	Now func() time.Time
	// Sleep waits between polls; default a timer that honours ctx.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Service runs the health lifecycle: schedules, acceptance runs, tenant
// and admin checks, and the admin override. Its methods are safe for
// concurrent use within a process; across processes (daemon and CLI) the
// store's compare-and-set keeps records consistent.
type Service struct {
	Params
	mu sync.Mutex
	// again are the nodes returned to service, with when: the first cycle
	// or harvest releaseSettle after that re-projects their bookings once
	// more (slurmctld was seen to report a node resumed and unfenced a
	// moment ago as still unavailable to the projectors that ran within
	// the next 20 ms; one a second later moved the booking back).
	again map[string]time.Time
}

// New returns a service; it validates the settings against the catalog.
func New(p Params) (*Service, error) {
	svc := &Service{Params: p}
	svc.Settings = svc.Settings.withDefaults()
	if svc.Bookings == nil {
		svc.Bookings = NoBookings{}
	}
	if svc.Logger == nil {
		svc.Logger = slog.New(slog.DiscardHandler)
	}
	if err := svc.validate(); err != nil {
		return nil, err
	}
	return svc, nil
}

func (s *Service) validate() error {
	var errs []string
	if s.Nodes == nil || s.Jobs == nil || s.Outputs == nil || s.Store == nil || s.Catalog == nil {
		errs = append(errs, "the service needs Nodes, Jobs, Outputs, Store and Catalog")
	}
	if s.Settings.Account == "" || s.Settings.User == "" {
		errs = append(errs, "health.account and health.user name the check jobs' service account")
	}
	sets := append([]Schedule{s.Settings.Acceptance}, s.Settings.Schedules...)
	seen := map[string]bool{}
	for _, sc := range sets {
		if seen[sc.Name] {
			errs = append(errs, fmt.Sprintf("schedule %q is defined twice", sc.Name))
		}
		seen[sc.Name] = true
		if _, err := s.Catalog.Resolve(sc.Checks); err != nil {
			errs = append(errs, fmt.Sprintf("schedule %s: %v", sc.Name, err))
		}
		if len(sc.Checks) == 0 && sc.Name == AcceptanceSchedule {
			errs = append(errs, "the acceptance schedule needs at least one check (health.acceptance.checks)")
		}
		for _, c := range sc.Checks {
			if ch, ok := s.Catalog[c]; ok && ch.Nodes > 1 {
				errs = append(errs, fmt.Sprintf("schedule %s: %s spans %d nodes; schedules run single-node checks (trigger two-node checks by hand)", sc.Name, c, ch.Nodes))
			}
		}
	}
	if _, err := s.Catalog.Resolve(s.Settings.TriggerChecks); err != nil {
		errs = append(errs, "health.triggerChecks: "+err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	return nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Service) managed(node string) bool { return slices.Contains(s.Settings.Nodes, node) }
