package tenant

import (
	"testing"

	"github.com/gpubridge/gpubridge/internal/money"
)

// TestPolicyOnly: booking and burst policy changes involve nothing in
// Slurm; any other field (or a mix) does.
func TestPolicyOnly(t *testing.T) {
	base := Tenant{Name: "acme", Users: []string{"alice"}, GPUs: Quota{"h100": 2}, State: Active}
	budget := money.MustParse("10.00")
	cpus := int64(4)
	for _, c := range []struct {
		name string
		edit func(*Tenant)
		want bool
	}{
		{"nothing", func(*Tenant) {}, false},
		{"booking", func(t *Tenant) { t.Bookings.MonthlySpendLimit = &budget }, true},
		{"burst", func(t *Tenant) { t.Burst = Burst{Enabled: true, MaxOnDemandGPUs: 2, MonthlyBudget: &budget} }, true},
		{"quota", func(t *Tenant) { t.GPUs = Quota{"h100": 3} }, false},
		{"users", func(t *Tenant) { t.Users = []string{"alice", "bob"} }, false},
		{"description", func(t *Tenant) { t.Description = "x" }, false},
		{"cpus and booking", func(t *Tenant) { t.CPUs = &cpus; t.Bookings.MonthlySpendLimit = &budget }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			after := base.Clone()
			c.edit(&after)
			cs := Changes(base, after)
			if got := PolicyOnly(cs); got != c.want {
				t.Errorf("PolicyOnly(%v) = %v, want %v", cs, got, c.want)
			}
		})
	}
}
