package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpubridge/gpubridge/internal/sqldb"
	"github.com/gpubridge/gpubridge/test/bench/synth"
)

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: synthjobs insert|delete [flags]")
		return 2
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	month := fs.String("month", "2026-06", "month (UTC) whose jobs to write")
	rows := fs.Int("rows", 1_000_000, "job rows")
	accounts := fs.Int("accounts", 1000, "accounts")
	gpu := fs.Float64("gpu", 0.40, "share of jobs with GPUs")
	mig := fs.Float64("mig", 0.05, "share of jobs with MIG slices")
	cluster := fs.String("cluster", os.Getenv("GPUBRIDGE_CLUSTER"), "Slurm cluster name")
	_ = fs.Parse(os.Args[2:])
	dsn := os.Getenv("GPUBRIDGE_BENCH_SLURMDB_DSN")
	if dsn == "" || *cluster == "" {
		fmt.Fprintln(os.Stderr, "synthjobs: GPUBRIDGE_BENCH_SLURMDB_DSN and GPUBRIDGE_CLUSTER must be set (source .testbed/env)")
		return 2
	}
	ctx := context.Background()
	db, err := sqldb.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "synthjobs:", err)
		return 1
	}
	defer db.Close()
	start := time.Now()
	switch os.Args[1] {
	case "delete":
		n, err := synth.Delete(ctx, db, *cluster, synth.MinJobID, synth.TestIDs)
		if err == nil {
			var m int64
			m, err = synth.Delete(ctx, db, *cluster, synth.BigBenchIDs, synth.BigBenchIDs+synth.BigBenchRows)
			n += m
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthjobs:", err)
			return 1
		}
		fmt.Printf("deleted %d synthetic rows in %.1f s\n", n, time.Since(start).Seconds())
	case "insert":
		m, err := time.Parse("2006-01", *month)
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthjobs: -month:", err)
			return 2
		}
		tres, err := synth.LoadTRES(ctx, db)
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthjobs:", err)
			return 1
		}
		qos, err := synth.QOSIDs(ctx, db, "normal", "ondemand")
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthjobs:", err)
			return 1
		}
		first := uint32(synth.MinJobID)
		if *rows > synth.TestIDs-synth.MinJobID {
			first = synth.BigBenchIDs // beyond the tests' ids
		}
		if *rows > synth.BigBenchRows {
			fmt.Fprintf(os.Stderr, "synthjobs: at most %d rows\n", synth.BigBenchRows)
			return 2
		}
		spec := synth.Month{Start: m, Jobs: *rows, Accounts: *accounts, Seed: 1, FirstID: first, GPUShare: *gpu, MIGShare: *mig, QOS: qos}
		buf := make([]synth.Row, 0, 10000)
		var n, gpus int
		err = spec.Generate(tres, func(r synth.Row) error {
			buf = append(buf, r)
			n++
			if len(buf) == cap(buf) {
				if err := synth.Insert(ctx, db, *cluster, buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			return nil
		})
		if err == nil {
			err = synth.Insert(ctx, db, *cluster, buf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "synthjobs:", err)
			return 1
		}
		_ = gpus
		fmt.Printf("inserted %d synthetic rows for %s in %.1f s\n", n, *month, time.Since(start).Seconds())
	default:
		fmt.Fprintln(os.Stderr, "usage: synthjobs insert|delete [flags]")
		return 2
	}
	return 0
}
