package ledger_test

import (
	"testing"

	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/ledger/ledgertest"
)

func TestMemoryConformance(t *testing.T) {
	ledgertest.Run(t, func(*testing.T) ledgertest.Store { return ledger.NewMemory() })
}

func TestMemoryBookingConformance(t *testing.T) {
	ledgertest.RunBookings(t, func(*testing.T) ledgertest.BookingStore { return ledger.NewMemory() })
}
