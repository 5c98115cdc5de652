package burst

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/internal/money"
)

var (
	t0  = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	cfg = Config{PoolPartition: "pool", OnDemandPartition: "ondemand", OnDemandQOS: "ondemand"}
)

// cents is a budget of n hundredths, as a tenant would write it.
func cents(n int64) *money.Amount { a := money.New(n, money.Currency{Minor: 2}); return &a }

func acme(p Policy) Tenant {
	return Tenant{Name: "acme", QOS: "t_acme", Quota: map[string]int64{"h100": 2, "1g.10gb": 7}, Policy: p}
}

var on = Policy{Enabled: true, MaxGPUs: 4}

// running is a job of acme holding h100 GPUs in its QOS in the pool.
func running(id int64, n int64) Job {
	return Job{ID: id, User: "alice", Account: "acme", Partition: "pool", QOS: "t_acme", States: []string{"RUNNING"},
		Reason: "None", GPUs: Request{"h100": n}, TimeLimit: time.Hour, StartTime: t0.Add(-10 * time.Minute)}
}

// held is a pending job of acme held by its quota.
func held(id int64, n int64) Job {
	return Job{ID: id, User: "alice", Account: "acme", Partition: "pool", QOS: "t_acme", States: []string{"PENDING"},
		Reason: "QOSGrpGRES", GPUs: Request{"h100": n}, TimeLimit: time.Hour, Priority: 100, SubmitTime: t0.Add(-time.Duration(id) * time.Second)}
}

// onDemand is a job of acme already moved (with gpubridge's marker).
func onDemand(id int64, n int64, state string) Job {
	m := Marker{Moved: t0.Add(-time.Minute), Reason: "QOSGrpGRES", Partition: "pool", QOS: "t_acme", GPUs: fmt.Sprintf("h100:%d", n)}
	j := Job{ID: id, User: "alice", Account: "acme", Partition: "ondemand", QOS: "ondemand", States: []string{state},
		Reason: "None", GPUs: Request{"h100": n}, TimeLimit: time.Hour, AdminComment: m.String()}
	if state == "RUNNING" {
		j.StartTime = t0.Add(-time.Minute)
	}
	return j
}

func with(j Job, f func(*Job)) Job { f(&j); return j }

type outcome struct {
	Moves    []int64
	Refusals map[int64]Reason
	Ignored  map[Reason]int
}

func summarize(p Plan) outcome {
	o := outcome{Refusals: map[int64]Reason{}, Ignored: p.Ignored}
	for _, m := range p.Moves {
		o.Moves = append(o.Moves, m.Job.ID)
	}
	for _, r := range p.Refusals {
		o.Refusals[r.JobID] = r.Reason
	}
	return o
}

