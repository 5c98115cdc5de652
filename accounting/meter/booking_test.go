package meter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func utc(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func TestBookingChargesSplitAndCancellation(t *testing.T) {
	nov, dec := Period(2026*12+10), Period(2026*12+11)
	jan := dec + 1
	h := int64(3600)
	day := 24 * h
	b := func(start, end, cancel string, count int64) BookedWindow {
		w := BookedWindow{ID: 7, Account: "acme", Type: "h100", Count: count, Start: utc(start), End: utc(end)}
		if cancel != "" {
			w.CancelledAt = utc(cancel)
		}
		return w
	}
	type part struct {
		P          Period
		Start, End int64
		Sec        int64
	}
	policy := Cancellation{FreeBefore: 24 * time.Hour}
	cases := []struct {
		name   string
		b      BookedWindow
		policy Cancellation
		want   []part
	}{
		{"inside one month", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-12T00:00:00Z"), 2 * 2 * day}}},
		{"across a month end, split at 00:00 UTC", b("2026-11-30T22:00:00Z", "2026-12-01T03:00:00Z", "", 4), policy,
			[]part{{nov, utc("2026-11-30T22:00:00Z"), utc("2026-12-01T00:00:00Z"), 4 * 2 * h}, {dec, utc("2026-12-01T00:00:00Z"), utc("2026-12-01T03:00:00Z"), 4 * 3 * h}}},
		{"across two month ends", b("2026-11-30T23:00:00Z", "2027-01-01T00:00:01Z", "", 1), policy,
			[]part{{nov, utc("2026-11-30T23:00:00Z"), utc("2026-12-01T00:00:00Z"), h}, {dec, utc("2026-12-01T00:00:00Z"), utc("2027-01-01T00:00:00Z"), 31 * day}, {jan, utc("2027-01-01T00:00:00Z"), utc("2027-01-01T00:00:01Z"), 1}}},
		{"ends exactly at a month end", b("2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z", "", 1), policy,
			[]part{{nov, utc("2026-11-30T00:00:00Z"), utc("2026-12-01T00:00:00Z"), day}}},
		{"zero length", b("2026-11-10T00:00:00Z", "2026-11-10T00:00:00Z", "", 2), policy, nil},
		{"zero GPUs", b("2026-11-10T00:00:00Z", "2026-11-11T00:00:00Z", "", 0), policy, nil},
		{"one second", b("2026-11-10T00:00:00Z", "2026-11-10T00:00:01Z", "", 3), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-10T00:00:01Z"), 3}}},
		{"cancelled well before the free window: free", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-08T00:00:00Z", 2), policy, nil},
		{"cancelled exactly freeBefore ahead: free", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-09T00:00:00Z", 2), policy, nil},
		{"cancelled one second late: one second charged", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-09T00:00:01Z", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-10T00:00:01Z"), 2}}},
		{"cancelled 6 h before the start: 18 h of notice charged", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-09T18:00:00Z", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-10T18:00:00Z"), 2 * 18 * h}}},
		{"cancelled after the start: up to cancel + notice", b("2026-11-10T00:00:00Z", "2026-11-20T00:00:00Z", "2026-11-11T00:00:00Z", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-12T00:00:00Z"), 2 * 2 * day}}},
		{"cancelled near the end: capped at the end", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-11T12:00:00Z", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-12T00:00:00Z"), 2 * 2 * day}}},
		{"cancelled after its end: all of it", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-15T00:00:00Z", 2), policy,
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-12T00:00:00Z"), 2 * 2 * day}}},
		{"freeBefore 0: free before the start", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-09T23:59:59Z", 2), Cancellation{}, nil},
		{"freeBefore 0: after the start, up to the cancel time", b("2026-11-10T00:00:00Z", "2026-11-12T00:00:00Z", "2026-11-10T01:00:00Z", 2), Cancellation{},
			[]part{{nov, utc("2026-11-10T00:00:00Z"), utc("2026-11-10T01:00:00Z"), 2 * h}}},
		{"cancelled after start across a month end", b("2026-11-30T00:00:00Z", "2026-12-10T00:00:00Z", "2026-12-01T06:00:00Z", 1), Cancellation{},
			[]part{{nov, utc("2026-11-30T00:00:00Z"), utc("2026-12-01T00:00:00Z"), day}, {dec, utc("2026-12-01T00:00:00Z"), utc("2026-12-01T06:00:00Z"), 6 * h}}},
		// UTC has no leap seconds in Unix time: a day is 86400 s on
		// 2016-12-31 too (its leap second does not exist here).
		{"leap-second day is 86400 s", b("2016-12-31T00:00:00Z", "2017-01-01T00:00:00Z", "", 1), policy,
			[]part{{Period(2016*12 + 11), utc("2016-12-31T00:00:00Z"), utc("2017-01-01T00:00:00Z"), day}}},
		{"leap year February", b("2028-02-28T00:00:00Z", "2028-03-01T00:00:00Z", "", 1), policy,
			[]part{{Period(2028*12 + 1), utc("2028-02-28T00:00:00Z"), utc("2028-03-01T00:00:00Z"), 2 * day}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			us, err := BookingCharges("testbed", c.b, c.policy)
			if err != nil {
				t.Fatal(err)
			}
			var got []part
			var sum int64
			for _, u := range us {
				if u.Tier != Booked || u.Booking != 7 || !u.Final || u.Count != c.b.Count || u.Type != "h100" || u.Run != (RunKey{Cluster: "testbed"}) {
					t.Errorf("usage %+v", u)
				}
				if u.GPUSeconds != u.Count*(u.End-u.Start) {
					t.Errorf("GPU-seconds %d != %d × %d", u.GPUSeconds, u.Count, u.End-u.Start)
				}
				got = append(got, part{u.Period, u.Start, u.End, u.GPUSeconds})
				sum += u.GPUSeconds
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			// The parts add up to count × the charged window.
			if want := c.b.Count * (c.policy.ChargedEnd(c.b) - c.b.Start); sum != max(want, 0) && !(c.b.Count == 0 && sum == 0) {
				t.Errorf("sum %d, want %d", sum, want)
			}
		})
	}
}

// A later cancellation never costs less than an earlier one.
func TestCancellationMonotone(t *testing.T) {
	w := BookedWindow{ID: 1, Count: 3, Start: utc("2026-11-10T00:00:00Z"), End: utc("2026-11-13T00:00:00Z")}
	for _, free := range []time.Duration{0, time.Hour, 24 * time.Hour, 100 * time.Hour} {
		c := Cancellation{FreeBefore: free}
		prev := int64(-1)
		for at := w.Start - 5*86400; at <= w.End+86400; at += 1800 {
			w.CancelledAt = at
			e := c.ChargedEnd(w)
			if e < w.Start || e > w.End || e < prev {
				t.Fatalf("freeBefore %s: cancel at %d charges to %d (previous %d)", free, at, e, prev)
			}
			prev = e
		}
	}
}

func TestBookingChargesRefuseNonsense(t *testing.T) {
	for _, w := range []BookedWindow{{ID: 0, Count: 1, Start: 10, End: 20}, {ID: 1, Count: -1, Start: 10, End: 20}, {ID: 1, Count: 1, Start: 20, End: 10}} {
		if _, err := BookingCharges("c", w, Cancellation{}); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}

func TestRunTierInsideBooking(t *testing.T) {
	rules := TierRules{OnDemandPartition: "ondemand", OnDemandQOS: "burst", BookingPrefix: "gpubridge-"}
	for _, c := range []struct {
		resv, partition string
		tier            Tier
		id              int64
	}{
		{"gpubridge-12", "gpu", Booked, 12},
		{"gpubridge-12", "ondemand", Booked, 12},
		{"gpubridge-", "gpu", Reserved, 0},
		{"gpubridge-12x", "gpu", Reserved, 0},
		{"gpubridge--1", "gpu", Reserved, 0},
		{"other-12", "gpu", Reserved, 0},
		{"", "ondemand", OnDemand, 0},
		{"gpubridge-99999999999999999999", "gpu", Reserved, 0},
	} {
		tier, id := rules.RunTier(Run{Reservation: c.resv, Partition: c.partition})
		if tier != c.tier || id != c.id {
			t.Errorf("%q/%s: %s %d, want %s %d", c.resv, c.partition, tier, id, c.tier, c.id)
		}
	}
	if tier, _ := (TierRules{}).RunTier(Run{Reservation: "gpubridge-1"}); tier != Reserved {
		t.Errorf("no prefix configured: %s", tier)
	}
	us := Split(Run{Key: RunKey{Cluster: "c", JobID: 1, Submit: 1}, Reservation: "gpubridge-5", Start: 100, End: 200, GPUs: []Alloc{{"h100", 2}}}, 300, rules)
	if len(us) != 1 || us[0].Tier != Booked || us[0].Booking != 5 || us[0].GPUSeconds != 200 {
		t.Errorf("split: %+v", us)
	}
}
