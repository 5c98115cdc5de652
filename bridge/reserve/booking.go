package reserve

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is what a booking holds.
type Kind string

const (
	// KindGPU: Count GPUs of one type or MIG profile (GPUType), wherever
	// Slurm places them.
	KindGPU Kind = "gpu"
	// KindNode: Count whole nodes of a node class (NodeClass), with all
	// their GPUs.
	KindNode Kind = "node"
)

// State is where a booking stands. Requested, scheduled, active and ended
// follow from the clock and the Slurm projection; cancelled is final; at-risk
// means the booking may not be honoured (a node under it is down, or Slurm
// refused its reservation) and says why in Booking.Note.
type State string

const (
	StateRequested State = "requested" // admitted; no Slurm reservation yet (it is made LeadTime ahead)
	StateScheduled State = "scheduled" // the Slurm reservation exists; the window has not started
	StateActive    State = "active"    // inside the window, the reservation exists
	StateEnded     State = "ended"     // the window is over
	StateCancelled State = "cancelled" // deleted by an admin
	StateAtRisk    State = "at-risk"   // see Note
)

// States lists every state, in lifecycle order.
var States = []State{StateRequested, StateScheduled, StateActive, StateEnded, StateCancelled, StateAtRisk}

// Resource names what capacity a booking takes: "gpu:<type>" or
// "node:<class>".
type Resource string

// GPU is the resource of a GPU type or MIG profile.
func GPU(typ string) Resource { return Resource("gpu:" + typ) }

// NodeClass is the resource of a node class (counted in whole nodes).
func NodeClass(class string) Resource { return Resource("node:" + class) }

// Split returns the kind and the name of a resource.
func (r Resource) Split() (Kind, string) {
	k, n, _ := strings.Cut(string(r), ":")
	return Kind(k), n
}

// Unit is what the resource counts, for messages: "h100" or "node(s) of dgx".
func (r Resource) Unit() string {
	k, n := r.Split()
	if k == KindNode {
		return "node(s) of class " + n
	}
	return n
}

