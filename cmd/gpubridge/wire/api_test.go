package wire

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
)

// downDB is a connector whose every connection fails, counting them.
type downDB struct{ connects atomic.Int32 }

var errDown = errors.New("database down")

func (d *downDB) Connect(context.Context) (driver.Conn, error) {
	d.connects.Add(1)
	return nil, errDown
}
func (d *downDB) Driver() driver.Driver { return nil }

// The API is built on the cluster's connections and services as plain
// values, and nothing connects while it is built; a request's token
// lookup connects then, and a database that is down is an answer, not a
// crash; the next request connects again.
func TestAPIConnectsNothingUntilUsed(t *testing.T) {
	var slurmRequests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		slurmRequests.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	conn := &downDB{}
	db := sqlx.NewDb(sql.OpenDB(conn), "mysql")
	defer db.Close()
	cl, err := slurmrest.Open(slurmrest.Options{URL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	bk := NewBookings(BookingParams{Config: c, DB: db, Cluster: "tb", Slurm: cl})
	burstSvc, err := Burst(BurstOptions{Config: c, Cluster: "tb", Slurm: cl, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	h, loop := API(APIParams{Config: c, Metrics: api.NewMetrics(nil), Slurm: cl, DB: db, Cluster: "tb",
		Bookings: bk.Service, Burst: burstSvc})
	if h == nil || loop == nil {
		t.Fatal("API returned no handler or loop")
	}
	if n, m := conn.connects.Load(), slurmRequests.Load(); n != 0 || m != 0 {
		t.Fatalf("building the API connected: %d database connections, %d slurmrestd requests", n, m)
	}
	for i := 1; i <= 2; i++ {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/tenants", nil)
		r.Header.Set("Authorization", "Bearer gpb_"+strings.Repeat("A", 43))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code < 400 {
			t.Errorf("request %d with the database down: %d", i, w.Code)
		}
		if int(conn.connects.Load()) < i {
			t.Errorf("after request %d: %d connection attempts; want at least %d (each request tries again)", i, conn.connects.Load(), i)
		}
	}
	if m := slurmRequests.Load(); m != 0 {
		t.Errorf("a token lookup sent %d slurmrestd requests", m)
	}
}