func TestDecide(t *testing.T) {
	rates := Rates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit}, Minor: 2} // 4.00 per GPU-hour
	cases := map[string]struct {
		tenants []Tenant
		jobs    []Job
		spent   map[string]int64
		rates   Rates
		cfg     func(*Config)
		want    outcome
	}{
		"third job moves": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 1), running(2, 1), held(3, 1)},
			want:    outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"burst disabled": {
			tenants: []Tenant{acme(Policy{Enabled: false, MaxGPUs: 4})},
			jobs:    []Job{running(1, 1), running(2, 1), held(3, 1)},
			want:    outcome{Refusals: map[int64]Reason{3: Disabled}, Ignored: map[Reason]int{}},
		},
		"cap counts jobs already on demand, pending ones too": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 2})},
			jobs:    []Job{running(1, 2), onDemand(5, 1, "RUNNING"), onDemand(6, 1, "PENDING"), held(3, 1)},
			want:    outcome{Refusals: map[int64]Reason{3: Cap}, Ignored: map[Reason]int{}},
		},
		"cap filled within the cycle, by priority": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 2})},
			jobs: []Job{running(1, 2), held(3, 1), with(held(4, 1), func(j *Job) { j.Priority = 500 }),
				with(held(7, 1), func(j *Job) { j.Priority = 50 })},
			want: outcome{Moves: []int64{4, 3}, Refusals: map[int64]Reason{7: Cap}, Ignored: map[Reason]int{}},
		},
		"cap zero allows none": {
			tenants: []Tenant{acme(Policy{Enabled: true})},
			jobs:    []Job{running(1, 2), held(3, 1)},
			want:    outcome{Refusals: map[int64]Reason{3: Cap}, Ignored: map[Reason]int{}},
		},
		"a smaller job fits where a larger did not": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 2})},
			jobs:    []Job{running(1, 2), with(held(3, 3), func(j *Job) { j.Priority = 200 }), held(4, 2)},
			want:    outcome{Moves: []int64{4}, Refusals: map[int64]Reason{3: Cap}, Ignored: map[Reason]int{}},
		},
		"budget: booked plus in flight plus the job": {
			// budget 10.00; booked 4.00; one on-demand GPU for 1h = 4.00
			// in flight; the candidate would add 4.00 -> 12.00 > 10.00.
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(1000)})},
			jobs:    []Job{running(1, 2), onDemand(5, 1, "RUNNING"), held(3, 1)},
			spent:   map[string]int64{"acme": 400},
			want:    outcome{Refusals: map[int64]Reason{3: Budget}, Ignored: map[Reason]int{}},
		},
		"budget: exactly reached is allowed": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(1200)})},
			jobs:    []Job{running(1, 2), onDemand(5, 1, "RUNNING"), held(3, 1)},
			spent:   map[string]int64{"acme": 400},
			want:    outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"budget consumed within the cycle": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(800)})},
			jobs:    []Job{running(1, 2), held(3, 1), held(4, 1), held(5, 1)},
			want:    outcome{Moves: []int64{5, 4}, Refusals: map[int64]Reason{3: Budget}, Ignored: map[Reason]int{}},
		},
		"no time limit uses the default runtime": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(400*24 - 1)})},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.TimeLimit = 0 })},
			want:    outcome{Refusals: map[int64]Reason{3: Budget}, Ignored: map[Reason]int{}},
		},
		"no budget: rates do not matter": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), held(3, 1)},
			rates:   Rates{PerGPUHour: map[string]pricing.Price{}, Minor: 2},
			want:    outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"budget without a rate": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(100000)})},
			jobs:    []Job{running(1, 2), held(3, 1)},
			rates:   Rates{PerGPUHour: map[string]pricing.Price{"a100": 1}, Minor: 2},
			want:    outcome{Refusals: map[int64]Reason{3: NoRate}, Ignored: map[Reason]int{}},
		},
		"opted out by comment": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.Comment = "gpubridge:noburst" })},
			want:    outcome{Refusals: map[int64]Reason{3: OptedOut}, Ignored: map[Reason]int{}},
		},
		"opted out by an explicit other QOS": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.QOS = "debug" })},
			want:    outcome{Refusals: map[int64]Reason{3: OptedOut}, Ignored: map[Reason]int{}},
		},
		"other QOS not held is ignored": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{with(held(3, 1), func(j *Job) { j.QOS = "debug"; j.Reason = "Priority" })},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotQuotaHeld: 1}},
		},
		"not ours": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{with(held(3, 1), func(j *Job) { j.Account = "physics"; j.QOS = "normal" })},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotOurs: 1}},
		},
		"other reasons are not quota holds": {
			tenants: []Tenant{acme(on)},
			jobs: []Job{running(1, 2),
				with(held(3, 1), func(j *Job) { j.Reason = "Resources" }),
				with(held(4, 1), func(j *Job) { j.Reason = "QOSMaxGRESPerUser" }),
				with(held(5, 1), func(j *Job) { j.Reason = "AssocGrpGRES" }),
				with(held(6, 1), func(j *Job) { j.Reason = "JobHeldUser" }),
				with(held(7, 1), func(j *Job) { j.Reason = "QOSMaxGRESPerJob" }),
			},
			want: outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotQuotaHeld: 5}},
		},
		"kin grp reasons qualify": {
			tenants: []Tenant{acme(on)},
			jobs: []Job{
				with(held(3, 1), func(j *Job) { j.Reason = "QOSGrpGRESRunMinutes" }),
				with(held(4, 1), func(j *Job) { j.Reason = "QOSGrpGRESMinutes" }),
			},
			want: outcome{Moves: []int64{4, 3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"stale reason: quota has room": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 1), held(3, 1)},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotQuotaHeld: 1}},
		},
		"unknown quota trusts the reason": {
			tenants: []Tenant{with2(acme(on), func(t *Tenant) { t.Quota = nil })},
			jobs:    []Job{held(3, 1)},
			want:    outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"on-demand jobs do not use the tenant quota": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 1), onDemand(5, 2, "RUNNING"), held(3, 1)},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotQuotaHeld: 1}},
		},
		"already in the on-demand QOS is never moved again": {
			tenants: []Tenant{acme(on)},
			jobs: []Job{running(1, 2), with(onDemand(5, 1, "PENDING"), func(j *Job) { j.Reason = "QOSGrpGRES" }),
				with(onDemand(6, 1, "PENDING"), func(j *Job) { j.Partition = "pool"; j.Reason = "Resources" })},
			want: outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"half moved (partition only) is moved again": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.Partition = "ondemand" })},
			want:    outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
		"other partitions are left alone": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.Partition = "pool,ondemand" })},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NotQuotaHeld: 1}},
		},
		"untyped request": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.GPUs = Request{"": 1} })},
			want:    outcome{Refusals: map[int64]Reason{}, Ignored: map[Reason]int{NoGPU: 1}},
		},
		"array counts its pending tasks": {
			tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 3})},
			jobs:    []Job{running(1, 2), with(held(3, 1), func(j *Job) { j.Tasks = 4 }), with(held(4, 1), func(j *Job) { j.Tasks = 3 })},
			want:    outcome{Moves: []int64{4}, Refusals: map[int64]Reason{3: Cap}, Ignored: map[Reason]int{}},
		},
		"move limit defers the rest": {
			tenants: []Tenant{acme(on)},
			jobs:    []Job{running(1, 2), held(3, 1), held(4, 1), held(5, 1)},
			cfg:     func(c *Config) { c.MaxMoves = 2 },
			want:    outcome{Moves: []int64{5, 4}, Refusals: map[int64]Reason{3: Deferred}, Ignored: map[Reason]int{}},
		},
		"MIG types": {
			tenants: []Tenant{acme(on)},
			jobs: []Job{with(running(1, 0), func(j *Job) { j.GPUs = Request{"1g.10gb": 7} }),
				with(held(3, 0), func(j *Job) { j.GPUs = Request{"1g.10gb": 2} })},
			want: outcome{Moves: []int64{3}, Refusals: map[int64]Reason{}, Ignored: map[Reason]int{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			r := rates
			if tc.rates.PerGPUHour != nil {
				r = tc.rates
			}
			p := Decide(Input{Now: t0, Config: c, Tenants: tc.tenants, Jobs: tc.jobs, Spent: tc.spent, Rates: r})
			if diff := cmp.Diff(tc.want, summarize(p)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func with2(t Tenant, f func(*Tenant)) Tenant { f(&t); return t }

func TestDecideMoveDetails(t *testing.T) {
	j := held(3, 1)
	j.AdminComment = "ticket 42"
	p := Decide(Input{Now: t0.Add(1500 * time.Millisecond), Config: cfg,
		Tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: cents(10000)})},
		Jobs:    []Job{running(1, 2), j}, Rates: Rates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit}, Minor: 2}})
	if len(p.Moves) != 1 {
		t.Fatalf("moves = %+v", p.Moves)
	}
	m := p.Moves[0]
	wantMarker := Marker{Moved: t0.Add(time.Second), Reason: "QOSGrpGRES", Partition: "pool", QOS: "t_acme", GPUs: "h100:1", Estimate: 400}
	if diff := cmp.Diff(wantMarker, m.Marker); diff != "" {
		t.Errorf("marker (-want +got)\n%s", diff)
	}
	if want := "ticket 42; " + wantMarker.String(); m.AdminComment != want {
		t.Errorf("admin comment = %q, want %q", m.AdminComment, want)
	}
	wantT := []TenantState{{Tenant: "acme", Enabled: true, MaxGPUs: 4, Budget: cents(10000), MovedGPUs: 1, MovedCost: 400}}
	if diff := cmp.Diff(wantT, p.Tenants); diff != "" {
		t.Errorf("tenants (-want +got)\n%s", diff)
	}
}

