package tenant

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/internal/money"
)

// Tenant is one team sharing the cluster. Its JSON form (used by --json,
// the audit log and `show tenant -o yaml`) is the same as its YAML file form.
type Tenant struct {
	// Name is the tenant's and its Slurm account's name: lower case,
	// [a-z][a-z0-9_-]*, at most MaxNameLen characters.
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
	// CostCenter is the finance cost centre the tenant's spend is booked
	// to; the chargeback exports name it on every row (gpubridge only
	// stores and shows it: Slurm has no such field).
	CostCenter string `json:"costCenter,omitempty"`
	// Users are the Unix users that may submit under the tenant's account.
	Users []string `json:"users,omitempty"`
	// Admins are users made coordinators of the tenant's own account
	// (never of root or of another tenant). Each admin is also a user.
	Admins []string `json:"admins,omitempty"`
	// GPUs is the quota per GPU type or MIG profile (h100, 1g.10gb, ...).
	// A type that is not listed may not be used (the job_submit guard
	// refuses it); 0 is a real limit.
	GPUs Quota `json:"gpus,omitempty"`
	// CPUs and Memory are optional limits on the tenant's running jobs.
	CPUs   *int64    `json:"cpus,omitempty"`
	Memory *Megabyte `json:"memory,omitempty"`
	// Burst is the policy for overflow to the on-demand tier (used by the
	// burst controller; stored and shown here).
	Burst Burst `json:"burst,omitzero"`
	// Bookings is what the tenant may book (bridge/reserve); each key it
	// sets overrides the configured default policy.
	Bookings BookingPolicy `json:"bookings,omitzero"`
	// State is set by gpubridge: active, or deleting once `delete tenant`
	// ran (new submissions are blocked; apply removes the Slurm objects
	// when the account's jobs have ended).
	State State `json:"state,omitempty"`
	// Adopted marks a tenant taken over from existing Slurm objects by
	// `gpubridge import`: apply may then modify objects that do not yet
	// carry gpubridge's marker.
	Adopted bool `json:"adopted,omitempty"`
	// Origin is what existed in Slurm before the adoption (recorded by
	// `gpubridge import`): what releasing the tenant leaves and puts back.
	// Nil for a tenant gpubridge created, and for one adopted before
	// gpubridge recorded it (deleting such a tenant needs --purge).
	Origin *Origin `json:"origin,omitempty"`
}

// Burst is a tenant's on-demand overflow policy.
type Burst struct {
	Enabled bool `json:"enabled,omitempty"`
	// MaxOnDemandGPUs caps the GPUs the tenant may hold in the on-demand
	// tier at once (0: no on-demand GPUs).
	MaxOnDemandGPUs int64 `json:"maxOnDemandGPUs,omitempty"`
	// MonthlyBudget caps the on-demand spend per month, in the rate card's
	// currency (written 2500.00 in files). It is a decimal without a
	// currency, kept exactly until it meets the rate card
	// (money.Amount.In): 2500.00 is 2500 yen with a JPY card and 2500.000
	// dinars with a KWD one; a budget with more decimals than the card's
	// currency has is refused there, never rounded.
	MonthlyBudget *money.Amount `json:"monthlyBudget,omitempty"`
}

// State is a tenant's lifecycle state.
type State string

// States.
const (
	Active   State = "active"
	Deleting State = "deleting"
	// Releasing is an adopted tenant being deleted by releasing the
	// site's account: gpubridge's own objects go, the site's stay and get
	// back what they had (see Origin).
	Releasing State = "releasing"
)

// IsDeleting reports whether t is being deleted (purged or released).
func (t Tenant) IsDeleting() bool { return t.State == Deleting || t.State == Releasing }

// Clone returns a deep copy of t.
func (t Tenant) Clone() Tenant {
	c := t
	c.Users = slices.Clone(t.Users)
	c.Admins = slices.Clone(t.Admins)
	c.GPUs = t.GPUs.Clone()
	if t.CPUs != nil {
		v := *t.CPUs
		c.CPUs = &v
	}
	if t.Memory != nil {
		v := *t.Memory
		c.Memory = &v
	}
	if t.Burst.MonthlyBudget != nil {
		v := *t.Burst.MonthlyBudget
		c.Burst.MonthlyBudget = &v
	}
	c.Bookings = t.Bookings.Clone()
	c.Origin = t.Origin.Clone()
	return c
}

