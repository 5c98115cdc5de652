package credit

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
	"github.com/gpubridge/gpubridge/internal/money"
)

// Policy is when a loss is credited (config health.credits, next stage).
type Policy struct {
	Enabled bool
	// MinLoss: a loss below this amount (written without a currency,
	// compared exactly with the loss in its currency) yields no credit;
	// a loss of less than one minor unit never does.
	MinLoss money.Amount
	// KillWindow: a job that ended other than COMPLETED within this after
	// gpubridge stopped its node (a fatal check's DOWN) was killed by it.
	KillWindow time.Duration
}

// below reports whether the loss a credit gives back (credit is
// negative) is under MinLoss.
func (p Policy) below(credit money.Amount) bool {
	loss := money.New(-credit.Units(), money.Currency{Minor: credit.Currency().Minor})
	n, err := loss.Cmp(p.MinLoss)
	return err != nil || n < 0
}

// JobRun is a tenant's job run that ended, with what the ledger charged
// for it. (Cluster, JobID, Submit) is the run, as in the ledger.
type JobRun struct {
	Cluster string
	JobID   int64
	Submit  time.Time
	Tenant  string
	Account string
	State   string // slurmdbd's: COMPLETED, NODE_FAIL, CANCELLED, FAILED, TIMEOUT, ...
	Nodes   []string
	Start   time.Time
	End     time.Time
	Charged money.Amount // every ledger line of the run
}

// Booking is a tenant's booked GPUs on one node for a window, at the rate
// it was charged (bridge/reserve's bookings, per node).
type Booking struct {
	ID      int64
	Tenant  string
	Account string // the tenant's Slurm account
	Node    string
	GPUs    int
	// Start, End: the part of the booking's window its GPUs were on Node.
	Start time.Time
	End   time.Time
	// Part numbers the booking's parts on Node, 0 for the first: a
	// booking moved off a node and back has two, and the later ones'
	// credits carry it in their keys.
	Part int
	// GPUType is the booked type on Node (a whole-node booking of a node
	// with MIG profiles is one Booking per profile); when set it is part of
	// the credit's key.
	GPUType string
	// RatePerGPUHour is the booked rate.
	RatePerGPUHour money.Amount
	// Price, when set, prices the booking's GPUs on Node over [from, to)
	// as the booking's charge is priced (the rate card's booked tier,
	// accounting/billing), and RatePerGPUHour is not used. A loss it
	// cannot price is not credited: never a wrong amount.
	Price func(from, to time.Time) (money.Amount, error)
}

// Drain is a node held by gpubridge: from the health event that drained it
// to the one that returned it to service (End zero: still held).
type Drain struct {
	EventID int64
	Node    string
	Start   time.Time
	End     time.Time
	Fatal   bool
	Reason  string
}

// Drains reads the held intervals from the nodes' health events (in
// order): an interval opens at an event into Drained (from a state in
// service) and closes at the event back to Serving.
func Drains(events []health.Event) []Drain {
	evs := slices.Clone(events)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	open := map[string]int{}
	var out []Drain
	for _, e := range evs {
		i, isOpen := open[e.Node]
		switch {
		case e.To == health.Drained && e.From.InService() && !isOpen:
			open[e.Node] = len(out)
			out = append(out, Drain{EventID: e.ID, Node: e.Node, Start: e.At, Fatal: e.Fatal, Reason: e.Reason})
		case isOpen && (e.To.InService() || e.To == health.External):
			// Back in service, or let go to a person: gpubridge's hold ends.
			out[i].End = e.At
			delete(open, e.Node)
		}
	}
	return out
}

// Kind says why a credit is owed.
type Kind string

const (
	// NodeFail: the job ended NODE_FAIL.
	NodeFail Kind = "node-fail"
	// Killed: gpubridge stopped the job's node (a fatal check).
	Killed Kind = "killed-by-drain"
	// BookingLost: booked GPU-hours lost while the booked node was held.
	BookingLost Kind = "booking-lost"
)

