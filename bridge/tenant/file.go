package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// File is a tenants file for `gpubridge apply -f`:
//
//	version: 1
//	tenants:
//	  - name: acme
//	    description: Acme ML research
//	    organization: acme-corp
//	    users: [alice, bob]
//	    admins: [alice]
//	    gpus: {h100: 16, 1g.10gb: 14}
//	    cpus: 256
//	    memory: 1T
//	    burst: {enabled: true, maxOnDemandGPUs: 8, monthlyBudget: "2500.00"}
//	    bookings: {maxGPUs: {h100: 8}, maxWindow: 14d, minLead: 1d, maxHorizon: 90d}
//	delete: [oldteam]
//	purge: [adoptedteam]
//
// Each listed tenant is created or replaced as a whole (what `add tenant`,
// `modify tenant` and `add/delete user` do one field at a time); tenants
// under delete are deleted as `delete tenant` does (an adopted tenant is
// released: the site's account stays), tenants under purge as `delete
// tenant --purge` does (everything goes). Tenants the file does not
// mention are left alone.
type File struct {
	Version int      `json:"version,omitempty"`
	Tenants []Tenant `json:"tenants,omitempty"`
	Delete  []string `json:"delete,omitempty"`
	Purge   []string `json:"purge,omitempty"`
}

// FileVersion is the only tenants-file version this build reads.
const FileVersion = 1

var (
	fileKeys   = []string{"version", "tenants", "delete", "purge"}
	tenantKeys = []string{"name", "description", "organization", "costCenter", "users", "admins", "gpus", "cpus", "memory", "burst", "bookings", "adopted", "origin"}
	burstKeys  = []string{"enabled", "maxOnDemandGPUs", "monthlyBudget"}
)

// ParseFile reads a tenants file. It reports every syntax and field
// problem at once (the whole file is refused if any is found); rules are
// applied as in ValidateSet, with existing the names already stored.
func ParseFile(b []byte, existing []string, r Rules) (File, Problems) {
	var f File
	top, kinds, ps := parseFileTop(b)
	if top == nil {
		return f, ps
	}
	if v, ok := top["version"]; ok {
		if s, isScalar := scalar(v); !isScalar || s != fmt.Sprint(FileVersion) {
			ps.Add("version", "must be %d", FileVersion)
		}
		f.Version = FileVersion
	}
	if v, ok := top["tenants"]; ok {
		ps = append(ps, parseTenants(v, kinds, &f)...)
	}
	for _, key := range []string{"delete", "purge"} {
		if v, ok := top[key]; ok {
			ps = append(ps, parseRemovals(key, v, kinds, &f)...)
		}
	}
	if len(f.Tenants) == 0 && len(f.Delete) == 0 && len(f.Purge) == 0 && len(ps) == 0 {
		ps.Add("tenants", "the file declares no tenants and deletes none")
	}
	ps = append(ps, ValidateSet(f.Tenants, existing, r, true)...)
	ps = dedupe(ps)
	if len(ps) > 0 {
		return f, ps
	}
	for i := range f.Tenants {
		f.Tenants[i].Normalize()
	}
	return f, nil
}

// parseFileTop reads the file's top mapping, its YAML kinds, and the
// problems of its keys; the mapping is nil when the file is too big, not
// YAML, or not a mapping.
func parseFileTop(b []byte) (map[string]json.RawMessage, *yamlNode, Problems) {
	var ps Problems
	if len(b) > MaxFileBytes {
		ps.Add("file", "is %d bytes; at most %d (4 MiB): split it into several files", len(b), MaxFileBytes)
		return nil, nil, ps
	}
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		ps.Add("file", "is not valid YAML: %v", err)
		return nil, nil, ps
	}
	kinds := readYAMLKinds(b)
	var top map[string]json.RawMessage
	if err := decode(j, &top); err != nil || top == nil {
		ps.Add("file", "must be a YAML mapping with a tenants: list")
		return nil, nil, ps
	}
	for _, k := range sortedKeys(top) {
		if !slices.Contains(fileKeys, k) {
			ps.Add(k, "is not a file key; known keys: %s", strings.Join(fileKeys, ", "))
		}
	}
	return top, kinds, ps
}

// parseTenants reads the file's tenants list into f, each tenant's
// problems labelled with its place (and name).
func parseTenants(v json.RawMessage, kinds *yamlNode, f *File) Problems {
	var ps Problems
	var items []json.RawMessage
	if err := decode(v, &items); err != nil {
		ps.Add("tenants", "must be a list of tenants")
	}
	for i, item := range items {
		t, tp := parseTenant(item, kinds.get("tenants").item(i))
		label := fmt.Sprintf("tenants[%d]", i)
		if t.Name != "" {
			label += " (" + t.Name + ")"
		}
		ps = append(ps, tp.Prefixed(label)...)
		f.Tenants = append(f.Tenants, t)
	}
	return ps
}

