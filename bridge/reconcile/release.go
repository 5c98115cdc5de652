package reconcile

import (
	"slices"

	"github.com/gpubridge/gpubridge/bridge/tenant"
)

// Releasing an adopted tenant (tenant.Releasing, `delete tenant` without
// --purge) removes what gpubridge added to the site's account and puts
// back what it changed, as tenant.Origin recorded at import:
//
//   - the account stays, with its description and organization as they
//     were;
//   - the user associations that existed stay, with their QOS list and
//     default QOS as they were (one that inherited its QOS list is left
//     with what apply gave it, less the QOS release deletes, which Slurm
//     drops from it: slurmrestd cannot make an association inherit again);
//   - the user associations gpubridge added go (a user losing their
//     default account gets another, as when a tenant is deleted);
//   - the coordinators gpubridge added go, the original ones are added
//     back (when the user still exists);
//   - the tenant QOS goes when gpubridge created it, or gets back its
//     description and limits (and is no longer blocked) when it existed;
//     the reservation QOS goes;
//   - then the tenant is dropped from the store.
//
// All of it happens in one apply, once no job that holds the release is
// unfinished (holdsRelease); until then the tenant is blocked as a tenant
// being deleted is. Nothing of the site's that existed before the import
// is deleted, so the delete policy counts only the QOS and the
// associations gpubridge added.

// holdsRelease reports whether unfinished jobs j of t's account hold its
// release: jobs of a user whose association gpubridge added (it goes),
// and jobs of a QOS gpubridge deletes or takes off the user's association
// (the tenant QOS it created, the reservation QOS, the on-demand QOS the
// original association did not list). A QOS not known ("") holds too.
func holdsRelease(t tenant.Tenant, n tenant.Naming, j JobCount) bool {
	orig, ok := t.Origin.Assoc(j.User)
	if !ok || j.QOS == "" {
		return true
	}
	q := j.QOS
	ours := q == n.ReservationQOSName(t.Name) || q == n.QOSName(t.Name) || q == n.OnDemandQOS
	if !ours {
		return false // the site's own QOS: release leaves it alone
	}
	if releaseDeletesQOS(t, n, q) {
		return true
	}
	return !slices.Contains(orig.QOS, q)
}

// releaseDeletesQOS reports whether releasing t deletes QOS q.
func releaseDeletesQOS(t tenant.Tenant, n tenant.Naming, q string) bool {
	if rq := n.ReservationQOSName(t.Name); rq != "" && q == rq {
		return true
	}
	return q == n.QOSName(t.Name) && t.Origin.QOS == nil
}

// releaseObjects adds to want the objects of a released tenant t that
// stay, as they were before the adoption: its account, its tenant QOS
// when it existed, its original user associations and coordinators, each
// only if it still exists in Slurm (release creates nothing). What is not
// added goes as no tenant wants it.
func releaseObjects(want *tenant.Objects, t tenant.Tenant, n tenant.Naming, st State) {
	o := t.Origin
	live := false
	for _, a := range st.Accounts {
		if a.Name == t.Name {
			live = true
		}
	}
	if !live {
		return // the site removed it: nothing of its stays to restore
	}
	want.Accounts = append(want.Accounts, tenant.Account{Name: t.Name, Description: o.Description, Organization: o.Organization})
	if o.QOS != nil {
		for _, q := range st.QOS {
			if q.Name == n.QOSName(t.Name) {
				grp := tenant.TRES{}
				for k, v := range o.QOS.GrpTRES {
					grp[k] = v
				}
				want.QOS = append(want.QOS, tenant.QOS{Name: q.Name, Description: o.QOS.Description, GrpTRES: grp})
			}
		}
	}
	users := map[string]bool{} // users who keep an association somewhere
	for _, a := range st.Assocs {
		if a.Account != t.Name {
			users[a.User] = true
			continue
		}
		orig, ok := o.Assoc(a.User)
		if !ok {
			continue // gpubridge added it: it goes
		}
		users[a.User] = true
		r := tenant.Assoc{Account: a.Account, User: a.User, QOS: sortedCopy(orig.QOS), DefaultQOS: orig.DefaultQOS}
		if len(orig.QOS) == 0 {
			// It inherited its QOS list, which slurmrestd cannot put
			// back: it is left as it is (Slurm drops the QOS release
			// deletes from it).
			r.QOS, r.DefaultQOS = sortedCopy(a.QOS), a.DefaultQOS
		}
		if !slices.Contains(r.QOS, r.DefaultQOS) {
			// None recorded (or not in the list): keep the one it has,
			// unless it is not in the list either.
			r.DefaultQOS = a.DefaultQOS
			if !slices.Contains(r.QOS, r.DefaultQOS) {
				r.DefaultQOS = ""
			}
		}
		want.Assocs = append(want.Assocs, r)
	}
	for _, c := range o.Coordinators {
		if users[c] {
			want.Coords = append(want.Coords, tenant.Coord{Account: t.Name, User: c})
		}
	}
}
