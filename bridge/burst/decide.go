package burst

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpubridge/gpubridge/internal/money"
)

// DefaultMaxMoves bounds the moves (one slurmrestd write each) of one cycle.
const DefaultMaxMoves = 200

// DefaultRuntime is the estimate horizon of a job without a time limit.
const DefaultRuntime = 24 * time.Hour

// Config is the part of gpubridge's configuration the decision needs.
type Config struct {
	PoolPartition     string // where tenants' reserved work runs (pool)
	OnDemandPartition string // where burst work runs (ondemand)
	OnDemandQOS       string // the shared on-demand QOS (ondemand)
	// DefaultRuntime is the runtime assumed for a job with no time limit;
	// 0 means DefaultRuntime.
	DefaultRuntime time.Duration
	// MaxMoves bounds the moves per cycle; 0 means DefaultMaxMoves.
	MaxMoves int
}

// Tenant is what the decision needs of a gpubridge tenant.
type Tenant struct {
	Name string // the tenant's Slurm account
	QOS  string // the tenant QOS (qosPrefix + name)
	// Quota is the tenant's GrpTRES per GPU type. When set, a QOSGrpGRES
	// hold is trusted only while the tenant's running jobs in its QOS
	// really fill the quota for one of the job's types (Slurm's reason can
	// lag a finished job by a scheduling pass). Nil trusts the reason.
	Quota  map[string]int64
	Policy Policy
}

// Policy is a tenant's burst policy.
type Policy struct {
	Enabled bool
	// MaxGPUs caps the GPUs (all types, MIG slices counted as GPUs) the
	// tenant holds in the on-demand tier at once, pending moved jobs
	// included. 0 allows none.
	MaxGPUs int64
	// Budget caps the month's on-demand spend, as the tenant wrote it (a
	// decimal without a currency); nil is no budget. Decide counts it in
	// the rates' currency, or refuses the tenant's moves when it cannot
	// be (2500.50 with a JPY card): never rounded.
	Budget *money.Amount
}

// Job is one job slurmctld holds.
type Job struct {
	ID        int64
	Name      string
	User      string
	Account   string
	Partition string // for a pending job, may be a list "a,b"
	QOS       string
	States    []string // PENDING, RUNNING, COMPLETING, ...
	Reason    string   // state_reason
	// GPUs is one task's GPUs: what it asks for while pending, what it
	// holds (tres_alloc_str) once running.
	GPUs Request
	// Tasks is the number of pending array tasks this record stands for
	// (an array whose tasks slurmctld has not split yet); 0 or 1 for a
	// plain job.
	Tasks        int64
	Comment      string
	AdminComment string
	TimeLimit    time.Duration // 0: none (UNLIMITED)
	Priority     int64
	SubmitTime   time.Time
	EligibleTime time.Time
	StartTime    time.Time
}

// Has reports whether the job is in state s.
func (j Job) Has(s string) bool { return slices.Contains(j.States, s) }

// Pending reports whether the job waits to start.
func (j Job) Pending() bool { return j.Has("PENDING") }

// Running reports whether the job holds its resources (running,
// suspended or still completing).
func (j Job) Running() bool {
	return j.Has("RUNNING") || j.Has("SUSPENDED") || j.Has("COMPLETING") || j.Has("CONFIGURING")
}

// TotalGPUs is the job's GPUs over all the tasks it stands for.
func (j Job) TotalGPUs() Request {
	n := max(j.Tasks, 1)
	r := Request{}
	for t, c := range j.GPUs {
		r[t] = c * n
	}
	return r
}

// runtime is the duration an estimate covers: the time limit (elapsed so far
// plus what is left), or cfg's default without one; never less than what a
// running job has already used.
func (j Job) runtime(now time.Time, def time.Duration) time.Duration {
	d := j.TimeLimit
	if d <= 0 {
		d = def
	}
	if j.Running() && !j.StartTime.IsZero() {
		d = max(d, now.Sub(j.StartTime))
	}
	return d
}

// Input is everything one decision reads.
type Input struct {
	Now     time.Time
	Config  Config
	Tenants []Tenant
	// Jobs are all jobs slurmctld holds (one bulk read).
	Jobs []Job
	// Spent is each tenant's booked on-demand spend this month (the
	// ledger's ondemand tier, minor units).
	Spent map[string]int64
	// Rates are the on-demand rates per GPU type.
	Rates Rates
}

