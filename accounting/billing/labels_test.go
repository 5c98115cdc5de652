package billing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/accounting/meter"
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

// profileNames are tenant names with their profiles (TenantProfiles).
type profileNames struct {
	names
	profiles map[string]export.Profile
}

func (p profileNames) Profiles(context.Context) (map[string]export.Profile, error) {
	return p.profiles, nil
}

// TestTenantProfilesOpenAndClosed: an open period's rows carry the
// tenant's current profile (accounts matched without case); the close
// stores it, so a closed period's export keeps the cost centre it was
// closed with after the tenant's changes.
func TestTenantProfilesOpenAndClosed(t *testing.T) {
	ctx := context.Background()
	b, l, cards := books(t)
	acme := export.Profile{Description: "Acme ML", Organization: "Acme", CostCenter: "CC-4711"}
	labelsWith := func(p export.Profile) LabelSource {
		return func(ctx context.Context) (ledger.Labeler, error) {
			return TenantLabels(ctx, profileNames{names{"Acme"}, map[string]export.Profile{"Acme": p}})
		}
	}
	b.Labels = labelsWith(acme)
	profiles := func() []export.Profile {
		s, err := b.Summary(ctx, nov, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []export.Profile
		for _, r := range s.Rows {
			out = append(out, r.Profile)
		}
		return out
	}
	if d := cmp.Diff([]export.Profile{acme, acme}, profiles()); d != "" {
		t.Errorf("open (-want +got)\n%s", d)
	}
	asOf := ledgertest.TS("2026-12-01 01:00:00")
	if _, err := l.ApplyBatch(ctx, cluster, asOf, meter.Batch{Source: "t", From: 0, Through: asOf}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReplaceAccruals(ctx, cluster, asOf, nil); err != nil {
		t.Fatal(err)
	}
	c := Closer{Cluster: cluster, Ledger: l, Cards: cards, Labels: b.Labels, Clock: func() time.Time { return time.Unix(asOf, 0) }}
	if _, err := c.Close(ctx, CloseOptions{Period: nov, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	b.Labels = labelsWith(export.Profile{CostCenter: "CC-0001"})
	if d := cmp.Diff([]export.Profile{acme}, profiles()); d != "" {
		t.Errorf("closed, after the tenant's cost centre changed (-want +got)\n%s", d)
	}
}
