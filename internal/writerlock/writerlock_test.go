package writerlock_test

import (
	"strings"
	"testing"

	"github.com/gpubridge/gpubridge/internal/writerlock"
)

func TestNameFitsMariaDB(t *testing.T) {
	long := strings.Repeat("c", 64)
	if n := writerlock.Name(long); len(n) > 64 || !strings.HasPrefix(n, "gpubridge-writer:") || n == writerlock.Name(strings.Repeat("c", 63)) {
		t.Errorf("Name(64 chars) = %q (%d)", n, len(n))
	}
	if n := writerlock.Name("testbed"); n != "gpubridge-writer:testbed" {
		t.Errorf("Name(testbed) = %q", n)
	}
}
