package tenant

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/gpubridge/gpubridge/internal/problem"
)

// ErrInvalid is matched (errors.Is) by every Problems value.
var ErrInvalid = errors.New("invalid tenant")

// Problem is one thing wrong with one field.
type Problem = problem.Problem

// Problems is every problem found; as an error it lists them all and
// matches ErrInvalid.
type Problems = problem.List[invalidTenant]

type invalidTenant struct{}

func (invalidTenant) Sentinel() error { return ErrInvalid }

// Limits of names.
const (
	// MaxNameLen bounds tenant names; the QOS name is QOSPrefix+name.
	MaxNameLen = 32
	// MaxUserLen is the usual Unix user name limit.
	MaxUserLen = 32
	// MaxTextLen bounds descriptions and organizations.
	MaxTextLen = 200
	// MaxUsers bounds a tenant's user list.
	MaxUsers = 10_000
)

// Rules is what validation needs from outside the tenant itself.
type Rules struct {
	// GPUTypes are the GPU types the cluster tracks (typed gres/gpu TRES).
	// Nil means "not known yet": the check is skipped (syntax-only pass
	// before contacting Slurm); empty means the cluster tracks none.
	GPUTypes []string
	// Naming gives the QOS names, to refuse a tenant whose QOS would take
	// the name of the shared on-demand QOS or of Slurm's normal QOS.
	Naming Naming
}

// reservedNames may not be tenant names.
var reservedNames = []string{"root"}

// Keywords are words gpubridge's commands read as syntax, not as names
// (internal/kv's `set` and `where`, and the values `none` and `all`): a
// tenant or user named so could not be named on the command line
// (`modify tenant set set gpus=...`). They are refused as names.
var Keywords = []string{"set", "where", "none", "all"}

func keywordMsg(name string) string {
	return fmt.Sprintf("%q is a keyword of gpubridge's commands (as in `modify tenant NAME set key=value`); choose another name", name)
}

// CheckName reports what is wrong with a tenant (account) name, or "".
func CheckName(name string) string {
	switch {
	case name == "":
		return "is empty; give a name such as acme"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("is %d characters long; at most %d", len(name), MaxNameLen)
	}
	if strings.ToLower(name) != name && CheckName(strings.ToLower(name)) == "" {
		return fmt.Sprintf("%q has upper-case letters; Slurm lower-cases account names, so write %q", name, strings.ToLower(name))
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || (i > 0 && (r >= '0' && r <= '9' || r == '_' || r == '-'))
		if !ok {
			return fmt.Sprintf("%q is not a valid name: use lower-case letters, digits, '-' and '_', starting with a letter (bad character %s)", name, quoteRune(r))
		}
	}
	if slices.Contains(reservedNames, name) {
		return fmt.Sprintf("%q is reserved by Slurm; choose another name", name)
	}
	if slices.Contains(Keywords, name) {
		return keywordMsg(name)
	}
	return ""
}

// CheckUser reports what is wrong with a Unix user name, or "".
func CheckUser(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxUserLen:
		return fmt.Sprintf("is %d characters long; at most %d", len(name), MaxUserLen)
	}
	if strings.ToLower(name) != name && CheckUser(strings.ToLower(name)) == "" {
		return fmt.Sprintf("%q has upper-case letters; Slurm lower-cases user names, so write %q", name, strings.ToLower(name))
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r == '_' || (i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.'))
		if !ok {
			return fmt.Sprintf("%q is not a valid user name: use lower-case letters, digits, '-', '.' and '_', starting with a letter or '_' (bad character %s)", name, quoteRune(r))
		}
	}
	if name == "root" {
		return "root may not be a tenant user"
	}
	if slices.Contains(Keywords, name) {
		return keywordMsg(name)
	}
	return ""
}

// CheckGPUType reports what is wrong with a GPU type's spelling, or "".
func CheckGPUType(typ string) string {
	if typ == "" {
		return "is empty; give a GPU type such as h100 or 1g.10gb"
	}
	if len(typ) > 64 {
		return "is longer than 64 characters"
	}
	for _, r := range typ {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf("%q is not a GPU type: use letters, digits, '.', '-' and '_' (bad character %s)", typ, quoteRune(r))
		}
	}
	return ""
}

func checkText(s string) string {
	if len(s) > MaxTextLen {
		return fmt.Sprintf("is %d characters long; at most %d", len(s), MaxTextLen)
	}
	for _, r := range s {
		switch {
		case r == '\'' || r == '"' || r == '\\' || r == '`':
			return fmt.Sprintf("contains %s; quotes and backslashes are not allowed (Slurm stores the text unescaped)", quoteRune(r))
		case unicode.IsControl(r):
			return fmt.Sprintf("contains the control character %s", quoteRune(r))
		}
	}
	return ""
}

