package tenant

import (
	"strconv"
	"strings"
)

// Field is one displayable field of a tenant.
type Field struct {
	Key   string // lower case, as in format=name,gpus
	Title string // column header
	Value string
}

// FieldKeys are the keys of Fields, in display order.
var FieldKeys = []string{"name", "description", "organization", "costcenter", "gpus", "users", "admins", "cpus", "memory", "burst", "burstmaxgpus", "burstbudget", "booking", "state", "adopted"}

// Fields returns t's fields as text, in FieldKeys order.
func Fields(t Tenant) []Field {
	opt := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	mem, budget := "", ""
	if t.Memory != nil {
		mem = t.Memory.String()
	}
	if t.Burst.MonthlyBudget != nil {
		budget = t.Burst.MonthlyBudget.String()
	}
	burst := "no"
	if t.Burst.Enabled {
		burst = "yes"
	}
	state := string(t.State)
	if state == "" {
		state = string(Active)
	}
	adopted := ""
	if t.Adopted {
		adopted = "yes"
	}
	return []Field{
		{"name", "Name", t.Name},
		{"description", "Description", t.Description},
		{"organization", "Organization", t.Organization},
		{"costcenter", "CostCenter", t.CostCenter},
		{"gpus", "GPUs", t.GPUs.String()},
		{"users", "Users", strings.Join(t.Users, ",")},
		{"admins", "Admins", strings.Join(t.Admins, ",")},
		{"cpus", "CPUs", opt(t.CPUs)},
		{"memory", "Memory", mem},
		{"burst", "Burst", burst},
		{"burstmaxgpus", "BurstMaxGPUs", strconv.FormatInt(t.Burst.MaxOnDemandGPUs, 10)},
		{"burstbudget", "BurstBudget", budget},
		{"booking", "Booking", t.Bookings.String()},
		{"state", "State", state},
		{"adopted", "Adopted", adopted},
	}
}

// FieldChange is one field that differs between two versions of a tenant.
type FieldChange struct {
	Title string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Changes lists the fields that differ from before to after, in display
// order (both are normalized copies).
func Changes(before, after Tenant) []FieldChange {
	before, after = before.Clone(), after.Clone()
	before.Normalize()
	after.Normalize()
	b, a := Fields(before), Fields(after)
	var out []FieldChange
	for i := range b {
		if b[i].Value != a[i].Value {
			out = append(out, FieldChange{Title: b[i].Title, Old: b[i].Value, New: a[i].Value})
		}
	}
	return out
}