// Normalize sorts and de-duplicates the lists and sets the default state,
// so that equal tenants compare equal.
func (t *Tenant) Normalize() {
	t.Users = sortedUnique(t.Users)
	t.Admins = sortedUnique(t.Admins)
	if len(t.GPUs) == 0 {
		t.GPUs = nil
	}
	if len(t.Bookings.MaxGPUs) == 0 {
		t.Bookings.MaxGPUs = nil
	}
	if t.State == "" {
		t.State = Active
	}
	if t.Origin != nil {
		t.Origin = t.Origin.Clone()
		t.Origin.normalize()
	}
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Megabyte is an amount of memory in MB (Slurm's unit for the mem TRES).
// It is written as a number of MB or with a suffix: 512G, 1T, 2048M.
type Megabyte int64

// String writes m with the largest exact suffix: 1T, 512G, 1500M.
func (m Megabyte) String() string {
	switch {
	case m != 0 && m%(1024*1024) == 0:
		return strconv.FormatInt(int64(m)/(1024*1024), 10) + "T"
	case m != 0 && m%1024 == 0:
		return strconv.FormatInt(int64(m)/1024, 10) + "G"
	}
	return strconv.FormatInt(int64(m), 10) + "M"
}

// MarshalJSON writes the String form.
func (m Megabyte) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// UnmarshalJSON reads a number of MB or a suffixed string.
func (m *Megabyte) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	v, msg := ParseMemory(s)
	if msg != "" {
		return fmt.Errorf("memory: %s", msg)
	}
	*m = v
	return nil
}

// Limits on numbers, far above any real cluster; a larger number is a typo.
const (
	MaxGPUs     = 1_000_000
	MaxCPUs     = 100_000_000
	MaxMemoryMB = 1 << 40 // a zettabyte-ish; Slurm's mem TRES is in MB
)

// ParseCount reads a non-negative whole number no larger than max. The
// returned message (empty on success) says what is wrong and how to fix it.
func ParseCount(s string, max int64) (int64, string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, "is empty; give a whole number such as 4"
	case strings.HasPrefix(s, "-"):
		return 0, fmt.Sprintf("%s is negative; give 0 or more (in Slurm -1 would silently clear the limit)", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Sprintf("%q is not a whole number; give digits only, such as 4", s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Sprintf("%s is too large; at most %d", s, max)
	}
	return v, ""
}

// ParseMemory reads 512G, 1T, 2048M or a bare number of MB.
func ParseMemory(s string) (Megabyte, string) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'M', 'm':
			s = s[:n-1]
		case 'G', 'g':
			mult, s = 1024, s[:n-1]
		case 'T', 't':
			mult, s = 1024*1024, s[:n-1]
		}
	}
	v, msg := ParseCount(s, MaxMemoryMB)
	if msg != "" {
		return 0, msg + " (memory is written like 512G, 1T or 2048M)"
	}
	if v > MaxMemoryMB/mult {
		return 0, fmt.Sprintf("is too large; at most %dM", int64(MaxMemoryMB))
	}
	return Megabyte(v * mult), ""
}

// MaxBudget bounds a monthly budget: a billion of the rate card's
// currency; a larger number is a typo.
var MaxBudget = money.MustParse("1000000000")

// ParseMoney reads a budget: a non-negative decimal such as 2500.00 with
// at most money.MaxMinor decimals, kept exactly (its currency is the rate
// card's, which a tenant does not know).
func ParseMoney(s string) (money.Amount, string) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return money.Amount{}, fmt.Sprintf("%s is negative; give 0 or more (an amount such as 2500.00)", s)
	}
	a, err := money.Parse(s)
	if err != nil {
		return money.Amount{}, fmt.Sprintf("%q is not an amount such as 2500.00 (digits, at most %d decimals)", s, money.MaxMinor)
	}
	if c, _ := a.Cmp(MaxBudget); c > 0 {
		return money.Amount{}, fmt.Sprintf("%s is too large; at most %s", s, MaxBudget)
	}
	return a, ""
}

// ParseBool reads yes/no, true/false, on/off, 1/0.
func ParseBool(s string) (bool, string) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "y", "true", "on", "1":
		return true, ""
	case "no", "n", "false", "off", "0":
		return false, ""
	}
	return false, fmt.Sprintf("%q is not yes or no", s)
}
