package health

import (
	"context"
	"fmt"
	"strings"
)

// Schedule is a set of checks the daemon runs on a cron spec.
type Schedule struct {
	Name   string
	Spec   string // robfig/cron/v3 spec, e.g. "@every 10m", "0 4 * * 0"
	Checks []string
	// WhenIdle: only on nodes where nothing runs (long, exclusive checks).
	WhenIdle bool
}

// AcceptanceSchedule is the name of the schedule that runs the acceptance
// set on held nodes (burn-in and requalify).
const AcceptanceSchedule = "acceptance"

// ScheduleJob is the daemon's periodic job of one schedule: it satisfies
// cmd/gpubridge/daemon.Job (Name, Run).
type ScheduleJob struct {
	svc      *Service
	schedule string
}

// Name is "health-<schedule>".
func (j *ScheduleJob) Name() string { return "health-" + j.schedule }

// Run runs one cycle of the schedule.
func (j *ScheduleJob) Run(ctx context.Context) error {
	_, err := j.svc.Cycle(ctx, j.schedule)
	return err
}

// ScheduledJob is a job with its cron spec, for the daemon to schedule.
type ScheduledJob struct {
	Spec string
	Job  *ScheduleJob
}

// Scheduled returns one job per schedule (the acceptance schedule first). The
// daemon schedules each on its Spec with SkipIfStillRunning; an empty Spec
// disables that schedule.
func (s *Service) Scheduled() []ScheduledJob {
	out := []ScheduledJob{{Spec: s.Settings.Acceptance.Spec, Job: &ScheduleJob{svc: s, schedule: s.Settings.Acceptance.Name}}}
	for _, sc := range s.Settings.Schedules {
		out = append(out, ScheduledJob{Spec: sc.Spec, Job: &ScheduleJob{svc: s, schedule: sc.Name}})
	}
	return out
}

// Job returns the job of the named schedule.
func (s *Service) Job(schedule string) (*ScheduleJob, error) {
	if _, err := s.schedule(schedule); err != nil {
		return nil, err
	}
	return &ScheduleJob{svc: s, schedule: schedule}, nil
}

func (s *Service) schedule(name string) (Schedule, error) {
	if name == s.Settings.Acceptance.Name {
		return s.Settings.Acceptance, nil
	}
	for _, sc := range s.Settings.Schedules {
		if sc.Name == name {
			return sc, nil
		}
	}
	var names []string
	for _, sc := range append([]Schedule{s.Settings.Acceptance}, s.Settings.Schedules...) {
		names = append(names, sc.Name)
	}
	return Schedule{}, fmt.Errorf("%w: no health schedule %q (schedules: %s)", ErrInvalid, name, strings.Join(names, ", "))
}

// submitSchedule submits the schedule's runs.
func (s *Service) submitSchedule(ctx context.Context, st *snapshot, sched Schedule, rep *Report) {
	for _, name := range sortedKeys(st.slurm) {
		rec, ok := st.recs[name]
		if !ok {
			continue
		}
		sn := st.slurm[name]
		acceptance := sched.Name == s.Settings.Acceptance.Name
		switch {
		case acceptance && !rec.State.Held(), !acceptance && !rec.State.InService():
			continue
		}
		if r, busy := st.runOn(name); busy {
			rep.skip(name, fmt.Sprintf("run %d is in flight", r.ID))
			continue
		}
		if sched.WhenIdle && !sn.Idle() {
			rep.skip(name, "not idle")
			continue
		}
		if st.activeRuns() >= s.Settings.MaxConcurrent {
			rep.skip(name, fmt.Sprintf("%d check jobs are in flight (health.maxConcurrent)", st.activeRuns()))
			continue
		}
		names := sched.Checks
		purpose := PurposeSchedule
		if acceptance || rec.State == Suspect {
			names = union(sched.Checks, rec.Checks)
		}
		if acceptance {
			purpose = PurposeAcceptance
		}
		r, err := s.submit(ctx, st, sn, names, purpose, sched.Name, acceptance, "", "")
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("submit on %s: %v", name, err))
			continue
		}
		rep.Submitted = append(rep.Submitted, r)
	}
}
