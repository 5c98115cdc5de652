package acctest

import (
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/internal/testbed"
	"github.com/gpubridge/gpubridge/test/fault"
)

// ScratchDB creates an empty, migrated database named gpubridge_m4_<name>_<random>
// (the testbed's gpubridge user may create gpubridge_* databases), and drops it
// when the test ends. It returns the handle and its DSN.
func ScratchDB(t testing.TB, env testbed.Env, name string) (*sqlx.DB, string) {
	t.Helper()
	return fault.ScratchDB(t, env, "m4", name)
}
