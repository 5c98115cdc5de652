package tenant

import (
	"cmp"
	"slices"
)

// DumpFile is the tenants file that restores ts exactly (`gpubridge dump`):
// every tenant with every field, its adopted mark included, sorted by name;
// a tenant being deleted is listed under delete instead (applied, the
// file finishes its deletion rather than bringing it back), or under purge
// when it is an adopted tenant being deleted whole.
func DumpFile(ts []Tenant) File {
	f := File{Version: FileVersion}
	for _, t := range ts {
		switch {
		case t.State == Deleting && t.Adopted && t.Origin != nil:
			f.Purge = append(f.Purge, t.Name) // delete would release it
			continue
		case t.IsDeleting():
			f.Delete = append(f.Delete, t.Name)
			continue
		}
		t = t.Clone()
		t.Normalize()
		f.Tenants = append(f.Tenants, t)
	}
	slices.SortFunc(f.Tenants, func(a, b Tenant) int { return cmp.Compare(a.Name, b.Name) })
	slices.Sort(f.Delete)
	slices.Sort(f.Purge)
	return f
}