// Move is a decision to move a job to the on-demand tier.
type Move struct {
	Job    Job
	Tenant string
	GPUs   Request // the job's total (all tasks)
	// Estimate is the cost the budget check charged, in minor units (0 for
	// a tenant without budget).
	Estimate int64
	// Marker is recorded in the job's admin comment; AdminComment is the
	// complete comment to write.
	Marker       Marker
	AdminComment string
}

// Refusal is a quota-held job of a tenant that stays pending.
type Refusal struct {
	JobID       int64
	Tenant      string
	User        string
	GPUs        Request
	Reason      Reason
	Detail      string // for people: the numbers behind the reason
	SlurmReason string
}

// Bursting is a tenant's job in the on-demand tier (pending or running).
type Bursting struct {
	JobID     int64
	Tenant    string
	User      string
	State     string // PENDING or RUNNING (first state)
	Reason    string // Slurm's state reason while pending
	GPUs      Request
	Estimate  int64 // cost of its run at the on-demand rate (0 when unpriced)
	Priced    bool
	Moved     bool // carries gpubridge's marker (else it was submitted there)
	Marker    Marker
	StartTime time.Time
}

// TenantState sums up a tenant's on-demand position.
type TenantState struct {
	Tenant  string
	Enabled bool
	MaxGPUs int64
	// Budget is the policy's budget in the rates' currency (as written when
	// BudgetErr says why it cannot be counted in it).
	Budget    *money.Amount
	BudgetErr string
	// OnDemandGPUs are held by the tenant's on-demand jobs before this
	// cycle's moves; MovedGPUs are added by them.
	OnDemandGPUs int64
	MovedGPUs    int64
	// Spent is booked this month; InFlight the estimate of the on-demand
	// jobs before this cycle's moves; MovedCost the estimate of this cycle's
	// moves.
	Spent     int64
	InFlight  int64
	MovedCost int64
	// Unpriced names a GPU type of an in-flight job that has no rate.
	Unpriced string
}

// Committed is the month's booked plus estimated on-demand spend.
func (s TenantState) Committed() int64 {
	return addSat(addSat(s.Spent, s.InFlight), s.MovedCost)
}

// Plan is the outcome of one decision.
type Plan struct {
	Moves    []Move
	Refusals []Refusal
	Bursting []Bursting
	Tenants  []TenantState // sorted by name
	// Ignored counts pending jobs that are no candidates, by reason.
	Ignored map[Reason]int
	// Currency and Minor are the amounts' currency and minor-unit digits
	// (from the rates), for display.
	Currency string
	Minor    int
}

// Decide takes one level-triggered decision: which pending jobs to move.
// It is pure: the same input gives the same plan.
//
// A pending job is a candidate when its account is a tenant, it waits in the
// pool (or, half moved, in the on-demand partition) under the tenant QOS,
// and its state reason is a quota hold (IsQuotaHold). Candidates are taken
// by Slurm priority (then submit time, then id); each one is refused when
// its comment opts out, the policy is off, the GPU cap or the budget would
// be exceeded, or a rate is missing; the others are moved, up to MaxMoves.
// A job already under the on-demand QOS is never a candidate again.
func Decide(in Input) Plan {
	d := newDecision(in)
	d.survey()
	slices.SortFunc(d.candidates, func(a, b Job) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.SubmitTime.Compare(b.SubmitTime), cmp.Compare(a.ID, b.ID))
	})
	// Candidates in priority order, consuming cap and budget.
	for _, j := range d.candidates {
		d.consider(j)
	}
	plan := d.plan
	for _, st := range d.states {
		plan.Tenants = append(plan.Tenants, *st)
	}
	slices.SortFunc(plan.Tenants, func(a, b TenantState) int { return strings.Compare(a.Tenant, b.Tenant) })
	slices.SortFunc(plan.Bursting, func(a, b Bursting) int {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), cmp.Compare(a.JobID, b.JobID))
	})
	return plan
}

// decision is one run of Decide: its input (with the configuration's
// defaults), the plan it fills, and each tenant's position so far.
type decision struct {
	in         Input
	cfg        Config
	plan       Plan
	tenants    map[string]*Tenant
	states     map[string]*TenantState
	used       map[string]Request // tenant -> GPUs running under its QOS
	candidates []Job
}

