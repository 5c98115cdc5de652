package tenant

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func adoptedAcme() Tenant {
	return Tenant{Name: "acme", Users: []string{"bob", "zed"}, State: Active, Adopted: true,
		Origin: &Origin{Description: "Acme site", Organization: "acme-site",
			Assocs:       []OriginAssoc{{User: "zed", QOS: []string{"normal"}, DefaultQOS: "normal"}},
			Coordinators: []string{"zed"},
			QOS:          &OriginQOS{Description: "site qos", GrpTRES: TRES{"cpu": 32}}}}
}

// A release blocks new jobs as a deletion does: the guard table (whose
// readers know active and deleting) says deleting.
func TestGuardReleasingIsDeleting(t *testing.T) {
	r := adoptedAcme()
	r.State = Releasing
	got, err := ParseGuard(Guard([]Tenant{r}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].State != Deleting {
		t.Errorf("guard of a releasing tenant: %+v", got)
	}
}

func TestDeletionState(t *testing.T) {
	created := Tenant{Name: "x"}
	oldAdopted := Tenant{Name: "x", Adopted: true} // imported before origins were recorded
	cases := []struct {
		t     Tenant
		purge bool
		want  State
	}{
		{adoptedAcme(), false, Releasing},
		{adoptedAcme(), true, Deleting},
		{created, false, Deleting},
		{created, true, Deleting},
		{oldAdopted, false, Deleting},
	}
	for _, c := range cases {
		if got := DeletionState(c.t, c.purge); got != c.want {
			t.Errorf("DeletionState(%s adopted=%v origin=%v, purge=%v) = %s, want %s", c.t.Name, c.t.Adopted, c.t.Origin != nil, c.purge, got, c.want)
		}
	}
}

// A dump restores an adopted tenant's origin; a purge under way is listed
// under purge (delete would release it), a release under delete.
func TestDumpOriginRoundTrip(t *testing.T) {
	purging := adoptedAcme()
	purging.Name, purging.State = "purged", Deleting
	releasing := adoptedAcme()
	releasing.Name, releasing.State = "released", Releasing
	f := DumpFile([]Tenant{adoptedAcme(), purging, releasing})
	if !cmp.Equal(f.Purge, []string{"purged"}) || !cmp.Equal(f.Delete, []string{"released"}) {
		t.Errorf("dump: delete %v purge %v", f.Delete, f.Purge)
	}
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, ps := ParseFile(b, nil, Rules{})
	if len(ps) > 0 {
		t.Fatalf("dump does not parse: %v\n%s", ps, b)
	}
	want := adoptedAcme()
	want.Normalize()
	if diff := cmp.Diff([]Tenant{want}, back.Tenants); diff != "" {
		t.Errorf("round trip (-want +got):\n%s\n%s", diff, b)
	}
	if !cmp.Equal(back.Purge, []string{"purged"}) {
		t.Errorf("purge after round trip: %v", back.Purge)
	}
}

func TestFileOriginProblems(t *testing.T) {
	cases := map[string]string{
		"origin without adopted": "tenants:\n- name: acme\n  origin: {description: x, organization: y}\n",
		"unknown origin field":   "tenants:\n- name: acme\n  adopted: true\n  origin: {description: x, nosuch: 1}\n",
		"purge and delete":       "delete: [acme]\npurge: [acme]\n",
		"purge and tenants":      "tenants:\n- name: acme\npurge: [acme]\n",
	}
	for name, src := range cases {
		if _, ps := ParseFile([]byte(src), nil, Rules{}); len(ps) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
	if f, ps := ParseFile([]byte("purge: [acme]\n"), nil, Rules{}); len(ps) > 0 || !cmp.Equal(f.Purge, []string{"acme"}) {
		t.Errorf("purge alone: %v %v", f.Purge, ps)
	}
}