func TestDecideRefusalDetail(t *testing.T) {
	p := Decide(Input{Now: t0, Config: cfg,
		Tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 1, Budget: cents(1000)})},
		Jobs:    []Job{running(1, 2), onDemand(5, 1, "RUNNING"), held(3, 1)}, Rates: Rates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit}, Minor: 2}})
	want := []Refusal{{JobID: 3, Tenant: "acme", User: "alice", GPUs: Request{"h100": 1}, Reason: Cap,
		Detail: "needs 1 on-demand GPU(s); 1 of the cap of 1 in use", SlurmReason: "QOSGrpGRES"}}
	if diff := cmp.Diff(want, p.Refusals); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantB := []Bursting{{JobID: 5, Tenant: "acme", User: "alice", State: "RUNNING", GPUs: Request{"h100": 1},
		Estimate: 400, Priced: true, Moved: true, StartTime: t0.Add(-time.Minute),
		Marker: Marker{Moved: t0.Add(-time.Minute), Reason: "QOSGrpGRES", Partition: "pool", QOS: "t_acme", GPUs: "h100:1"}}}
	if diff := cmp.Diff(wantB, p.Bursting); diff != "" {
		t.Errorf("bursting (-want +got)\n%s", diff)
	}
}

// applyMoves returns the jobs as slurmctld would hold them after the moves.
func applyMoves(jobs []Job, p Plan) []Job {
	out := slices.Clone(jobs)
	for _, m := range p.Moves {
		for i := range out {
			if out[i].ID == m.Job.ID {
				out[i].Partition, out[i].QOS, out[i].AdminComment = cfg.OnDemandPartition, cfg.OnDemandQOS, m.AdminComment
			}
		}
	}
	return out
}