// Credit is one credit line for the ledger.
type Credit struct {
	// Key is the idempotency key: the ledger writes each key once, so
	// computing and writing again adds nothing.
	Key     string
	Kind    Kind
	Tenant  string
	Account string
	Amount  money.Amount // negative
	// EventID is the health event the loss links to; 0 for a NODE_FAIL
	// that no gpubridge drain explains.
	EventID    int64
	Node       string
	JobID      int64
	Submit     time.Time
	BookingID  int64
	GPUSeconds int64 // booked GPU-seconds lost (BookingLost)
	// Start and End bound the loss: the run (NodeFail, Killed), the
	// booked window lost (BookingLost). The ledger books the credit in the
	// period of End (the first open one from there).
	Start, End time.Time
	Reason     string
}

// Compute returns the credits owed as of now: exactly one per job run that
// ended NODE_FAIL or was killed by a gpubridge stop (its charged amount),
// and one per booking and drain for the booked GPU-seconds the drain took
// (priced as the booking's charge by Booking.Price, or at the booked rate
// rounded down: never more than was charged). A
// booking's loss is credited once it is final: the drain closed, or the
// booking ended. Losses below MinAmount, jobs without a tenant and runs
// charged nothing yield none.
func Compute(p Policy, now time.Time, jobs []JobRun, bookings []Booking, drains []Drain) []Credit {
	if !p.Enabled {
		return nil
	}
	var out []Credit
	seen := map[string]bool{}
	add := func(c Credit) {
		if -c.Amount.Units() < 1 || p.below(c.Amount) || seen[c.Key] {
			return
		}
		seen[c.Key] = true
		out = append(out, c)
	}
	for _, j := range jobs {
		if j.Tenant == "" || j.Charged.Sign() <= 0 {
			continue
		}
		c := Credit{Key: fmt.Sprintf("health-credit:job:%s:%d:%d", j.Cluster, j.JobID, j.Submit.Unix()), Tenant: j.Tenant,
			Account: j.Account, Amount: money.New(-j.Charged.Units(), j.Charged.Currency()), JobID: j.JobID, Submit: j.Submit,
			Start: j.Start, End: j.End}
		d, found := cause(j, drains, p.KillWindow)
		switch {
		case j.State == "NODE_FAIL":
			c.Kind, c.Reason = NodeFail, "job ended NODE_FAIL"
		case found && d.Fatal && j.State != "COMPLETED" && j.End.Sub(d.Start) <= p.KillWindow:
			c.Kind, c.Reason = Killed, "killed when gpubridge stopped the node"
		default:
			continue
		}
		if found {
			c.EventID, c.Node = d.EventID, d.Node
			c.Reason += ": " + d.Reason
		}
		add(c)
	}
	for _, b := range bookings {
		for _, d := range drains {
			if d.Node != b.Node {
				continue
			}
			end := d.End
			if end.IsZero() {
				if now.Before(b.End) {
					continue // still held and still booked: not final yet
				}
				end = b.End
			}
			from, to := later(d.Start, b.Start), earlier(end, b.End)
			if !to.After(from) {
				continue
			}
			lost := int64(to.Sub(from)/time.Second) * int64(b.GPUs)
			amount, ok := bookedLoss(b, from, to, lost)
			if !ok {
				continue // beyond int64 or unpriced: no credit rather than a wrong one
			}
			key := fmt.Sprintf("health-credit:booking:%d:event:%d", b.ID, d.EventID)
			if b.GPUType != "" {
				key += ":" + b.GPUType
			}
			if b.Part > 0 {
				key += fmt.Sprintf(":part:%d", b.Part)
			}
			add(Credit{Key: key, Kind: BookingLost, Tenant: b.Tenant, Account: b.Account,
				Amount: amount, EventID: d.EventID, Node: b.Node, BookingID: b.ID,
				GPUSeconds: lost, Start: from, End: to, Reason: "booked GPUs lost while gpubridge held the node: " + d.Reason})
		}
	}
	return out
}

// cause finds the latest drain of one of the job's nodes that started
// while the job ran, or within window after it ended (slurmctld records
// the end a little after the stop).
func cause(j JobRun, drains []Drain, window time.Duration) (Drain, bool) {
	var best Drain
	found := false
	for _, d := range drains {
		if !slices.Contains(j.Nodes, d.Node) || d.Start.Before(j.Start) || d.Start.After(j.End.Add(window)) {
			continue
		}
		if !found || d.Start.After(best.Start) {
			best, found = d, true
		}
	}
	return best, found
}

