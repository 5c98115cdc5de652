package tenant

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Marker begins the description of every Slurm account and QOS that
// gpubridge creates: "gpubridge: Acme ML research". It is how gpubridge
// tells its own objects from the site's, in Slurm itself, where every
// admin sees it (`sacctmgr show account`), and it survives the loss of
// gpubridge's database (`gpubridge import --marked` recovers the tenants).
// gpubridge modifies or deletes only marked objects (and the user
// associations and coordinators of marked accounts), and the objects of
// tenants adopted by `gpubridge import`, whose ownership the store records
// (their accounts keep the description they had; their QOS get marked).
const Marker = "gpubridge:"

// IsMarked reports whether a Slurm description carries the Marker.
func IsMarked(description string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(description)), Marker)
}

// Unmark strips the Marker from a description.
func Unmark(description string) string {
	d := strings.TrimSpace(description)
	if IsMarked(d) {
		d = strings.TrimSpace(d[len(Marker):])
	}
	return d
}

// Naming says how tenants' Slurm objects are named (cmd/gpubridge/config
// tenants.qosPrefix, tenants.onDemandQOS, bookings.reservationQOSSuffix,
// bookings.reservationPrefix).
type Naming struct {
	QOSPrefix   string
	OnDemandQOS string
	// ReservationQOSSuffix names each tenant's reservation QOS:
	// QOSPrefix + tenant + suffix (acme-resv). Empty: tenants get none.
	ReservationQOSSuffix string
	// ReservationPrefix names gpubridge's booking reservations (prefix +
	// booking id): the job_submit guard switches a tenant's job that names
	// one of them to the tenant's reservation QOS.
	ReservationPrefix string
}

// QOSName is the tenant QOS: QOSPrefix + tenant name.
func (n Naming) QOSName(tenant string) string { return n.QOSPrefix + tenant }

// ReservationQOSName is the tenant's reservation QOS (QOSPrefix + tenant +
// ReservationQOSSuffix), or "" when tenants get none. It has the flag
// REQUIRED_RESERVATION and no limits: a job may use it only inside a
// reservation its account may use, where the reservation bounds what it
// takes, and it does not count against the tenant's quota.
func (n Naming) ReservationQOSName(tenant string) string {
	if n.ReservationQOSSuffix == "" {
		return ""
	}
	return n.QOSPrefix + tenant + n.ReservationQOSSuffix
}

// QOSOwner returns the tenant a QOS name belongs to by these names (its
// tenant QOS or its reservation QOS), and false when the name carries no
// tenant (no QOS prefix, or nothing after it).
func (n Naming) QOSOwner(qos string) (string, bool) {
	o, ok := strings.CutPrefix(qos, n.QOSPrefix)
	if !ok || o == "" {
		return "", false
	}
	if n.ReservationQOSSuffix != "" {
		if base, isResv := strings.CutSuffix(o, n.ReservationQOSSuffix); isResv && base != "" {
			return base, true
		}
	}
	return o, true
}

// TRES is a set of trackable-resource limits keyed the way Slurm writes
// them: "gres/gpu:h100", "cpu", "mem" (MB).
type TRES map[string]int64

// String is Slurm's form, sorted: cpu=64,gres/gpu:h100=16. Empty is "".
func (t TRES) String() string {
	parts := make([]string, 0, len(t))
	for _, k := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, k+"="+strconv.FormatInt(t[k], 10))
	}
	return strings.Join(parts, ",")
}

// Equal compares two limit sets (nil equals empty).
func (t TRES) Equal(o TRES) bool { return maps.Equal(t, o) }

// QOS is a Slurm QOS as far as gpubridge manages it.
type QOS struct {
	Name        string
	Description string
	// GrpTRES limits the TRES all running jobs of the QOS hold together.
	GrpTRES TRES
	// SubmitBlocked is MaxSubmitJobsPerUser=0: Slurm refuses new
	// submissions with this QOS; running and pending jobs are untouched
	// (pending jobs still start).
	SubmitBlocked bool
	// Shared marks the on-demand QOS all tenants share: gpubridge creates
	// it when missing and never modifies or deletes it (the burst
	// controller owns its limits).
	Shared bool
	// RequiresReservation is Slurm's flag REQUIRED_RESERVATION: jobs may
	// use the QOS only inside a reservation (a tenant's reservation QOS).
	RequiresReservation bool
}

// Account is a Slurm account (child of root) with its cluster association.
type Account struct {
	Name         string
	Description  string
	Organization string
	// QOS and DefaultQOS are the account association's own QOS list
	// (sorted) and default: a tenant's account carries its tenant QOS, so
	// that nothing under it (a sub-account or a user association that
	// sets none) falls back to the cluster's (normal), which the tenant's
	// quota would not hold. Nil QOS: gpubridge leaves them as they are
	// (an adopted tenant's account).
	QOS        []string
	DefaultQOS string
}

// Assoc is a user's association with an account.
type Assoc struct {
	Account    string
	User       string
	QOS        []string // sorted
	DefaultQOS string
}

// Key names an association: "alice (acme)".
func (a Assoc) Key() string { return a.User + " (" + a.Account + ")" }

// Coord makes User a coordinator of Account.
type Coord struct {
	Account string
	User    string
}

