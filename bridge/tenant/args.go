package tenant

import (
	"slices"
	"strings"
)

// ArgKeys are the key=value options of `add tenant` (and, after `set`, of
// `modify tenant`), lower case as internal/kv delivers them.
var ArgKeys = []string{
	"description", "organization", "costcenter", "users", "admins", "gpus", "cpus", "memory", "mem",
	"burst", "burstmaxgpus", "burstbudget",
	"booking", "booking.maxgpus", "booking.maxwindow", "booking.minlead", "booking.maxhorizon", "booking.spendlimit",
}

// FromArgs builds a new tenant from `add tenant NAME key=value ...`. Lists
// keep the order given, so that problems name the positions typed; callers
// validate, then Normalize.
func FromArgs(name string, kv map[string]string) (Tenant, Problems) {
	t := Tenant{Name: name, State: Active}
	ps := setArgs(&t, kv, false)
	return t, ps
}

// Update returns t changed by `modify tenant NAME set key=value ...`.
// gpus= and booking.maxgpus= merge by type (type:none drops a type);
// users= and admins= replace the lists; cpus=none, memory=none,
// burstbudget=none and booking.KEY=none clear; booking=none drops the
// whole booking policy.
func Update(t Tenant, set map[string]string) (Tenant, Problems) {
	out := t.Clone()
	ps := setArgs(&out, set, true)
	return out, ps
}

// setArgs applies the options kv to t, in key order, and returns their
// problems; modify merges and clears as Update does, else they start a
// new tenant.
func setArgs(t *Tenant, kv map[string]string, modify bool) Problems {
	var ps Problems
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if _, a := kv["memory"]; a {
		if _, b := kv["mem"]; b {
			ps.Add("memory", "memory= and mem= are the same option; give one")
		}
	}
	for _, k := range keys {
		v := kv[k]
		none := modify && strings.EqualFold(strings.TrimSpace(v), "none")
		switch k {
		case "description":
			t.Description = v
		case "organization":
			t.Organization = v
		case "costcenter":
			if none {
				v = ""
			}
			t.CostCenter = v
		case "users":
			t.Users = splitList(v)
		case "admins":
			t.Admins = splitList(v)
		case "gpus":
			qc, qp := ParseQuota("gpus", v)
			ps = append(ps, qp...)
			if modify {
				t.GPUs = qc.Apply(t.GPUs)
			} else {
				t.GPUs = qc.Apply(nil)
			}
		case "cpus", "memory", "mem":
			setSizeArg(t, k, v, none, &ps)
		case "burst", "burstmaxgpus", "burstbudget":
			setBurstArg(&t.Burst, k, v, none, &ps)
		case "booking", "booking.maxgpus", "booking.maxwindow", "booking.minlead", "booking.maxhorizon", "booking.spendlimit":
			setBookingArg(&t.Bookings, k, v, modify, &ps)
		default:
			ps.Add(k, "is not a tenant option; known options: %s", strings.Join(ArgKeys, ", "))
		}
	}
	return ps
}

// setSizeArg sets the tenant's cpus= or memory= (mem=) limit k to v, or
// clears it (none); an invalid value is a problem and changes nothing.
func setSizeArg(t *Tenant, k, v string, none bool, ps *Problems) {
	if k == "cpus" {
		if none {
			t.CPUs = nil
			return
		}
		n, msg := ParseCount(v, MaxCPUs)
		if msg != "" {
			ps.Add("cpus", "%s", msg)
			return
		}
		t.CPUs = &n
		return
	}
	if none {
		t.Memory = nil
		return
	}
	m, msg := ParseMemory(v)
	if msg != "" {
		ps.Add("memory", "%s", msg)
		return
	}
	t.Memory = &m
}

// setBurstArg sets one field of the burst policy: burst= (on or off),
// burstmaxgpus= or burstbudget= (none clears it); an invalid value is a
// problem and changes nothing.
func setBurstArg(b *Burst, k, v string, none bool, ps *Problems) {
	switch k {
	case "burst":
		on, msg := ParseBool(v)
		if msg != "" {
			ps.Add("burst", "%s", msg)
			return
		}
		b.Enabled = on
	case "burstmaxgpus":
		n, msg := ParseCount(v, MaxGPUs)
		if msg != "" {
			ps.Add("burst.maxOnDemandGPUs", "%s", msg)
			return
		}
		b.MaxOnDemandGPUs = n
	default: // burstbudget
		if none {
			b.MonthlyBudget = nil
			return
		}
		m, msg := ParseMoney(v)
		if msg != "" {
			ps.Add("burst.monthlyBudget", "%s", msg)
			return
		}
		b.MonthlyBudget = &m
	}
}

func splitList(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// AddUser returns t with user added (admin also makes it a coordinator).
func AddUser(t Tenant, user string, admin bool) Tenant {
	out := t.Clone()
	out.Users = append(out.Users, user)
	if admin {
		out.Admins = append(out.Admins, user)
	}
	out.Normalize()
	return out
}

// RemoveUser returns t without user (as user and as admin).
func RemoveUser(t Tenant, user string) Tenant {
	out := t.Clone()
	out.Users = slices.DeleteFunc(out.Users, func(u string) bool { return u == user })
	out.Admins = slices.DeleteFunc(out.Admins, func(u string) bool { return u == user })
	out.Normalize()
	return out
}
