// Command readbench (exploration, not committed) times the SlurmDB source alone.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func main() {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, os.Getenv("GPUBRIDGE_SLURMDB_DSN"))
	if err != nil {
		panic(err)
	}
	src, _ := ingest.NewSlurmDB(db, os.Getenv("GPUBRIDGE_CLUSTER"))
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	to := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	for _, all := range []bool{false, true, false, true} {
		t0 := time.Now()
		n, g := 0, 0
		err := src.Read(ctx, ingest.Query{From: from, To: to, AllRows: all}, ingest.Handler{
			Running:  func([]meter.Run) error { return nil },
			Finished: func(r meter.Run, _ uint64) error { n++; if len(r.GPUs) > 0 { g++ }; _ = meter.Split(r, to, meter.TierRules{}); return nil },
		})
		fmt.Printf("readbench allRows=%v: %d runs (%d GPU) in %.2f s err=%v\n", all, n, g, time.Since(t0).Seconds(), err)
	}
}