// MaxCostCenterLen is the longest cost centre: finance systems' cost
// centre codes are short (SAP's are 10 characters).
const MaxCostCenterLen = 64

// checkCostCenter: a cost centre is a code finance tools match on, so
// printable text without quotes or control characters (checkText), at
// most MaxCostCenterLen characters, and no leading or trailing space.
func checkCostCenter(s string) string {
	if len(s) > MaxCostCenterLen {
		return fmt.Sprintf("is %d characters long; at most %d", len(s), MaxCostCenterLen)
	}
	if strings.TrimSpace(s) != s {
		return "has leading or trailing spaces"
	}
	return checkText(s)
}

func quoteRune(r rune) string {
	if r == '\'' {
		return `"'"`
	}
	return fmt.Sprintf("%q", r)
}

// Validate checks one tenant and returns every problem (nil when valid).
// Fields are named as in the YAML file: name, gpus.h100, users[1], ...
func Validate(t Tenant, r Rules) Problems {
	var ps Problems
	if msg := CheckName(t.Name); msg != "" {
		ps.Add("name", "%s", msg)
	} else {
		ps = append(ps, validateQOSNames(t.Name, r.Naming)...)
	}
	if msg := checkText(t.Description); msg != "" {
		ps.Add("description", "%s", msg)
	}
	if msg := checkText(t.Organization); msg != "" {
		ps.Add("organization", "%s", msg)
	}
	if msg := checkCostCenter(t.CostCenter); msg != "" {
		ps.Add("costCenter", "%s", msg)
	}
	ps = append(ps, validateUsers(t)...)
	var known map[string]bool
	if r.GPUTypes != nil {
		known = map[string]bool{}
		for _, k := range r.GPUTypes {
			known[k] = true
		}
	}
	ps = append(ps, validateGPUs(t.GPUs, known, r.GPUTypes)...)
	ps = append(ps, validateLimits(t)...)
	ps = append(ps, validateBookings(t.Bookings, known, r.GPUTypes)...)
	switch t.State {
	case "", Active, Deleting, Releasing:
	default:
		ps.Add("state", "%q is not a state (active, deleting or releasing)", t.State)
	}
	return ps
}

// validateQOSNames checks the QOS names a valid tenant name gives: short
// enough for Slurm, and taken neither by the shared on-demand QOS nor by
// Slurm's default; nor may the name look like a reservation QOS.
func validateQOSNames(name string, n Naming) Problems {
	var ps Problems
	q := n.QOSName(name)
	switch {
	case len(q) > 64:
		ps.Add("name", "the QOS name %q would be longer than 64 characters; choose a shorter name", q)
	case n.OnDemandQOS != "" && q == n.OnDemandQOS:
		ps.Add("name", "the QOS name %q is the shared on-demand QOS; choose another name", q)
	case q == "normal":
		ps.Add("name", "the QOS name %q is Slurm's default QOS; choose another name", q)
	}
	suf := n.ReservationQOSSuffix
	if suf == "" {
		return ps
	}
	rq := n.ReservationQOSName(name)
	switch {
	case strings.HasSuffix(name, suf):
		ps.Add("name", "names ending in %q are kept for reservation QOS (tenant %s's is %s; bookings.reservationQOSSuffix); choose another name", suf, strings.TrimSuffix(name, suf), q)
	case len(rq) > 64:
		ps.Add("name", "the reservation QOS name %q would be longer than 64 characters; choose a shorter name", rq)
	case rq == n.OnDemandQOS || rq == "normal":
		ps.Add("name", "the reservation QOS name %q is taken by %s; choose another name", rq, map[bool]string{true: "the shared on-demand QOS", false: "Slurm's default QOS"}[rq == n.OnDemandQOS])
	}
	return ps
}

// validateUsers checks the tenant's users and admins: valid names, none
// twice, at most MaxUsers, and every admin one of the users.
func validateUsers(t Tenant) Problems {
	var ps Problems
	if len(t.Users) > MaxUsers {
		ps.Add("users", "has %d users; at most %d", len(t.Users), MaxUsers)
	}
	seen := map[string]bool{}
	for i, u := range t.Users {
		f := fmt.Sprintf("users[%d]", i)
		if msg := CheckUser(u); msg != "" {
			ps.Add(f, "%s", msg)
			continue
		}
		if seen[u] {
			ps.Add(f, "%q is listed twice", u)
		}
		seen[u] = true
	}
	seenAdmin := map[string]bool{}
	for i, a := range t.Admins {
		f := fmt.Sprintf("admins[%d]", i)
		switch msg := CheckUser(a); {
		case msg != "":
			ps.Add(f, "%s", msg)
		case seenAdmin[a]:
			ps.Add(f, "%q is listed twice", a)
		case !seen[a]:
			ps.Add(f, "%q is not one of the tenant's users; add %s to users too", a, a)
		}
		seenAdmin[a] = true
	}
	return ps
}

