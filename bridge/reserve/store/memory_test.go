package store

import (
	"testing"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

func TestMemoryConformance(t *testing.T) {
	conformance(t, func(t *testing.T) backend {
		m := NewMemory()
		return backend{
			open: func(*testing.T) reserve.Store { return m },
			audits: func(_ *testing.T, kind string, id int64) []string {
				var out []string
				for _, e := range m.Audit() {
					if e.ObjectKind == kind && e.ObjectName == itoa(id) {
						out = append(out, e.Action)
					}
				}
				return out
			},
		}
	})
}