// TestDecideInvariants checks, over random clusters, what must always hold:
// the cap and the budget are never exceeded by the moves, only quota-held
// jobs of tenants with burst enabled move, and deciding again on the state
// after the moves moves nothing twice.
func TestDecideInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := Rates{PerGPUHour: map[string]pricing.Price{"h100": 4 * unit, "1g.10gb": 570_000_000}, Minor: 2}
	types := []string{"h100", "1g.10gb"}
	reasons := []string{"QOSGrpGRES", "QOSGrpGRES", "Priority", "Resources", "QOSMaxGRESPerUser"}
	for iter := range 2000 {
		var tenants []Tenant
		for i := range 3 {
			p := Policy{Enabled: rng.IntN(4) > 0, MaxGPUs: int64(rng.IntN(6))}
			if rng.IntN(2) == 0 {
				p.Budget = cents(int64(rng.IntN(5000)))
			}
			tenants = append(tenants, Tenant{Name: fmt.Sprintf("t%d", i), QOS: fmt.Sprintf("q%d", i),
				Quota: map[string]int64{"h100": int64(rng.IntN(3)), "1g.10gb": int64(rng.IntN(4))}, Policy: p})
		}
		var jobs []Job
		for id := range int64(30) {
			ti := rng.IntN(4) // 3 = not a tenant
			acct, qos := "other", "normal"
			if ti < 3 {
				acct, qos = tenants[ti].Name, tenants[ti].QOS
			}
			j := Job{ID: id + 1, User: "u", Account: acct, Partition: "pool", QOS: qos,
				GPUs: Request{types[rng.IntN(2)]: int64(1 + rng.IntN(2))}, TimeLimit: time.Duration(1+rng.IntN(120)) * time.Minute,
				Priority: int64(rng.IntN(10)), SubmitTime: t0.Add(-time.Duration(rng.IntN(1000)) * time.Second)}
			switch rng.IntN(3) {
			case 0:
				j.States, j.StartTime = []string{"RUNNING"}, t0.Add(-time.Minute)
				if rng.IntN(3) == 0 {
					j.Partition, j.QOS = "ondemand", "ondemand"
				}
			default:
				j.States, j.Reason = []string{"PENDING"}, reasons[rng.IntN(len(reasons))]
			}
			jobs = append(jobs, j)
		}
		spent := map[string]int64{"t0": int64(rng.IntN(2000))}
		in := Input{Now: t0, Config: cfg, Tenants: tenants, Jobs: jobs, Spent: spent, Rates: rates}
		p := Decide(in)
		byName := map[string]Tenant{}
		for _, tn := range tenants {
			byName[tn.Name] = tn
		}
		for _, m := range p.Moves {
			tn := byName[m.Tenant]
			if !tn.Policy.Enabled || !IsQuotaHold(m.Job.Reason) || m.Job.QOS != tn.QOS {
				t.Fatalf("iter %d: moved job %+v of tenant %+v", iter, m.Job, tn)
			}
		}
		for _, st := range p.Tenants {
			if st.MovedGPUs > 0 && st.OnDemandGPUs+st.MovedGPUs > st.MaxGPUs {
				t.Fatalf("iter %d: cap exceeded: %+v", iter, st)
			}
			if st.Budget != nil && st.MovedCost > 0 && st.Committed() > st.Budget.Units() {
				t.Fatalf("iter %d: budget exceeded: %+v", iter, st)
			}
		}
		// Level-triggered: after the moves, nothing moved is moved again.
		in.Jobs = applyMoves(jobs, p)
		again := Decide(in)
		moved := map[int64]bool{}
		for _, m := range p.Moves {
			moved[m.Job.ID] = true
		}
		for _, m := range again.Moves {
			if moved[m.Job.ID] {
				t.Fatalf("iter %d: job %d moved twice", iter, m.Job.ID)
			}
		}
	}
}