// validateGPUs checks the GPU quota: valid types, known to the cluster
// when known is set (types are its keys), and counts in range.
func validateGPUs(gpus Quota, known map[string]bool, types []string) Problems {
	var ps Problems
	for _, typ := range gpus.Types() {
		f := "gpus." + typ
		n := gpus[typ]
		if msg := CheckGPUType(typ); msg != "" {
			ps.Add(f, "%s", msg)
			continue
		}
		if n < 0 {
			ps.Add(f, "%d is negative; give 0 or more (in Slurm -1 would silently clear the limit)", n)
		} else if n > MaxGPUs {
			ps.Add(f, "%d is too large; at most %d", n, MaxGPUs)
		}
		if known != nil && !known[typ] {
			ps.Add(f, "%s", unknownType(typ, types))
		}
	}
	return ps
}

// validateLimits checks the CPU and memory limits and the burst policy's
// cap and budget are in range.
func validateLimits(t Tenant) Problems {
	var ps Problems
	if t.CPUs != nil && (*t.CPUs < 0 || *t.CPUs > MaxCPUs) {
		ps.Add("cpus", "%d is out of range; give 0 to %d", *t.CPUs, MaxCPUs)
	}
	if t.Memory != nil && (*t.Memory < 0 || *t.Memory > MaxMemoryMB) {
		ps.Add("memory", "%d MB is out of range", int64(*t.Memory))
	}
	if b := t.Burst; b.MaxOnDemandGPUs < 0 || b.MaxOnDemandGPUs > MaxGPUs {
		ps.Add("burst.maxOnDemandGPUs", "%d is out of range; give 0 to %d", b.MaxOnDemandGPUs, MaxGPUs)
	}
	if b := t.Burst.MonthlyBudget; b != nil {
		if c, err := b.Cmp(MaxBudget); b.Sign() < 0 || c > 0 || err != nil {
			ps.Add("burst.monthlyBudget", "%s is out of range; give 0 to %s", b.String(), MaxBudget)
		}
	}
	return ps
}

func unknownType(typ string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, typ) {
			return fmt.Sprintf("unknown GPU type %q; did you mean %q?", typ, k)
		}
	}
	if len(known) == 0 {
		return fmt.Sprintf("unknown GPU type %q: the cluster tracks no typed GPUs (add gres/gpu:TYPE to AccountingStorageTRES)", typ)
	}
	ks := slices.Clone(known)
	slices.Sort(ks)
	return fmt.Sprintf("unknown GPU type %q; the cluster tracks: %s", typ, strings.Join(ks, ", "))
}

// ValidateSet checks tenants that are to be stored together: each one, and
// that no two names collide, also with existing (the names already in the
// store that ts does not replace). Slurm lower-cases account names, so
// names that differ only in case collide. Fields are prefixed
// "tenants[i]" when prefix is true (files), else left bare (one tenant).
func ValidateSet(ts []Tenant, existing []string, r Rules, prefix bool) Problems {
	var ps Problems
	byFold := map[string]string{}
	for _, n := range existing {
		byFold[strings.ToLower(n)] = n
	}
	inSet := map[string]int{}
	for i, t := range ts {
		tp := Validate(t, r)
		lower := strings.ToLower(t.Name)
		if j, dup := inSet[lower]; dup {
			if ts[j].Name == t.Name {
				tp.Add("name", "%q is given twice (also tenants[%d])", t.Name, j)
			} else {
				tp.Add("name", "%q collides with %q (tenants[%d]): Slurm lower-cases account names", t.Name, ts[j].Name, j)
			}
		} else if other, ok := byFold[lower]; ok && other != t.Name {
			tp.Add("name", "%q collides with the existing tenant %q: Slurm lower-cases account names", t.Name, other)
		}
		if _, dup := inSet[lower]; !dup {
			inSet[lower] = i
		}
		if prefix {
			label := fmt.Sprintf("tenants[%d]", i)
			if t.Name != "" {
				label += " (" + t.Name + ")"
			}
			tp = tp.Prefixed(label)
		}
		ps = append(ps, tp...)
	}
	return ps
}
