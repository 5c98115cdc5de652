// Command profbench (exploration, not committed) profiles one ingest of the bench month.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	ctx := context.Background()
	src0, err := sqldb.Open(ctx, os.Getenv("GPUBRIDGE_SLURMDB_DSN"))
	if err != nil {
		panic(err)
	}
	src, _ := ingest.NewSlurmDB(src0, os.Getenv("GPUBRIDGE_CLUSTER"))
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	// read only
	for _, all := range []bool{false, true} {
		t0, c0 := time.Now(), cpu()
		n := 0
		err := src.Read(ctx, ingest.Query{From: from.Unix(), To: to.Unix(), AllRows: all}, ingest.Handler{
			Running:  func([]meter.Run) error { return nil },
			Finished: func(r meter.Run, _ uint64) error { n++; _ = meter.Split(r, to.Unix(), meter.TierRules{}); return nil },
		})
		fmt.Printf("read allRows=%v: %d runs in %.2f s wall, %.2f s cpu, err=%v\n", all, n, time.Since(t0).Seconds(), (cpu() - c0).Seconds(), err)
	}
	db, err := sqldb.OpenMigrated(ctx, os.Getenv("GPUBRIDGE_DB_DSN"))
	if err != nil {
		panic(err)
	}
	f, _ := os.Create(os.Args[1])
	_ = pprof.StartCPUProfile(f)
	t0, c0 := time.Now(), cpu()
	in := &ingest.Ingester{Cluster: os.Getenv("GPUBRIDGE_CLUSTER"), Source: src, Ledger: ledger.NewDB(db, nil)}
	res, err := in.Ingest(ctx, ingest.Window{From: from, To: to})
	pprof.StopCPUProfile()
	fmt.Printf("ingest: %d lines in %.2f s wall (read %.2f, write %.2f), %.2f s cpu, err=%v\n", res.Stats.Lines, time.Since(t0).Seconds(), res.ReadTime.Seconds(), res.WriteTime.Seconds(), (cpu() - c0).Seconds(), err)
}
