//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/accounting/billing"
	"github.com/gpubridge/gpubridge/accounting/export"
	"github.com/gpubridge/gpubridge/accounting/export/exporttest"
	"github.com/gpubridge/gpubridge/accounting/ingest"
	"github.com/gpubridge/gpubridge/accounting/ledger"
	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/accounting/pricing"
	"github.com/gpubridge/gpubridge/accounting/ratecard"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// TestBookingBilledOnTestbed: a real booking of a tenant of its own
// (bkbNNNNN, new in each run: the testbed's ledger keeps earlier runs' use) (1 h100 for
// 5 minutes, projected to its Slurm reservation) with a real job inside it.
// Its Slurm record is ingested from slurm_acct_db and the booking charged
// into a scratch ledger: the charge is count x window (300 GPU-seconds) at
// the booked rate, the job's use is tier booked at 0 with the booking's
// id, both equal an independent recomputation (the booking's stored times,
// sacct's ElapsedRaw, exact rational arithmetic), a re-run of the charge
// adds nothing, and CSV, JSON and FOCUS (conformant) show the booking line.
func TestBookingBilledOnTestbed(t *testing.T) {
	acct := fmt.Sprintf("bkb%05d", rand.IntN(1e5))
	h := newTenantIT(t, acct)
	ctx := context.Background()
	prefix := bookingPrefix(t)
	h.ok("-i", "add", "tenant", acct, "gpus=h100:1", "users=erin")
	h.apply()
	h.freeH100(1)
	b, name := h.addBooking(prefix, "tenant="+acct, "gpus=h100:1", "start=now", "duration=5m", "purpose=billing")
	if out := h.ok("project"); !strings.Contains(out, "create reservation "+name) {
		t.Fatalf("project:\n%s", out)
	}
	job := h.mustSbatch("erin", "-A", acct, "-p", "pool", "--reservation="+name, "--gres=gpu:h100:1", "-t", "2", "--wrap", "sleep 12")
	var elapsed int64
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// ReservationId, not Reservation: sacct finds the name by joining
		// the start time to a reservation row, which misses a job started
		// in the reservation row's second (reservation facts, pitfall 8).
		out, _ := h.env.Run(ctx, "", nil, "sacct", "-n", "-X", "-P", "-j", strconv.FormatInt(job, 10), "-o", "State,ElapsedRaw,ReservationId")
		f := strings.Split(strings.TrimSpace(out), "|")
		if len(f) == 3 && f[0] == "COMPLETED" {
			elapsed, _ = strconv.ParseInt(f[1], 10, 64)
			if f[2] == "" || f[2] == "0" {
				t.Errorf("sacct: job %d ran in no reservation (ReservationId %q), want %s's", job, f[2], name)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not complete: %q", job, out)
		}
		time.Sleep(2 * time.Second)
	}
	if elapsed <= 0 {
		t.Fatalf("job %d: ElapsedRaw %d", job, elapsed)
	}
	// An ingest measures as of the current second: a run that ended in it
	// is still open to that pass (the next one finishes it). Ingest once
	// its end is in the past, as the test reads the finished line.
	time.Sleep(2 * time.Second)
	var shown []reserve.Booking
	if err := json.Unmarshal([]byte(h.ok("--json", "show", "bookings", strconv.FormatInt(b.ID, 10))), &shown); err != nil || len(shown) != 1 {
		t.Fatalf("show bookings: %v %v", err, shown)
	}
	b = shown[0]

	// A scratch ledger.
	cfg, err := mysql.ParseDSN(h.env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sqldb.Open(ctx, h.env.DBDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = fmt.Sprintf("gpubridge_bkbill_%06d", rand.IntN(1e6))
	if _, err := admin.Exec("CREATE DATABASE " + cfg.DBName); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + cfg.DBName); err != nil {
			t.Errorf("drop the scratch database: %v", err)
		}
		admin.Close()
	})
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store := ledger.NewDB(db, nil)
	ro, err := sqldb.Open(ctx, h.env.SlurmDBDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	src, err := ingest.NewSlurmDB(ro, h.env.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	in := &ingest.Ingester{Cluster: h.env.Cluster, Source: src, Ledger: store, UseHostClock: true,
		Rules: meter.TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "ondemand", BookingPrefix: prefix}}
	if _, err := in.Ingest(ctx, ingest.Window{From: b.Start.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	charger := billing.BookingCharger{Cluster: h.env.Cluster, Ledger: store, Policy: meter.Cancellation{FreeBefore: 24 * time.Hour},
		Bookings: func(context.Context) ([]meter.BookedWindow, []string, error) {
			ws, un := reserve.BookedWindows([]reserve.Booking{b})
			return ws, un, nil
		}}
	res, err := charger.Charge(ctx)
	if err != nil || res.Lines == 0 {
		t.Fatalf("charge: %+v %v", res, err)
	}
	if res, err := charger.Charge(ctx); err != nil || res.Lines != 0 {
		t.Errorf("second charge: %+v %v, want nothing written", res, err)
	}

	// The ledger against an independent recomputation.
	p := meter.PeriodOf(b.Start)
	window := b.End.Unix() - b.Start.Unix()
	if window != 300 {
		t.Errorf("booking window %d s, want 300", window)
	}
	var charged, inside int64
	for _, q := range []meter.Period{p, p + 1} {
		if err := store.Charges(ctx, h.env.Cluster, ledger.LineQuery{Booked: q, Account: acct}, func(l meter.Line) error {
			if l.Booking == b.ID {
				charged += l.GPUSeconds
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := store.Lines(ctx, h.env.Cluster, ledger.LineQuery{Booked: q, Account: acct}, func(l meter.Line) error {
			if l.Run.JobID == uint32(job) {
				if l.Tier != meter.Booked || l.Booking != b.ID {
					t.Errorf("job %d's line: tier %s booking %d, want booked %d", job, l.Tier, l.Booking, b.ID)
				}
				inside += l.GPUSeconds
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if charged != int64(b.Count)*window {
		t.Errorf("booked GPU-seconds %d, want count x window = %d", charged, int64(b.Count)*window)
	}
	if inside != elapsed {
		t.Errorf("job %d inside: %d GPU-seconds, want sacct's %d", job, inside, elapsed)
	}

	// Priced at the booked rate (36.00 EUR per GPU-hour); the use inside at 0.
	cards := ratecard.NewDB(db)
	card := pricing.Card{Version: pricing.CurrentVersion, Currency: "EUR"}
	for _, r := range []pricing.Rate{{Type: "h100", Tier: meter.Reserved, PerGPUHour: 2_100_000_000}, {Type: "h100", Tier: meter.Booked, PerGPUHour: 36_000_000_000}} {
		r.From, _ = pricing.ParseDate("2020-01-01")
		if card, err = card.WithRate(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := cards.Save(ctx, card, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	want := new(big.Rat).SetFrac64(charged*36, 3600) // EUR
	books := billing.Books{Cluster: h.env.Cluster, Ledger: store, Cards: cards}
	sum, err := books.Summary(ctx, p, acct)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := new(big.Rat).SetString(sum.Amount.String()); got == nil || got.Cmp(want) != 0 {
		t.Errorf("amount %s, want %s", sum.Amount, want.FloatString(2))
	}
	us := sum.Utilization()
	if len(us) != 1 || us[0].Booked != charged || us[0].Used != inside || us[0].Idle() != charged-inside {
		t.Errorf("utilization %+v", us)
	}
	bid := strconv.FormatInt(b.ID, 10)
	// show usage on the scratch ledger: the booking's rows and its
	// utilization after the table.
	t.Setenv("GPUBRIDGE_DB_DSN", cfg.FormatDSN())
	out := h.ok("show", "usage", "tenant="+acct, "period="+p.String())
	t.Logf("$ gpubridge show usage tenant=%s period=%s\n%s", acct, p, out)
	wantUse := strings.Join([]string{p.String(), "(no tenant)", acct, bid, "h100", export.GPUHours(charged), export.GPUHours(inside), export.GPUHours(charged - inside)}, " ")
	if !strings.Contains(out, "Booking utilization") || !strings.Contains(strings.Join(strings.Fields(out), " "), wantUse) {
		t.Errorf("show usage lacks the utilization row %q:\n%s", wantUse, out)
	}
	for _, f := range []export.Format{export.CSV, export.JSON, export.FOCUS} {
		var buf bytes.Buffer
		if err := books.Export(ctx, billing.ExportRequest{Period: p, Account: acct, Options: export.Options{Format: f}}, &buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		switch f {
		case export.JSON:
			var v struct {
				Summary []struct {
					Kind, Tier, Amount string
					Booking            int64
					GPUSeconds         int64 `json:"gpuSeconds"`
					BookedGPUSeconds   int64 `json:"bookedGpuSeconds"`
				} `json:"summary"`
			}
			if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			var gotCharge, gotInside bool
			for _, r := range v.Summary {
				gotCharge = gotCharge || r.Kind == "booking" && r.Booking == b.ID && r.BookedGPUSeconds == charged && r.GPUSeconds == 0 && r.Amount == sum.Amount.String()
				gotInside = gotInside || r.Kind == "usage" && r.Tier == "booked" && r.Booking == b.ID && r.GPUSeconds == inside && r.Amount == "0.00"
			}
			if !gotCharge || !gotInside {
				t.Errorf("JSON: charge %v, inside %v:\n%s", gotCharge, gotInside, out)
			}
		default:
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, c := range rows[0] {
				col[c] = i
			}
			found := false
			for _, r := range rows[1:] {
				if f == export.CSV {
					found = found || r[col["kind"]] == "booking" && r[col["booking"]] == bid && r[col["booked_gpu_seconds"]] == strconv.FormatInt(charged, 10) && r[col["gpu_seconds"]] == "0"
				} else {
					found = found || r[col["ChargeCategory"]] == "Purchase" && r[col["x_Booking"]] == bid && r[col["CommitmentDiscountId"]] == export.CommitmentID(h.env.Cluster, b.ID)
				}
			}
			if !found {
				t.Errorf("%s: no line of booking %s:\n%s", f, bid, out)
			}
			if f == export.FOCUS {
				m, _, err := books.View(ctx, p, acct)
				if err != nil {
					t.Fatal(err)
				}
				mb, err := export.MetadataJSON(m)
				if err != nil {
					t.Fatal(err)
				}
				exporttest.Conforms(t, "booking", buf.Bytes(), exporttest.Options(card, mb, nil))
			}
		}
		t.Logf("export chargeback format=%s tenant=%s:\n%s", f, acct, out)
	}
}
