package billing

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/ledger"
)

// storeNames is a tenant store's names: current and removed (tombstones).
type storeNames struct {
	current, removed []string
	err              error
}

func (s storeNames) Names(context.Context) ([]string, error) { return s.current, nil }
func (s storeNames) RemovedNames(context.Context) ([]string, error) {
	return s.removed, s.err
}

// TestDeletedTenantKeepsItsName: a tenant deleted mid-month (removed from
// the store, its name kept as a tombstone) still names its account's usage
// lines of that month, not "(no tenant)".
func TestDeletedTenantKeepsItsName(t *testing.T) {
	ctx := context.Background()
	b, _, _ := books(t)
	b.Labels = func(ctx context.Context) (ledger.Labeler, error) {
		return TenantLabels(ctx, storeNames{current: []string{"globex"}, removed: []string{"Acme", "globex"}})
	}
	s, err := b.Summary(ctx, nov, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Acme|ACME|accrual|2.10|2.10", "Acme|acme|usage|2.10|2.10"}
	if d := cmp.Diff(want, rows(t, s)); d != "" {
		t.Errorf("usage of a removed tenant (-want +got)\n%s", d)
	}

	// A store that cannot list its tombstones is an error, not unlabelled usage.
	down := errors.New("database down")
	if _, err := TenantLabels(ctx, storeNames{err: down}); !errors.Is(err, down) {
		t.Errorf("TenantLabels with the tombstones unreadable: %v", err)
	}
}