// parseRemovals reads the file's delete or purge list (key) into f: valid
// names, each given in one place only.
func parseRemovals(key string, v json.RawMessage, kinds *yamlNode, f *File) Problems {
	var ps Problems
	names, msg := stringList(v)
	if msg != "" {
		ps.Add(key, "%s", msg)
	}
	for i, n := range names {
		if m := kindProblem(kinds.get(key).item(i), wantName, n); m != "" {
			ps.Add(fmt.Sprintf("%s[%d]", key, i), "%s", m)
		} else if m := CheckName(n); m != "" {
			ps.Add(fmt.Sprintf("%s[%d]", key, i), "%s", m)
		}
		for _, t := range f.Tenants {
			if t.Name == n {
				ps.Add(fmt.Sprintf("%s[%d]", key, i), "%q is also listed under tenants; give it in one place", n)
			}
		}
		if key == "purge" && slices.Contains(f.Delete, n) {
			ps.Add(fmt.Sprintf("purge[%d]", i), "%q is also listed under delete; give it in one place (purge deletes an adopted tenant's site account too, delete releases it)", n)
		}
	}
	if key == "delete" {
		f.Delete = names
	} else {
		f.Purge = names
	}
	return ps
}

// Marshal writes f as YAML (the form ParseFile reads). A tenant's adopted
// mark is written (adopted: true), so that a dump restores it; its state
// is not (a tenant being deleted is listed under delete).
func (f File) Marshal() ([]byte, error) {
	if f.Version == 0 {
		f.Version = FileVersion
	}
	out := f
	out.Tenants = make([]Tenant, len(f.Tenants))
	for i, t := range f.Tenants {
		t = t.Clone()
		t.State = "" // set by gpubridge, not by files
		out.Tenants[i] = t
	}
	return yaml.Marshal(out)
}

// parseTenant reads one tenant of a file; kinds is its YAML node (nil
// when not known), for the checks of kindProblem.
func parseTenant(raw json.RawMessage, kinds *yamlNode) (Tenant, Problems) {
	var ps Problems
	t := Tenant{State: Active}
	var m map[string]json.RawMessage
	if err := decode(raw, &m); err != nil || m == nil {
		ps.Add("", "must be a mapping with at least a name")
		return t, ps
	}
	for _, k := range sortedKeys(m) {
		v := m[k]
		kn := kinds.get(k)
		switch k {
		case "name":
			s, _ := scalar(v)
			t.Name = s
			if msg := kindProblem(kn, wantName, s); msg != "" {
				ps.Add("name", "%s", msg)
				t.Name = kn.raw // as written, so that problems name it so
			}
		case "description", "organization", "costCenter":
			ps = append(ps, parseText(&t, k, v, kn)...)
		case "users", "admins":
			ps = append(ps, parseNames(&t, k, v, kn)...)
		case "gpus":
			q, qp := parseQuotaValue(v, kn)
			ps = append(ps, qp...)
			t.GPUs = q
		case "cpus", "memory":
			ps = append(ps, parseSize(&t, k, v, kn)...)
		case "burst":
			ps = append(ps, parseBurst(v, &t.Burst, kn)...)
		case "bookings":
			ps = append(ps, parseBookings(v, &t.Bookings, kn)...)
		case "adopted", "origin":
			ps = append(ps, parseAdoption(&t, k, v)...)
		default:
			ps.Add(k, "is not a tenant field; known fields: %s", strings.Join(tenantKeys, ", "))
		}
	}
	if t.Origin != nil && !t.Adopted {
		ps.Add("origin", "is only for an adopted tenant (adopted: true)")
	}
	return t, ps
}

// parseText reads a tenant's text field k: description, organization or
// costCenter.
func parseText(t *Tenant, k string, v json.RawMessage, kn *yamlNode) Problems {
	var ps Problems
	s, ok := scalar(v)
	if !ok {
		ps.Add(k, "must be text")
	} else if msg := kindProblem(kn, wantText, s); msg != "" {
		ps.Add(k, "%s", msg)
	}
	switch k {
	case "description":
		t.Description = s
	case "organization":
		t.Organization = s
	default:
		t.CostCenter = s
	}
	return ps
}

// parseNames reads a tenant's list of user names k: users or admins (a
// name of the wrong YAML kind is kept as written).
func parseNames(t *Tenant, k string, v json.RawMessage, kn *yamlNode) Problems {
	var ps Problems
	l, msg := stringList(v)
	if msg != "" {
		ps.Add(k, "%s", msg)
	}
	for i, u := range l {
		if m := kindProblem(kn.item(i), wantName, u); m != "" {
			ps.Add(fmt.Sprintf("%s[%d]", k, i), "%s", m)
			l[i] = kn.item(i).raw
		}
	}
	if k == "users" {
		t.Users = l
	} else {
		t.Admins = l
	}
	return ps
}

