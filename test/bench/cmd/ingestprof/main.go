package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func main() { os.Exit(run()) }

// timedSource notes when the first finished run arrives and when the read ends.
type timedSource struct {
	*ingest.SlurmDB
	inRunning                time.Duration
	firstFinished, lastFinal time.Time
	calls                    int
}

func (s *timedSource) Read(ctx context.Context, q ingest.Query, h ingest.Handler) error {
	fin := h.Finished
	h.Finished = func(r meter.Run, tie uint64) error {
		if s.calls == 0 {
			s.firstFinished = time.Now()
		}
		s.calls++
		return fin(r, tie)
	}
	run := h.Running
	h.Running = func(rs []meter.Run) error {
		t0 := time.Now()
		err := run(rs)
		s.inRunning += time.Since(t0)
		return err
	}
	err := s.SlurmDB.Read(ctx, q, h)
	s.lastFinal = time.Now()
	return err
}

// timedLedger times ApplyBatch.
type timedLedger struct {
	*ledger.DB
	busy        time.Duration
	batches     int
	first, last time.Time
	lines       int
	perBatch    []time.Duration
}

func (l *timedLedger) ApplyBatch(ctx context.Context, cluster string, asOf int64, b meter.Batch) (meter.WriteStats, error) {
	t0 := time.Now()
	if l.first.IsZero() {
		l.first = t0
	}
	st, err := l.DB.ApplyBatch(ctx, cluster, asOf, b)
	d := time.Since(t0)
	l.busy += d
	l.batches++
	l.lines += st.Lines
	l.perBatch = append(l.perBatch, d)
	l.last = time.Now()
	return st, err
}

func run() int {
	from := flag.String("from", "", "window start (UTC, 2006-01-02T15:04:05)")
	to := flag.String("to", "", "window end")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	tr := flag.String("trace", "", "write an execution trace here")
	mem := flag.String("memprofile", "", "write an allocation profile here")
	flag.Parse()
	ctx := context.Background()
	t0 := time.Now()
	parse := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			os.Exit(2)
		}
		return t
	}
	w := ingest.Window{From: parse(*from), To: parse(*to)}
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *tr != "" {
		f, err := os.Create(*tr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			return 1
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			return 1
		}
		defer trace.Stop()
	}
	sdb, err := sqldb.Open(ctx, os.Getenv("GPUBRIDGE_SLURMDB_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		return 1
	}
	defer sdb.Close()
	ldb, err := sqldb.OpenMigrated(ctx, os.Getenv("GPUBRIDGE_DB_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		return 1
	}
	defer ldb.Close()
	cluster := os.Getenv("GPUBRIDGE_CLUSTER")
	src, err := ingest.NewSlurmDB(sdb, cluster)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		return 1
	}
	ts := &timedSource{SlurmDB: src}
	tl := &timedLedger{DB: ledger.NewDB(ldb, nil)}
	in := &ingest.Ingester{Cluster: cluster, Source: ts, Ledger: tl, ChangesEvery: -1, VerifyEvery: -1}
	opened := time.Now()
	res, err := in.Ingest(ctx, w)
	done := time.Now()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingestprof:", err)
		return 1
	}
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestprof:", err)
			return 1
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := func(d time.Duration) string { return fmt.Sprintf("%6.3f s", d.Seconds()) }
	fmt.Printf("runs %d (gpu %d), lines %d in %d batches\n", res.Finished, res.GPURuns, tl.lines, tl.batches)
	fmt.Printf("open + migrate check                 %s\n", s(opened.Sub(t0)))
	fmt.Printf("ingest (Ingest call)                 %s\n", s(done.Sub(opened)))
	fmt.Printf("  before first finished row          %s (lock, clock, watermark, lookups, purge check, running runs)\n", s(ts.firstFinished.Sub(opened)))
	fmt.Printf("  reader: first..last finished row   %s (%d rows)\n", s(ts.lastFinal.Sub(ts.firstFinished)), ts.calls)
	fmt.Printf("  reader's total (ReadTime)          %s\n", s(res.ReadTime))
	fmt.Printf("  writer: ApplyBatch busy            %s of %s between its first and last call\n", s(tl.busy), s(tl.last.Sub(tl.first)))
	fmt.Printf("  after the read, until writer done  %s\n", s(tl.last.Sub(ts.lastFinal)))
	fmt.Printf("  after the writer, until return     %s (passes)\n", s(done.Sub(tl.last)))
	fmt.Printf("  per batch: %v\n", tl.perBatch)
	fmt.Printf("heap sys %d MiB, total alloc %d MiB, GCs %d\n", ms.HeapSys>>20, ms.TotalAlloc>>20, ms.NumGC)
	return 0
}
