package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/internal/slurmstr"
)

// Import builds tenants from existing Slurm accounts (`gpubridge import`):
// the account's description and organization, its users (user
// associations), its admins (coordinators) and, when a QOS of the tenant's
// QOS name exists, its quota (typed GPU, cpu and mem entries of GrpTRES).
// Accounts that gpubridge did not create are marked Adopted: the store
// records that gpubridge owns them now (their description stays as it is),
// and what existed (tenant.Origin: the account's description and
// organization, its user associations' QOS settings, its coordinators, the
// QOS if it existed and was not gpubridge's), which releasing the tenant
// leaves and puts back.
// Notes say what could not be carried over.
func Import(st State, names []string, n tenant.Naming) (ts []tenant.Tenant, notes []string, err error) {
	accts := map[string]Account{}
	for _, a := range st.Accounts {
		accts[a.Name] = a
	}
	qos := map[string]tenant.QOS{}
	for _, q := range st.QOS {
		qos[q.Name] = q
	}
	var missing []string
	for _, name := range names {
		a, ok := accts[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		// An account gpubridge created (marked) comes back as it was; any
		// other is adopted and keeps its description and organization.
		t := tenant.Tenant{Name: name, State: tenant.Active, Adopted: !tenant.IsMarked(a.Description)}
		if t.Adopted {
			t.Description, t.Organization = a.Description, a.Organization
			// What releasing the tenant leaves and puts back.
			t.Origin = &tenant.Origin{Description: a.Description, Organization: a.Organization, Coordinators: slices.Clone(a.Coordinators)}
		} else {
			t.Description = tenant.Unmark(a.Description)
			if t.Description == tenant.DefaultDescription {
				t.Description = ""
			}
			if a.Organization != tenant.DefaultOrganization {
				t.Organization = a.Organization
			}
		}
		for _, as := range st.Assocs {
			if as.Account == name {
				t.Users = append(t.Users, as.User)
				if t.Origin != nil {
					t.Origin.Assocs = append(t.Origin.Assocs, tenant.OriginAssoc{User: as.User, QOS: slices.Clone(as.QOS), DefaultQOS: as.DefaultQOS})
				}
			}
		}
		for _, c := range a.Coordinators {
			if slices.Contains(t.Users, c) {
				t.Admins = append(t.Admins, c)
			} else {
				notes = append(notes, fmt.Sprintf("%s: coordinator %s has no association under the account; not imported as an admin (apply will remove the coordinator)", name, c))
			}
		}
		if q, ok := qos[n.QOSName(name)]; ok {
			if t.Origin != nil && !tenant.IsMarked(q.Description) {
				t.Origin.QOS = &tenant.OriginQOS{Description: q.Description, GrpTRES: maps.Clone(q.GrpTRES)}
			}
			for k, v := range q.GrpTRES {
				switch typ, isGPU := slurmstr.KeyGPU(k); {
				case isGPU && typ != "":
					if t.GPUs == nil {
						t.GPUs = tenant.Quota{}
					}
					t.GPUs[typ] = v
				case k == "cpu":
					c := v
					t.CPUs = &c
				case k == "mem":
					m := tenant.Megabyte(v)
					t.Memory = &m
				default:
					notes = append(notes, fmt.Sprintf("%s: QOS %s limit GrpTRES %s=%d is not a tenant quota; apply will remove it", name, q.Name, k, v))
				}
			}
		} else {
			notes = append(notes, fmt.Sprintf("%s: no QOS %s exists; the tenant has no GPU quota until you set one (apply creates the QOS)", name, n.QOSName(name)))
		}
		t.Normalize()
		ts = append(ts, t)
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("import: no such Slurm account(s): %s", strings.Join(missing, ", "))
	}
	slices.Sort(notes)
	return ts, notes, nil
}
