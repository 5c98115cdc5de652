package tenantstore_test

import (
	"testing"

	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/bridge/tenantstore/tenantstoretest"
)

func TestMemoryConformance(t *testing.T) {
	tenantstoretest.Run(t, func(*testing.T) tenantstoretest.Store { return tenantstore.NewMemory() })
}
