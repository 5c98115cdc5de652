package lease

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// Lease is one claim of this process on a named lease. Each Lease has a
// holder identity of its own, so two Leases of one name exclude each other
// even in one process.
type Lease struct {
	db     *sql.DB
	name   string
	holder string
	info   string
	ttl    time.Duration
	log    *slog.Logger
	now    func() time.Time // the local monotonic clock

	mu       sync.Mutex
	epoch    int64     // 0 when not held
	deadline time.Time // on now's clock: use the lease only before it
}

// Options describe a Lease.
type Options struct {
	// Info tells people who holds the lease ("gpubridge apply by alice
	// (pid 4242 on head1)"): the message of a taker that waits names it.
	Info string
	// TTL is how long a take or renewal keeps the lease in database time.
	TTL time.Duration
	// Logger receives the refused fenced writes; nil discards them.
	Logger *slog.Logger
}

// New returns a Lease of name on db, not yet taken.
func New(db *sql.DB, name string, o Options) *Lease {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Lease{db: db, name: name, holder: newHolderID(), info: truncate(o.Info, 255), ttl: o.TTL,
		log: o.Logger.With("lease", name), now: time.Now}
}

// Name is the lease's name.
func (l *Lease) Name() string { return l.name }

// TTL is the lease's time to live in database time.
func (l *Lease) TTL() time.Duration { return l.ttl }

// Epoch is the epoch of the last take, 0 while not held.
func (l *Lease) Epoch() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// Valid reports whether the lease is held and its renew deadline has not
// passed on the local clock.
func (l *Lease) Valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch != 0 && l.now().Before(l.deadline)
}

// Deadline is the instant (on the local monotonic clock) after which the
// holder must not use the lease unless a renewal succeeds first; zero
// while not held.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// RenewDeadline is how long after the start of its last successful take or
// renewal a holder may still use a lease of ttl: two thirds of it, so that
// it stops before the lease can expire in the database.
func RenewDeadline(ttl time.Duration) time.Duration { return ttl * 2 / 3 }

// RenewEvery is how often a holder renews a lease of ttl: a quarter of it,
// so one failed renewal passes before the renew deadline.
func RenewEvery(ttl time.Duration) time.Duration { return ttl / 4 }

var (
	// ErrHeld: another holder has the lease (a *HeldError says who).
	ErrHeld = errors.New("lease held by another holder")
	// ErrLost: a renewal found the lease expired or taken over.
	ErrLost = errors.New("lease lost: it expired or another holder took it over")
	// ErrFenced: a fenced write was refused, its transaction must roll back.
	ErrFenced = errors.New("fenced write refused: this process no longer holds the lease")
)

// Holder describes who holds a lease.
type Holder struct {
	Info  string
	Epoch int64
	Since time.Time     // taken at, database time (UTC)
	Left  time.Duration // until it expires, unless renewed
}

// String is "<info> since <taken at>", as a waiting writer shows it.
func (h Holder) String() string {
	return fmt.Sprintf("%s since %s", h.Info, h.Since.UTC().Format("2006-01-02T15:04:05Z"))
}

// HeldError is ErrHeld with the holder.
type HeldError struct {
	Name   string
	Holder Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lease %s is held by %s (epoch %d, expires in %s unless renewed)",
		e.Name, e.Holder, e.Holder.Epoch, e.Holder.Left.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// forget marks the lease as not held.
func (l *Lease) forget() {
	l.mu.Lock()
	l.epoch, l.deadline = 0, time.Time{}
	l.mu.Unlock()
}

// granted records a take or renewal that started at start.
func (l *Lease) granted(epoch int64, start time.Time) {
	l.mu.Lock()
	l.epoch, l.deadline = epoch, start.Add(RenewDeadline(l.ttl))
	l.mu.Unlock()
}

// newHolderID names one Lease uniquely: host, pid and 64 random bits.
func newHolderID() string {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", truncate(host, 60), os.Getpid(), hex.EncodeToString(b[:]))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