// parseSize reads a tenant's cpus or memory (k), set only when valid.
func parseSize(t *Tenant, k string, v json.RawMessage, kn *yamlNode) Problems {
	var ps Problems
	s, _ := scalar(v)
	var n int64
	var mb Megabyte
	var msg string
	if k == "cpus" {
		n, msg = ParseCount(s, MaxCPUs)
	} else {
		mb, msg = ParseMemory(s)
	}
	if km := kindProblem(kn, wantCount, s); km != "" {
		msg = km
	}
	switch {
	case msg != "":
		ps.Add(k, "%s", msg)
	case k == "cpus":
		t.CPUs = &n
	default:
		t.Memory = &mb
	}
	return ps
}

// parseAdoption reads a tenant's adopted mark or its origin (k), both set
// by `gpubridge import` and written by `gpubridge dump`; a file's value
// counts only when it creates the tenant's record (a restore): an existing
// tenant keeps its own (MergeFile).
func parseAdoption(t *Tenant, k string, v json.RawMessage) Problems {
	var ps Problems
	if k == "adopted" {
		s, _ := scalar(v)
		on, msg := ParseBool(s)
		if msg != "" {
			ps.Add("adopted", "%s", msg)
		}
		t.Adopted = on
		return ps
	}
	var o Origin
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		ps.Add("origin", "is not what `gpubridge dump` writes (%v); leave it out unless you restore a dump", err)
	} else {
		t.Origin = &o
	}
	return ps
}

func parseQuotaValue(v json.RawMessage, kinds *yamlNode) (Quota, Problems) {
	var ps Problems
	if s, ok := scalar(v); ok {
		// Also accept the command-line form: gpus: "h100:16,1g.10gb:14".
		qc, qp := ParseQuota("gpus", s)
		ps = append(ps, qp...)
		for _, d := range qc.Drop {
			ps.Add("gpus."+d, "none is only for `modify tenant`; leave the type out instead")
		}
		return qc.Apply(nil), ps
	}
	var m map[string]json.RawMessage
	if err := decode(v, &m); err != nil {
		ps.Add("gpus", "must be a mapping of GPU type to count, such as {h100: 16, 1g.10gb: 14}")
		return nil, ps
	}
	q := Quota{}
	for _, typ := range sortedKeys(m) {
		s, ok := scalar(m[typ])
		if !ok {
			ps.Add("gpus."+typ, "must be a whole number")
			continue
		}
		n, msg := ParseCount(s, MaxGPUs)
		if km := kindProblem(kinds.get(typ), wantCount, s); km != "" {
			msg = km
		}
		if msg != "" {
			ps.Add("gpus."+typ, "%s", msg)
			continue
		}
		q[typ] = n
	}
	if len(q) == 0 {
		q = nil
	}
	return q, ps
}

func parseBurst(v json.RawMessage, b *Burst, kinds *yamlNode) Problems {
	var ps Problems
	var m map[string]json.RawMessage
	if err := decode(v, &m); err != nil || m == nil {
		ps.Add("burst", "must be a mapping with enabled, maxOnDemandGPUs and monthlyBudget")
		return ps
	}
	for _, k := range sortedKeys(m) {
		s, _ := scalar(m[k])
		f := "burst." + k
		switch k {
		case "enabled":
			on, msg := ParseBool(s)
			if msg != "" {
				ps.Add(f, "%s", msg)
			}
			b.Enabled = on
		case "maxOnDemandGPUs":
			n, msg := ParseCount(s, MaxGPUs)
			if km := kindProblem(kinds.get(k), wantCount, s); km != "" {
				msg = km
			}
			if msg != "" {
				ps.Add(f, "%s", msg)
			}
			b.MaxOnDemandGPUs = n
		case "monthlyBudget":
			mo, msg := ParseMoney(s)
			if km := kindProblem(kinds.get(k), wantAmount, s); km != "" {
				msg = km
			}
			if msg != "" {
				ps.Add(f, "%s", msg)
			} else {
				b.MonthlyBudget = &mo
			}
		default:
			ps.Add(f, "is not a burst field; known fields: %s", strings.Join(burstKeys, ", "))
		}
	}
	return ps
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// scalar returns a JSON string, number or boolean as text.
func scalar(raw json.RawMessage) (string, bool) {
	var v any
	if err := decode(raw, &v); err != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return fmt.Sprint(x), true
	case nil:
		return "", true
	}
	return "", false
}

// stringList accepts a YAML list of names or a comma-separated string.
func stringList(raw json.RawMessage) ([]string, string) {
	if s, ok := scalar(raw); ok {
		return splitList(s), ""
	}
	var items []json.RawMessage
	if err := decode(raw, &items); err != nil {
		return nil, "must be a list of names"
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := scalar(it)
		if !ok {
			return out, "must be a list of names"
		}
		out = append(out, s)
	}
	return out, ""
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func dedupe(ps Problems) Problems {
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
