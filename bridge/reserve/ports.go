package reserve

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors of the ports, checked with errors.Is.
var (
	// ErrNotFound: no booking (or maintenance window) with that id.
	ErrNotFound = errors.New("not found")
	// ErrUnknownTenant: Tenants knows no such tenant (or it is being deleted).
	ErrUnknownTenant = errors.New("unknown tenant")
	// ErrInUse: Slurm refused to delete or shrink a reservation while jobs
	// run inside it (error 2055).
	ErrInUse = errors.New("reservation in use")
	// ErrBusy: Slurm has no room for a reservation (2016 "nodes are busy",
	// 2058 "overlaps with another reservation").
	ErrBusy = errors.New("no room in Slurm")
	// ErrChanged: the booking changed (another modify, a cancel, the
	// projector) between the read a change was computed from and its
	// write; nothing was written. Read it again and retry.
	ErrChanged = errors.New("changed since you read it; read it again and retry")
)

// Filter selects bookings. Zero fields select everything.
type Filter struct {
	// Resources: bookings of any of these resources.
	Resources []Resource
	Tenant    string
	// From, To: bookings whose span (Booking.Span) overlaps [From, To);
	// cancelled bookings Slurm holds nothing for have an empty span and are
	// left out when either bound is set.
	From, To time.Time
	// IDs: only these bookings.
	IDs []int64
}

// Store keeps one cluster's bookings and maintenance windows. Every write
// records an audit row in the same transaction.
type Store interface {
	// Atomic runs fn in one transaction that holds the admission lock of
	// each resource (locked in the given order; pass them sorted). Two
	// Atomic calls sharing a resource never overlap, across processes and
	// hosts; fn's reads see every commit made before its locks were granted.
	// An error from fn rolls everything back and is returned as is.
	Atomic(ctx context.Context, locks []Resource, fn func(Tx) error) error
	// Get returns one booking, or ErrNotFound.
	Get(ctx context.Context, id int64) (Booking, error)
	// List returns the bookings f selects, by start then id.
	List(ctx context.Context, f Filter) ([]Booking, error)
	// Maintenance returns every maintenance window, by start then id.
	Maintenance(ctx context.Context) ([]Maintenance, error)
	// Project records what the projector found or made in Slurm for a
	// booking: its state, what Slurm holds and why (note). It writes an
	// audit row when the state or what is held changes.
	Project(ctx context.Context, actor string, id int64, state State, held Held, note string) error
	// Placements returns, per booking, the node lists Project recorded
	// with when each began (a row each time the booking is on other nodes
	// than its last row says; an empty Held.Nodes is none), oldest first.
	// Bookings never placed since the history began have none.
	Placements(ctx context.Context) (map[int64][]Placement, error)
	// Stored counts the bookings ever stored for the cluster, cancelled and
	// ended included (the projector's guard against an empty store).
	Stored(ctx context.Context) (int, error)
}

// Tx is the store inside Store.Atomic.
type Tx interface {
	// Get returns one booking and holds its row until the transaction
	// ends (a locking read: SELECT ... FOR UPDATE), so that no other
	// change of it interleaves with the one computed from it; ErrNotFound.
	Get(ctx context.Context, id int64) (Booking, error)
	Bookings(ctx context.Context, f Filter) ([]Booking, error)
	Maintenance(ctx context.Context) ([]Maintenance, error)
	// Insert stores a new booking and returns it with its id.
	Insert(ctx context.Context, actor string, b Booking) (Booking, error)
	// Update replaces a booking's window, count, purpose, state, cancel
	// fields and recorded GPUs per node (PerNode; never what Slurm holds:
	// that is Project's), under action
	// ("modify", "cancel") in the audit log. It writes only when the
	// stored row still has b.Version (the version b was read at), and adds
	// one to it; otherwise it writes nothing and returns an error matching
	// ErrChanged.
	Update(ctx context.Context, actor, action string, b Booking) error
	InsertMaintenance(ctx context.Context, actor string, m Maintenance) (Maintenance, error)
	// DeleteMaintenance removes a window and returns it, or ErrNotFound.
	DeleteMaintenance(ctx context.Context, actor string, id int64) (Maintenance, error)
}

// Source reads the cluster: the pool's nodes and every reservation.
type Source interface {
	Inventory(ctx context.Context) (Inventory, error)
}

// Tenants tells whether a tenant exists and what it may book.
type Tenants interface {
	// BookingTenant returns what bookings need of a tenant. A missing
	// tenant (or one being deleted) is an error matching ErrUnknownTenant.
	BookingTenant(ctx context.Context, tenant string) (TenantInfo, error)
}

// TenantInfo is what bookings need of a tenant.
type TenantInfo struct {
	// Policy is what the tenant may book, when Own: its spec's keys over
	// Settings.DefaultPolicy. Without Own, Settings.DefaultPolicy applies.
	Policy Policy
	Own    bool
	// GPUTypes are the GPU types and MIG profiles the tenant's jobs may
	// request (its quota's: the job_submit guard refuses the others, inside
	// bookings too); nil when not known, and then not checked.
	GPUTypes []string
	// Quota is the tenant's quota, GPUs per type or MIG profile (nil when
	// not known): a policy that sets no maxGPUs is bounded by it
	// (Service.Policy), so no tenant books more than it may run.
	Quota map[string]int
}

// ReservationSpec is a gpubridge reservation as the projector wants it.
type ReservationSpec struct {
	Name     string
	Accounts []string
	Start    time.Time
	End      time.Time
	// GPUType and Count for a GPU booking (TRES gres/gpu:<type>=<count>);
	// Nodes for a whole-node booking.
	GPUType string
	Count   int
	Nodes   []string
	// Flags to send: IGNORE_JOBS always; on update, NO_<flag> clears one.
	Flags []string
}

// Slurm is what the projector needs from slurmctld.
type Slurm interface {
	Source
	// CreateReservation creates a reservation; ErrBusy when Slurm has no room.
	CreateReservation(ctx context.Context, r ReservationSpec) error
	// UpdateReservation changes an existing reservation's accounts, times
	// and flags (Slurm cannot change its GPU count or nodes).
	UpdateReservation(ctx context.Context, r ReservationSpec) error
	// DeleteReservation deletes one; ErrInUse while jobs run inside, nil
	// when it is already gone.
	DeleteReservation(ctx context.Context, name string) error
}