// newDecision fills in the configuration's defaults and starts each
// tenant's state: its policy, its booked spend, its budget counted in the
// rates' currency (or why it cannot be).
func newDecision(in Input) *decision {
	cfg := in.Config
	if cfg.DefaultRuntime <= 0 {
		cfg.DefaultRuntime = DefaultRuntime
	}
	if cfg.MaxMoves <= 0 {
		cfg.MaxMoves = DefaultMaxMoves
	}
	d := &decision{
		in: in, cfg: cfg,
		plan:    Plan{Ignored: map[Reason]int{}, Currency: in.Rates.Currency, Minor: in.Rates.Minor},
		tenants: make(map[string]*Tenant, len(in.Tenants)),
		states:  make(map[string]*TenantState, len(in.Tenants)),
		used:    map[string]Request{},
	}
	for i := range in.Tenants {
		t := &in.Tenants[i]
		d.tenants[t.Name] = t
		st := &TenantState{
			Tenant: t.Name, Enabled: t.Policy.Enabled, MaxGPUs: t.Policy.MaxGPUs, Spent: in.Spent[t.Name],
		}
		if b := t.Policy.Budget; b != nil {
			cb, err := b.In(in.Rates.Unit())
			if err != nil {
				cb, st.BudgetErr = *b, err.Error()
			}
			st.Budget = &cb
		}
		d.states[t.Name] = st
	}
	return d
}

// survey reads every job once: what each tenant runs in its QOS, what it
// holds on demand, and which pending jobs are candidates; the other
// pending jobs are counted as ignored.
func (d *decision) survey() {
	cfg := d.cfg
	for _, j := range d.in.Jobs {
		t := d.tenants[j.Account]
		if t == nil {
			if j.Pending() {
				d.plan.Ignored[NotOurs]++
			}
			continue
		}
		switch {
		case j.Running() && j.QOS == t.QOS:
			u := d.used[t.Name]
			if u == nil {
				u = Request{}
				d.used[t.Name] = u
			}
			u.add(j.TotalGPUs())
		case j.Pending() && j.QOS == t.QOS && (j.Partition == cfg.PoolPartition || j.Partition == cfg.OnDemandPartition):
			d.candidates = append(d.candidates, j)
			continue
		case j.Pending() && j.Partition == cfg.PoolPartition && j.QOS != cfg.OnDemandQOS:
			d.candidates = append(d.candidates, j) // another QOS: opted out, if held
			continue
		}
		if (j.Pending() || j.Running()) && (j.QOS == cfg.OnDemandQOS || j.Partition == cfg.OnDemandPartition) {
			d.onDemand(j, t)
			continue
		}
		if j.Pending() {
			d.plan.Ignored[NotQuotaHeld]++
		}
	}
}

// onDemand records a tenant's job in the on-demand tier: the GPUs it
// holds and its estimate count against the tenant's cap and budget.
func (d *decision) onDemand(j Job, t *Tenant) {
	b := bursting(j, t.Name, d.in.Now, d.cfg, d.in.Rates)
	st := d.states[t.Name]
	st.OnDemandGPUs += b.GPUs.Total()
	if b.Priced {
		st.InFlight = addSat(st.InFlight, b.Estimate)
	} else if st.Unpriced == "" {
		_, st.Unpriced, _ = Estimate(b.GPUs, time.Second, d.in.Rates)
	}
	d.plan.Bursting = append(d.plan.Bursting, b)
}

// refuse records that the tenant's job j stays pending, and why.
func (d *decision) refuse(j Job, tenant string, gpus Request, r Reason, format string, a ...any) {
	d.plan.Refusals = append(d.plan.Refusals, Refusal{
		JobID: j.ID, Tenant: tenant, User: j.User, GPUs: gpus, Reason: r,
		Detail: fmt.Sprintf(format, a...), SlurmReason: j.Reason,
	})
}

// consider moves one candidate, or refuses it (policy off, cap, budget,
// the cycle's limit of moves), or ignores it (see held).
func (d *decision) consider(j Job) {
	t := d.tenants[j.Account]
	st := d.states[t.Name]
	gpus := j.TotalGPUs()
	if !d.held(j, t, gpus) {
		return
	}
	if !t.Policy.Enabled {
		d.refuse(j, t.Name, gpus, Disabled, "burst is disabled for tenant %s", t.Name)
		return
	}
	n := gpus.Total()
	if have := st.OnDemandGPUs + st.MovedGPUs; have+n > t.Policy.MaxGPUs {
		d.refuse(j, t.Name, gpus, Cap, "needs %d on-demand GPU(s); %d of the cap of %d in use", n, have, t.Policy.MaxGPUs)
		return
	}
	est, ok := d.charge(j, t, st, gpus)
	if !ok {
		return
	}
	if len(d.plan.Moves) >= d.cfg.MaxMoves {
		d.refuse(j, t.Name, gpus, Deferred, "this cycle reached its limit of %d moves", d.cfg.MaxMoves)
		return
	}
	st.MovedGPUs += n
	st.MovedCost = addSat(st.MovedCost, est)
	m := Marker{
		Moved: d.in.Now.UTC().Truncate(time.Second), Reason: j.Reason, Partition: j.Partition,
		QOS: j.QOS, GPUs: gpus.String(), Estimate: est,
	}
	d.plan.Moves = append(d.plan.Moves, Move{
		Job: j, Tenant: t.Name, GPUs: gpus, Estimate: est, Marker: m,
		AdminComment: WithMarker(j.AdminComment, m),
	})
}