// Booking is a tenant's claim on capacity for a half-open window
// [Start, End) in UTC, at second resolution.
type Booking struct {
	ID        int64  `json:"id"`
	Tenant    string `json:"tenant"`
	Kind      Kind   `json:"kind"`
	GPUType   string `json:"gpuType,omitempty"`   // KindGPU
	NodeClass string `json:"nodeClass,omitempty"` // KindNode
	Count     int    `json:"count"`
	// PerNode is, for a node booking, the GPUs per node of its class by
	// type as admission counted them from the pool (Settings.classPerNode)
	// when it admitted the booking, or re-admitted it on a modify: what
	// the booking is charged for, whatever the cluster holds later. An
	// empty map is a class without GPUs; nil is a booking stored before
	// the figure was recorded (it is not charged: see cmd/gpubridge/app).
	PerNode map[string]int `json:"perNode,omitempty"`
	Start   time.Time      `json:"start"`
	End     time.Time      `json:"end"`
	Purpose string         `json:"purpose,omitempty"`
	// State is the state last recorded (by admission or the projector);
	// StateAt derives the present one.
	State     State     `json:"state"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Cancelled bookings keep their row (and the audit trail); a cancelled
	// booking still counts for what its Slurm reservation holds until the
	// projector has deleted it.
	CancelledAt time.Time `json:"cancelledAt,omitzero"`
	CancelledBy string    `json:"cancelledBy,omitempty"`
	// Held is what Slurm holds for the booking, as last projected.
	Held Held `json:"held,omitzero"`
	// Note says why a booking is at risk or what the projector waits for
	// ("delete refused while jobs run inside; retried").
	Note string `json:"note,omitempty"`
	// Version counts the changes of the stored row (Tx.Update and
	// Store.Project each add one): Tx.Update writes only over the version
	// it was read at, else ErrChanged. Not shown: an internal detail.
	Version int64 `json:"-"`
}

// Held is the Slurm reservation of a booking, as the projector last made or
// saw it. While Slurm lags the ledger (a resize that waits for jobs to end,
// a cancel refused while jobs run inside), the booking commits the larger of
// the two at every instant, so that the sum of what Slurm holds never
// exceeds capacity either.
type Held struct {
	Reservation string    `json:"reservation,omitempty"`
	Start       time.Time `json:"start,omitzero"`
	End         time.Time `json:"end,omitzero"`
	Count       int       `json:"count,omitempty"` // GPUs (KindGPU) or nodes (KindNode)
	Nodes       []string  `json:"nodes,omitempty"` // where Slurm placed it, when known
	// Once the reservation of an ended or cancelled booking is gone, Held
	// keeps only Nodes, where it last was (IsZero: Slurm holds nothing):
	// the node health credits of a drain in its window need them.
}

// IsZero reports whether Slurm holds nothing for the booking.
func (h Held) IsZero() bool { return h.Reservation == "" }

// Placed is where the booking's capacity is, as its placement history
// counts it (Store.Placements): the nodes, while the reservation holds some
// of what was booked there. A reservation Slurm moved off a drained node to
// one without the booked GPUs (slurmctld does, keeping the TRES only where
// the new node has them free) holds none of them there: the booking is
// still where it last held its GPUs, and a drain of that node took them.
func (h Held) Placed() []string {
	if h.Count <= 0 {
		return nil
	}
	return h.Nodes
}

// Placement is where a booking's reservation held nodes from Since on,
// until the booking's next placement (Store.Placements).
type Placement struct {
	Since time.Time `json:"since"`
	Nodes []string  `json:"nodes,omitempty"`
}

// Resource is what the booking takes.
func (b Booking) Resource() Resource {
	if b.Kind == KindNode {
		return NodeClass(b.NodeClass)
	}
	return GPU(b.GPUType)
}

// What is the booked capacity as the CLI writes it: h100:8 or node:dgx:2.
func (b Booking) What() string {
	if b.Kind == KindNode {
		return "node:" + b.NodeClass + ":" + strconv.Itoa(b.Count)
	}
	return b.GPUType + ":" + strconv.Itoa(b.Count)
}

// Duration is the length of the window.
func (b Booking) Duration() time.Duration { return b.End.Sub(b.Start) }

// Cancelled reports whether the booking was cancelled.
func (b Booking) Cancelled() bool { return b.State == StateCancelled }

// Span is the interval in which the booking commits anything: its window,
// widened by what Slurm still holds; a cancelled booking spans only what
// Slurm holds (empty when nothing).
func (b Booking) Span() (time.Time, time.Time) {
	if b.Cancelled() {
		if b.Held.IsZero() {
			return b.Start, b.Start
		}
		return b.Held.Start, b.Held.End
	}
	s, e := b.Start, b.End
	if !b.Held.IsZero() {
		if b.Held.Start.Before(s) {
			s = b.Held.Start
		}
		if b.Held.End.After(e) {
			e = b.Held.End
		}
	}
	return s, e
}

// StateAt is the booking's state at now: cancelled and at-risk as recorded;
// otherwise ended after the window, active inside it when Slurm holds it
// (at-risk when it does not), scheduled when Slurm holds it ahead of the
// window, else requested.
func (b Booking) StateAt(now time.Time) State {
	switch {
	case b.State == StateCancelled:
		return StateCancelled
	case !now.Before(b.End):
		return StateEnded
	case b.State == StateAtRisk:
		return StateAtRisk
	case b.Held.IsZero():
		if !now.Before(b.Start) {
			return StateAtRisk
		}
		return StateRequested
	case !now.Before(b.Start):
		return StateActive
	default:
		return StateScheduled
	}
}

// Window writes [start, end) for messages.
func Window(start, end time.Time) string {
	return FormatTime(start, Zone{}, false) + ".." + FormatTime(end, Zone{}, false)
}

// Summary describes the booking in one line for messages, in full.
func (b Booking) Summary() string {
	s := fmt.Sprintf("booking %d (%s, %s, %s", b.ID, b.Tenant, b.What(), Window(b.Start, b.End))
	if b.Purpose != "" {
		s += fmt.Sprintf(", %q", b.Purpose)
	}
	return s + ")"
}
