//go:build integration

package tokenstore_test

import (
	"context"
	"testing"

	"github.com/gpubridge/gpubridge/bridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/bridge/api/tokenstore/tokenstoretest"
	"github.com/gpubridge/gpubridge/bridge/reserve/store/storetest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestMariaDBConformance runs the suite on a scratch database of the
// testbed's MariaDB, and checks that adds and deletes are in the audit
// log under the token's name while the secret's hash is not.
func TestMariaDBConformance(t *testing.T) {
	env := testbed.Require(t)
	ctx := context.Background()
	sc, err := storetest.New(ctx, env.DBDSN, "gpubridge_tokit")
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	tokenstoretest.Run(t, tokenstore.New(sc.DB), "it")
	var n int
	if err := sc.DB.GetContext(ctx, &n, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'api-token' AND object_name = 'ita/ci' AND actor = 'tester'`); err != nil || n != 4 {
		t.Errorf("audit rows of ita/ci: %d, %v; want 4 (two adds, two deletes)", n, err)
	}
	var leaks int
	if err := sc.DB.GetContext(ctx, &leaks, `SELECT COUNT(*) FROM audit_log WHERE object_kind = 'api-token' AND (after_json LIKE '%hash%' OR before_json LIKE '%hash%')`); err != nil || leaks != 0 {
		t.Errorf("audit rows with a hash: %d, %v", leaks, err)
	}
}
