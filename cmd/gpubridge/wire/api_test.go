package wire

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// Nothing connects when the API is built; a request's token lookup opens
// the database then, and a database that is down is an answer, not a
// crash; the next request tries again.
func TestNewConnectsNothingUntilUsed(t *testing.T) {
	var db, other atomic.Int32
	down := errors.New("database down")
	p := APIParams{
		Config:  config.Default(),
		Metrics: api.NewMetrics(nil),
		DB:      func(context.Context) (*sqlx.DB, error) { db.Add(1); return nil, down },
		Slurm:   func(context.Context) (*slurmrest.Client, error) { other.Add(1); return nil, down },
		Bookings: func(context.Context) (*reserve.Service, error) {
			other.Add(1)
			return nil, down
		},
		Burst: func(context.Context) (*BurstService, error) { other.Add(1); return nil, down },
		Usage: func(context.Context) (api.UsageReader, error) { other.Add(1); return nil, down },
	}
	h, loop := API(p)
	if h == nil || loop == nil {
		t.Fatal("API returned no handler or loop")
	}
	if db.Load() != 0 || other.Load() != 0 {
		t.Fatalf("New connected: database %d, others %d", db.Load(), other.Load())
	}
	for i := 1; i <= 2; i++ {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/tenants", nil)
		r.Header.Set("Authorization", "Bearer gpb_"+strings.Repeat("A", 43))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code < 400 {
			t.Errorf("request %d with the database down: %d", i, w.Code)
		}
		if int(db.Load()) != i {
			t.Errorf("after request %d: %d database opens; want %d (a failed build is tried again)", i, db.Load(), i)
		}
	}
}