// held reports whether the candidate is held by its tenant's quota and
// could burst: not when Slurm's reason is no quota hold, the quota has
// room now, or the job asks for no GPU (ignored), nor when it opted out
// by its comment or its QOS (refused).
func (d *decision) held(j Job, t *Tenant, gpus Request) bool {
	if !IsQuotaHold(j.Reason) {
		d.plan.Ignored[NotQuotaHeld]++
		return false
	}
	if HasNoBurst(j.Comment) {
		d.refuse(j, t.Name, gpus, OptedOut, "comment has %s", NoBurstToken)
		return false
	}
	if j.QOS != t.QOS {
		d.refuse(j, t.Name, gpus, OptedOut, "submitted with --qos=%s (tenant QOS is %s)", j.QOS, t.QOS)
		return false
	}
	if gpus.Typed() == 0 {
		d.plan.Ignored[NoGPU]++
		return false
	}
	if j.Reason == "QOSGrpGRES" && t.Quota != nil && !quotaFull(gpus, d.used[t.Name], t.Quota) {
		d.plan.Ignored[NotQuotaHeld]++ // the quota has room now: Slurm will start it
		return false
	}
	return true
}

// charge estimates the job's cost against the tenant's budget and returns
// it (0 without a budget), or refuses the job and reports false when a
// rate is missing, the budget cannot be counted, or it would be exceeded.
func (d *decision) charge(j Job, t *Tenant, st *TenantState, gpus Request) (int64, bool) {
	if t.Policy.Budget == nil {
		return 0, true
	}
	if st.Unpriced != "" {
		d.refuse(j, t.Name, gpus, NoRate, "an on-demand job of the tenant uses %s, which has no on-demand rate", st.Unpriced)
		return 0, false
	}
	dur := j.runtime(d.in.Now, d.cfg.DefaultRuntime)
	cost, missing, ok := Estimate(gpus, dur, d.in.Rates)
	if !ok {
		d.refuse(j, t.Name, gpus, NoRate, "no on-demand rate for %s", missing)
		return 0, false
	}
	if st.BudgetErr != "" {
		d.refuse(j, t.Name, gpus, Budget, "the budget cannot be counted in the rate card's currency: %s", st.BudgetErr)
		return 0, false
	}
	budget := st.Budget.Units()
	if c := st.Committed(); addSat(c, cost) > budget {
		mn := d.in.Rates.Minor
		d.refuse(j, t.Name, gpus, Budget, "estimated %s for %s; %s of the budget of %s committed this month",
			FormatMoney(cost, mn), dur, FormatMoney(c, mn), FormatMoney(budget, mn))
		return 0, false
	}
	return cost, true
}

// quotaFull reports whether, for one of the job's types, the tenant's
// running GPUs plus the job's exceed the quota. A type the quota does not
// name has no limit in the QOS.
func quotaFull(job, used Request, quota map[string]int64) bool {
	for _, t := range job.Types() {
		q, limited := quota[t]
		if limited && used[t]+job[t] > q {
			return true
		}
	}
	return false
}

func bursting(j Job, tenant string, now time.Time, cfg Config, rates Rates) Bursting {
	gpus := j.TotalGPUs()
	b := Bursting{
		JobID: j.ID, Tenant: tenant, User: j.User, GPUs: gpus, StartTime: j.StartTime,
	}
	if len(j.States) > 0 {
		b.State = j.States[0]
	}
	if j.Pending() {
		b.Reason = j.Reason
	}
	b.Marker, b.Moved = ParseMarker(j.AdminComment)
	cost, _, ok := Estimate(gpus, j.runtime(now, cfg.DefaultRuntime), rates)
	b.Estimate, b.Priced = cost, ok
	return b
}

// FormatMoney writes an amount of minor units with minor decimals:
// (1234, 2) -> 12.34, (500, 0) -> 500, (-50, 2) -> -0.50.
func FormatMoney(m int64, minor int) string {
	return money.New(m, money.Currency{Minor: minor}).String()
}