// lostUnits is gpuSeconds x rate per GPU-hour / 3600, rounded down, in
// minor units; false when it does not fit an int64.
// bookedLoss is the credit (negative) for b's lost GPU-seconds over
// [from, to): priced by b.Price, else at b.RatePerGPUHour.
func bookedLoss(b Booking, from, to time.Time, lost int64) (money.Amount, bool) {
	if b.Price != nil {
		a, err := b.Price(from, to)
		if err != nil || a.Sign() < 0 {
			return money.Amount{}, false
		}
		return money.New(-a.Units(), a.Currency()), true
	}
	units, ok := lostUnits(lost, b.RatePerGPUHour.Units())
	return money.New(-units, b.RatePerGPUHour.Currency()), ok
}

func lostUnits(gpuSeconds, rate int64) (int64, bool) {
	v := new(big.Int).Mul(big.NewInt(gpuSeconds), big.NewInt(rate))
	v.Quo(v, big.NewInt(3600))
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Ledger is where credit lines go (accounting/billing.CreditLedger over
// the ledger): it writes each Key once (a second write of the same key
// adds nothing) and returns the credits that were new.
type Ledger interface {
	WriteCredits(ctx context.Context, cs []Credit) ([]Credit, error)
}

// Source reads what Compute needs for a window (the ledger's charged job
// runs with their end states, the bookings, gpubridge's health events).
type Source interface {
	EndedRuns(ctx context.Context, from, to time.Time) ([]JobRun, error)
	Bookings(ctx context.Context, from, to time.Time) ([]Booking, error)
	Events(ctx context.Context, since time.Time) ([]health.Event, error)
}

// Observer receives what each run of the job did (credit metrics).
type Observer interface {
	// Ran is called after each run: the credits written (new ones only)
	// and the run's error.
	Ran(written []Credit, err error)
}

// Job is the periodic credit job: it computes the credits of a lookback
// window and writes them; a rerun writes nothing new.
type Job struct {
	Source   Source
	Ledger   Ledger
	Policy   Policy
	Lookback time.Duration // default 7 days
	Now      func() time.Time
	Observer Observer // optional
}

// Report is what one run of the job did.
type Report struct {
	From, To time.Time
	Runs     int // ended runs read (not COMPLETED)
	Computed int // credits owed in the window (written before or now)
	Written  []Credit
}

// Name is the job's name for the daemon.
func (j *Job) Name() string { return "health-credits" }

// Run computes and writes the window's credits.
func (j *Job) Run(ctx context.Context) error {
	_, err := j.RunOnce(ctx)
	return err
}

// RunOnce is Run, reporting what it computed and wrote.
func (j *Job) RunOnce(ctx context.Context) (Report, error) {
	r, err := j.run(ctx)
	if j.Observer != nil {
		j.Observer.Ran(r.Written, err)
	}
	return r, err
}

func (j *Job) run(ctx context.Context) (Report, error) {
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	look := j.Lookback
	if look <= 0 {
		look = 7 * 24 * time.Hour
	}
	from := now.Add(-look)
	rep := Report{From: from, To: now}
	if !j.Policy.Enabled {
		return rep, nil
	}
	runs, err := j.Source.EndedRuns(ctx, from, now)
	if err != nil {
		return rep, fmt.Errorf("credits: job runs: %w", err)
	}
	rep.Runs = len(runs)
	books, err := j.Source.Bookings(ctx, from, now)
	if err != nil {
		return rep, fmt.Errorf("credits: bookings: %w", err)
	}
	// Events from before the window: a drain may have started earlier.
	evs, err := j.Source.Events(ctx, from.Add(-look))
	if err != nil {
		return rep, fmt.Errorf("credits: health events: %w", err)
	}
	cs := Compute(j.Policy, now, runs, books, Drains(evs))
	rep.Computed = len(cs)
	if len(cs) == 0 {
		return rep, nil
	}
	written, err := j.Ledger.WriteCredits(ctx, cs)
	if err != nil {
		return rep, fmt.Errorf("credits: write %d line(s): %w", len(cs), err)
	}
	rep.Written = written
	return rep, nil
}