// TestBudgetFollowsTheCurrency: a budget written "2500.00" is 2500 yen with
// a JPY card and 2500 dinars with a KWD card (never 250,000 yen or 250
// dinars); a budget with more decimals than the currency has refuses the
// tenant's moves with the reason, never rounded.
func TestBudgetFollowsTheCurrency(t *testing.T) {
	cases := map[string]struct {
		budget   string
		currency string
		minor    int
		rate     int64 // per GPU-hour, major units
		gpus     int64 // one hour
		want     outcome
		detail   string
	}{
		"JPY within":       {budget: "2500.00", currency: "JPY", minor: 0, rate: 2000, gpus: 1, want: outcome{Moves: []int64{3}}},
		"JPY over":         {budget: "2500.00", currency: "JPY", minor: 0, rate: 3000, gpus: 1, want: outcome{Refusals: map[int64]Reason{3: Budget}}, detail: "estimated 3000 for 1h0m0s; 0 of the budget of 2500 committed"},
		"KWD within":       {budget: "2500.00", currency: "KWD", minor: 3, rate: 300, gpus: 2, want: outcome{Moves: []int64{3}}},
		"KWD over":         {budget: "2500.00", currency: "KWD", minor: 3, rate: 1300, gpus: 2, want: outcome{Refusals: map[int64]Reason{3: Budget}}, detail: "estimated 2600.000 for 1h0m0s; 0.000 of the budget of 2500.000 committed"},
		"KWD fils budget":  {budget: "0.005", currency: "KWD", minor: 3, rate: 0, gpus: 1, want: outcome{Moves: []int64{3}}},
		"yen with sen":     {budget: "2500.50", currency: "JPY", minor: 0, rate: 1, gpus: 1, want: outcome{Refusals: map[int64]Reason{3: Budget}}, detail: "the budget cannot be counted in the rate card's currency: 2500.50 in JPY: more decimals than the currency has (0); write it as a whole number"},
		"EUR as before":    {budget: "10.00", currency: "EUR", minor: 2, rate: 4, gpus: 2, want: outcome{Moves: []int64{3}}},
		"EUR just over":    {budget: "7.99", currency: "EUR", minor: 2, rate: 4, gpus: 2, want: outcome{Refusals: map[int64]Reason{3: Budget}}},
		"EUR with a fil":   {budget: "8.005", currency: "EUR", minor: 2, rate: 4, gpus: 2, want: outcome{Refusals: map[int64]Reason{3: Budget}}, detail: "8.005 in EUR: more decimals than the currency has (2); write it with at most 2 decimals"},
		"KWD three places": {budget: "8.005", currency: "KWD", minor: 3, rate: 4, gpus: 2, want: outcome{Moves: []int64{3}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := money.MustParse(tc.budget)
			p := Decide(Input{Now: t0, Config: cfg, Tenants: []Tenant{acme(Policy{Enabled: true, MaxGPUs: 4, Budget: &b})},
				Jobs:  []Job{running(1, 2), held(3, tc.gpus)},
				Rates: Rates{PerGPUHour: map[string]pricing.Price{"h100": pricing.Price(tc.rate * unit)}, Currency: tc.currency, Minor: tc.minor}})
			got := summarize(p)
			got.Ignored = nil
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if tc.detail != "" && (len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0].Detail, tc.detail)) {
				t.Errorf("refusals %+v, want detail %q", p.Refusals, tc.detail)
			}
			if st := p.Tenants[0]; st.Budget == nil || (st.BudgetErr == "" && st.Budget.Currency() != p.unitForTest()) {
				t.Errorf("tenant state budget %v (%s)", st.Budget, st.BudgetErr)
			}
		})
	}
}

func (p Plan) unitForTest() money.Currency { return money.Currency{Code: p.Currency, Minor: p.Minor} }
