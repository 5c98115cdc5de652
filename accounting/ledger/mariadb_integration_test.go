//go:build integration

package ledger_test

import (
	"testing"

	"github.com/gpubridge/gpubridge/accounting/internal/acctest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestMariaDBConformance runs the ledger conformance suite on a scratch
// database of the testbed's MariaDB.
func TestMariaDBConformance(t *testing.T) {
	env := testbed.Require(t)
	db, _ := acctest.ScratchDB(t, env, "ledger")
	store := ledger.NewDB(db, nil)
	ledgertest.Run(t, func(*testing.T) ledgertest.Store { return store })
}