// Key names a coordinator: "alice (acme)".
func (c Coord) Key() string { return c.User + " (" + c.Account + ")" }

// User is a Slurm user record; DefaultAccount is used when gpubridge has
// to create the user (a user with associations keeps their default).
type User struct {
	Name           string
	DefaultAccount string
}

// Objects is the set of Slurm objects that tenants project to, each list
// sorted by name.
type Objects struct {
	QOS      []QOS
	Accounts []Account
	Users    []User
	Assocs   []Assoc
	Coords   []Coord
}

// DefaultDescription and DefaultOrganization fill the Slurm account's
// description and organization (Slurm requires both) when the tenant has
// none. They are the same for every tenant on purpose: slurmrestd creates
// accounts with one request per distinct description and organization, so
// a thousand tenants without them are created in one request.
const (
	DefaultDescription  = "tenant"
	DefaultOrganization = "gpubridge"
)

// AccountDescription is what the Slurm account's description holds: the
// Marker and the tenant's description; for an adopted tenant, its
// description as it was in Slurm (the store records the ownership).
func AccountDescription(t Tenant) string {
	if t.Adopted && t.Description != "" {
		return t.Description
	}
	d := t.Description
	if d == "" {
		d = DefaultDescription
	}
	return Marker + " " + d
}

// Organization is the Slurm account's organization (an adopted tenant's is
// kept as it was).
func Organization(t Tenant) string {
	if t.Organization != "" {
		return t.Organization
	}
	return DefaultOrganization
}

// QOSDescription is what a tenant QOS's description holds.
func QOSDescription(tenant string) string { return Marker + " quota of tenant " + tenant }

// ReservationQOSDescription is what a tenant's reservation QOS's
// description holds.
func ReservationQOSDescription(tenant string) string {
	return Marker + " bookings of tenant " + tenant + " (jobs inside its reservations)"
}

// OnDemandDescription is the shared on-demand QOS's description.
const OnDemandDescription = Marker + " shared on-demand tier"

// GrpTRES is the tenant's limits in Slurm's terms.
func GrpTRES(t Tenant) TRES {
	out := TRES{}
	for typ, n := range t.GPUs {
		out[GPUTRES(typ)] = n
	}
	if t.CPUs != nil {
		out["cpu"] = *t.CPUs
	}
	if t.Memory != nil {
		out["mem"] = int64(*t.Memory)
	}
	return out
}

// Project returns the Slurm objects that ts need: per tenant an account
// under root, a QOS with its GrpTRES (blocked for new submissions while the
// tenant is deleting), a reservation QOS (REQUIRED_RESERVATION, no limits;
// blocked likewise) when n names one, an association per user with QOS
// list [tenant QOS, reservation QOS, on-demand QOS] and the tenant QOS as
// default, the same QOS list and default on the account's own
// association (a tenant gpubridge created; an adopted tenant's account
// keeps the site's); plus the shared on-demand QOS once. Admins are not
// made Slurm coordinators (Coords stays empty; issue 25): a coordinator
// may add sub-accounts and users under the account, outside gpubridge's
// users and, before the account carried the tenant QOS, outside its
// quota. A tenant admin acts through gpubridge (docs/tenants.md). Every tenant gets its reservation QOS, bookings or not: a tenant
// that books later needs no change to its associations while its jobs
// run, and the QOS is of no use outside a reservation.
func Project(ts []Tenant, n Naming) Objects {
	var o Objects
	if n.OnDemandQOS != "" {
		o.QOS = append(o.QOS, QOS{Name: n.OnDemandQOS, Description: OnDemandDescription, GrpTRES: TRES{}, Shared: true})
	}
	firstAccount := map[string]string{}
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range sorted {
		q := n.QOSName(t.Name)
		o.QOS = append(o.QOS, QOS{Name: q, Description: QOSDescription(t.Name), GrpTRES: GrpTRES(t), SubmitBlocked: t.IsDeleting()})
		acct := Account{Name: t.Name, Description: AccountDescription(t), Organization: Organization(t)}
		qosList := []string{q}
		if rq := n.ReservationQOSName(t.Name); rq != "" {
			o.QOS = append(o.QOS, QOS{Name: rq, Description: ReservationQOSDescription(t.Name), GrpTRES: TRES{}, SubmitBlocked: t.IsDeleting(), RequiresReservation: true})
			qosList = append(qosList, rq)
		}
		if n.OnDemandQOS != "" && n.OnDemandQOS != q {
			qosList = append(qosList, n.OnDemandQOS)
		}
		slices.Sort(qosList)
		if !t.Adopted {
			acct.QOS, acct.DefaultQOS = slices.Clone(qosList), q
		}
		o.Accounts = append(o.Accounts, acct)
		for _, u := range sortedUnique(t.Users) {
			o.Assocs = append(o.Assocs, Assoc{Account: t.Name, User: u, QOS: slices.Clone(qosList), DefaultQOS: q})
			if _, ok := firstAccount[u]; !ok {
				firstAccount[u] = t.Name
			}
		}
	}
	for _, u := range slices.Sorted(maps.Keys(firstAccount)) {
		o.Users = append(o.Users, User{Name: u, DefaultAccount: firstAccount[u]})
	}
	slices.SortFunc(o.QOS, func(a, b QOS) int { return strings.Compare(a.Name, b.Name) })
	return o
}
