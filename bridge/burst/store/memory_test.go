package store

import "testing"

func TestMemoryConformance(t *testing.T) {
	conformance(t, func(*testing.T) conformer { return NewMemory() })
}
