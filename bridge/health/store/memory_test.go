package store

import (
	"testing"

	"github.com/gpubridge/gpubridge/bridge/health"
)

func TestMemoryConformance(t *testing.T) {
	conformance(t, func(*testing.T) health.Store { return NewMemory() })
}
