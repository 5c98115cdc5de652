//go:build integration

package ratecard_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestDBRoundTrip saves cards on a scratch database of the testbed's
// MariaDB: the latest is current, an invalid one is refused.
func TestDBRoundTrip(t *testing.T) {
	env := testbed.Require(t)
	db, _ := acctest.ScratchDB(t, env, "ratecard")
	st := ratecard.NewDB(db)
	ctx := context.Background()
	if _, ok, err := st.Current(ctx); err != nil || ok {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	for _, y := range []string{
		"version: 1\ncurrency: EUR\nrates:\n  - {type: h100, perGPUHour: \"2.10\", from: 2026-01-01}\n",
		"version: 1\ncurrency: JPY\ntypes:\n  - {name: 1g.10gb, parent: h100}\nrates:\n  - {type: h100, perGPUHour: \"350\", from: 2026-01-01}\n",
	} {
		card, err := pricing.ParseYAML([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Save(ctx, card, "test", time.Now()); err != nil {
			t.Fatal(err)
		}
		got, ok, err := st.Current(ctx)
		if err != nil || !ok {
			t.Fatalf("Current: %v %v", ok, err)
		}
		a, _ := card.YAML()
		b, _ := got.YAML()
		if d := cmp.Diff(string(a), string(b)); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	}
	if err := st.Save(ctx, pricing.Card{}, "test", time.Now()); err == nil {
		t.Error("an invalid card must be refused")
	}
}
