package wire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
)

func TestCheck(t *testing.T) {
	c := config.Default()
	_, _, err := HealthCheck(c)
	var ve config.ValidationError
	if !errors.As(err, &ve) || ve[0].Field != "health.nodes" {
		t.Fatalf("no nodes: %v", err)
	}
	c.Health.Nodes = []string{"gpu[1-2]", "gpu1", "cpu-a"}
	nodes, cat, err := HealthCheck(c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"gpu1", "gpu2", "cpu-a"}, nodes); d != "" {
		t.Errorf("nodes (-want +got)\n%s", d)
	}
	if len(cat) == 0 {
		t.Error("no built-in checks in the catalog")
	}
	s := HealthSettings(c, nodes)
	if s.Account != c.Health.Account || s.Acceptance.Name != c.Health.Acceptance.Name || len(s.Nodes) != 3 {
		t.Errorf("settings %+v", s)
	}
	c.Health.Nodes = []string{"gpu-[a"}
	if _, _, err := HealthCheck(c); !errors.As(err, &ve) || !strings.Contains(err.Error(), `"gpu-[a"`) {
		t.Errorf("bad hostlist: %v", err)
	}
}

type healthTenants map[string]tenant.Tenant

func (m healthTenants) Get(_ context.Context, name string) (tenant.Tenant, error) {
	t, ok := m[name]
	if !ok {
		return t, tenantstore.ErrNotFound
	}
	return t, nil
}

func TestSpeakFor(t *testing.T) {
	st := healthTenants{"acme": {Name: "acme", Admins: []string{"alice"}}}
	ctx := context.Background()
	for who, want := range map[string]string{"root": "", "alice": "", "bob": "bob is not an admin of tenant acme (its admins: alice)"} {
		err := SpeakFor(ctx, st, "acme", who)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: %v, want %q", who, err, want)
		}
	}
	if err := SpeakFor(ctx, st, "nobody", "root"); !errors.Is(err, ErrNoTenant) {
		t.Errorf("unknown tenant: %v", err)
	}
}
