package tokenstore_test

import (
	"testing"

	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/tokenstore/tokenstoretest"
)

func TestMemoryConformance(t *testing.T) {
	m := tokenstore.NewMemory()
	tokenstoretest.Run(t, m, "mem")
	if len(m.Audit) == 0 {
		t.Error("no audit lines")
	}
}
