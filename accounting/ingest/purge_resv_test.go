package ingest

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// check runs rollupCheck over the hours [h0, h1) with gres/gpu (1001) as
// the measured TRES, and returns the missing use by association.
func check(h0, h1 int64, rollup map[int64]map[int64]int64, resvs []resvRow, jobs []jobRow) map[int64]Missing {
	c := newRollupCheck([]int64{1001}, h0, h1)
	for assoc, byHour := range rollup {
		for at, sec := range byHour {
			c.addRollup(assoc, at, sec)
		}
	}
	for _, r := range resvs {
		c.addResv(r)
	}
	for _, j := range jobs {
		if c.wants(j) {
			c.addJob(j)
		}
	}
	return c.missing()
}

// TestRollupCheckReservations: the rollups of slurmdbd give a
// reservation's idle GPU time to the associations of its assoclist
// (as_mysql_hourly_rollup); the check allows exactly that share and still
// finds use beyond it. Association 3 is the account association in the
// reservations' assoclist, 10 a user's association running jobs in them.
func TestRollupCheckReservations(t *testing.T) {
	const h = int64(hour)
	H := 1000 * h // the first checked hour
	resv := func(start, end int64, assocs ...int64) resvRow {
		return resvRow{ID: 7, Start: start, End: end, Assocs: assocs, N: int64(len(assocs)), Count: []int64{1}}
	}
	job := func(assoc, resv, start, end, gpus int64) jobRow {
		return jobRow{Assoc: assoc, Resv: resv, Eligible: start - 5, Start: start, End: end, Count: []int64{gpus}}
	}
	type ru = map[int64]map[int64]int64
	cases := map[string]struct {
		rollup ru
		resvs  []resvRow
		jobs   []jobRow
		want   map[int64]Missing
	}{
		"idle reservation alone": {
			rollup: ru{3: {H: 600}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
		},
		"idle reservation: more than its idle time is missing": {
			rollup: ru{3: {H: 700}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 700, IdleSeconds: 600}},
		},
		"partly used: the job's association has the job, the account the rest": {
			rollup: ru{3: {H: 500}, 10: {H: 100}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(10, 7, H+700, H+800, 1)},
		},
		"partly used: the idle time is what the jobs leave": {
			rollup: ru{3: {H: 600}, 10: {H: 100}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(10, 7, H+700, H+800, 1)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 600, IdleSeconds: 500}},
		},
		// The job ran longer than the reservation: only its part inside
		// the reservation's window is taken from the idle time.
		"job outlasting the reservation": {
			rollup: ru{3: {H: 550}, 10: {H: 1050}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(10, 7, H+1150, H+2200, 1)},
		},
		// slurmdbd takes the reservation's count, not the job's, for
		// each second of a job in it (_add_time_tres_list with
		// times_count): a 1-GPU job in a 2-GPU reservation uses it all.
		"reservation's count per job second": {
			rollup: ru{3: {H: 2 * 500}, 10: {H: 100}},
			resvs:  []resvRow{{ID: 7, Start: H + 600, End: H + 1200, Assocs: []int64{3}, N: 1, Count: []int64{2}}},
			jobs:   []jobRow{job(10, 7, H+700, H+800, 1)},
		},
		"reservation's count per job second: one second more is missing": {
			rollup: ru{3: {H: 2*500 + 1}, 10: {H: 100}},
			resvs:  []resvRow{{ID: 7, Start: H + 600, End: H + 1200, Assocs: []int64{3}, N: 1, Count: []int64{2}}},
			jobs:   []jobRow{job(10, 7, H+700, H+800, 1)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 1001, IdleSeconds: 1000}},
		},
		"job outlasting the reservation: one second more is missing": {
			rollup: ru{3: {H: 551}, 10: {H: 1050}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(10, 7, H+1150, H+2200, 1)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 551, IdleSeconds: 550}},
		},
		"two associations share it (integer division)": {
			rollup: ru{3: {H: 300}, 4: {H: 300}},
			resvs:  []resvRow{resv(H+600, H+1201, 3, 4)},
		},
		"two associations share it: one second more is missing": {
			rollup: ru{3: {H: 301}, 4: {H: 300}},
			resvs:  []resvRow{resv(H+600, H+1201, 3, 4)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 301, IdleSeconds: 300}},
		},
		// A denied association ("-5", accounts=-x) counts in the divisor
		// and gets nothing, as in slurmdbd.
		"denied entry in the divisor": {
			rollup: ru{3: {H: 200}},
			resvs:  []resvRow{{ID: 7, Start: H, End: H + 600, Assocs: []int64{3}, N: 3, Count: []int64{1}}},
		},
		"spanning an hour boundary": {
			rollup: ru{3: {H: 500, H + h: 500}, 10: {H: 100, H + h: 100}},
			resvs:  []resvRow{resv(H+3000, H+h+600, 3)},
			jobs:   []jobRow{job(10, 7, H+3500, H+h+100, 1)},
		},
		"spanning an hour boundary: each hour's idle time in its hour": {
			rollup: ru{3: {H: 600, H + h: 500}, 10: {H: 100, H + h: 100}},
			resvs:  []resvRow{resv(H+3000, H+h+600, 3)},
			jobs:   []jobRow{job(10, 7, H+3500, H+h+100, 1)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 600, IdleSeconds: 500}},
		},
		"time_force raises the start": {
			rollup: ru{3: {H: 1800}},
			resvs:  []resvRow{{ID: 7, Start: H, End: H + h, Force: H + 1800, Assocs: []int64{3}, N: 1, Count: []int64{1}}},
		},
		"time_force: the hour before it is not idle time": {
			rollup: ru{3: {H: 3600}},
			resvs:  []resvRow{{ID: 7, Start: H, End: H + h, Force: H + 1800, Assocs: []int64{3}, N: 1, Count: []int64{1}}},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 3600, IdleSeconds: 1800}},
		},
		// An update ends a row and starts the next: a job across it is
		// taken from each row's idle time for its part in that row.
		"two versions of one reservation": {
			rollup: ru{3: {H: 1000}, 10: {H: 1000}},
			resvs:  []resvRow{resv(H, H+1000, 3), resv(H+1000, H+2000, 3)},
			jobs:   []jobRow{job(10, 7, H+500, H+1500, 1)},
		},
		"two versions of one reservation: one second more is missing": {
			rollup: ru{3: {H: 1001}, 10: {H: 1000}},
			resvs:  []resvRow{resv(H, H+1000, 3), resv(H+1000, H+2000, 3)},
			jobs:   []jobRow{job(10, 7, H+500, H+1500, 1)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 1001, IdleSeconds: 1000}},
		},
		// A deleted row (deleted=1, time_end the deletion time) is a row
		// like the others; one that ended before the hour is not read.
		"rows outside the hours give nothing": {
			rollup: ru{3: {H: 100}},
			resvs:  []resvRow{resv(H-600, H-1, 3)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 100}},
		},
		// slurmdbd reads only jobs with an eligible time: a job without
		// one leaves the idle time whole.
		"job without an eligible time": {
			rollup: ru{3: {H: 600}, 10: {H: 100}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{{Assoc: 10, Resv: 7, Start: H + 700, End: H + 800, Count: []int64{1}}},
		},
		"job of another reservation": {
			rollup: ru{3: {H: 600}, 10: {H: 100}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(10, 8, H+700, H+800, 1)},
		},
		// The rollups hold the reservation's idle time and a job outside
		// it whose row is gone: the job's GPU-seconds are missing.
		"genuinely missing row of an association with a reservation": {
			rollup: ru{3: {H: 600 + 900}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 1500, IdleSeconds: 600}},
		},
		// A user's job row in the reservation gone: its association's
		// rollup is found in full (the account's share grows by as much,
		// which is no refusal).
		"missing row of a job in the reservation": {
			rollup: ru{3: {H: 500}, 10: {H: 100}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			want:   map[int64]Missing{10: {From: H, To: H + h, RollupSeconds: 100}},
		},
		// What goes undetected: a missing row of an association in the
		// assoclist, inside the reservation, is found only beyond the
		// share its absence adds (300 seconds of which 300/2 show).
		"missing row of an assoclist association inside the reservation": {
			rollup: ru{3: {H: 300 + 150}, 4: {H: 150}},
			resvs:  []resvRow{resv(H+600, H+1200, 3, 4)},
			want:   map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 450, IdleSeconds: 300}},
		},
		"association without reservations": {
			rollup: ru{20: {H: 3600, H + h: 3600}, 3: {H: 600}},
			resvs:  []resvRow{resv(H+600, H+1200, 3)},
			jobs:   []jobRow{job(20, 0, H, H+h, 1)},
			want:   map[int64]Missing{20: {From: H + h, To: H + 2*h, RollupSeconds: 3600}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := check(H, H+3*h, tc.rollup, tc.resvs, tc.jobs)
			want := tc.want
			if want == nil {
				want = map[int64]Missing{}
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("missing (-want +got)\n%s", d)
			}
		})
	}
}

// TestRollupCheckWithoutReservations: the idle time a reservation leaves
// is what the check used to report as missing rows (the bug: every booking
// not fully used stopped the ingest).
func TestRollupCheckWithoutReservations(t *testing.T) {
	const h = int64(hour)
	H := 1000 * h
	got := check(H, H+h, map[int64]map[int64]int64{3: {H: 600}}, nil, nil)
	want := map[int64]Missing{3: {From: H, To: H + h, RollupSeconds: 600}}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("missing (-want +got)\n%s", d)
	}
	if s := got[3].String(); s != ": 600 GPU-seconds (rollups 600, job rows 0) in 1970-02-11T16:00:00Z..1970-02-11T17:00:00Z" {
		t.Errorf("String() = %q", s)
	}
	m := Missing{Account: "acme", From: H, To: H + h, RollupSeconds: 1500, JobSeconds: 100, IdleSeconds: 600}
	if s, want := m.String(), "acme: 800 GPU-seconds (rollups 1500, job rows 100, reservations' idle time 600) in 1970-02-11T16:00:00Z..1970-02-11T17:00:00Z"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
}

func TestParseAssocList(t *testing.T) {
	for s, want := range map[string]struct {
		ids []int64
		n   int64
	}{
		"3":          {[]int64{3}, 1},
		"3,5":        {[]int64{3, 5}, 2},
		"3,5,3, 5 ,": {[]int64{3, 5}, 2},
		",3,,-7":     {[]int64{3}, 2},
		"":           {nil, 0},
		"-7,-8":      {nil, 2},
		"12,x":       {[]int64{12}, 2},
	} {
		ids, n := parseAssocList(s)
		if d := gocmp.Diff(want.ids, ids); d != "" || n != want.n {
			t.Errorf("parseAssocList(%q) = %v, %d; want %v, %d", s, ids, n, want.ids, want.n)
		}
	}
}

func TestResvWindow(t *testing.T) {
	const h = int64(hour)
	H := 1000 * h
	for name, tc := range map[string]struct {
		r    resvRow
		s, e int64
		ok   bool
	}{
		"inside":                 {resvRow{Start: H + 10, End: H + 20}, H + 10, H + 20, true},
		"clipped to the hour":    {resvRow{Start: H - 10, End: H + h + 20}, H, H + h, true},
		"time_force later":       {resvRow{Start: H + 10, End: H + 20, Force: H + 15}, H + 15, H + 20, true},
		"time_force earlier":     {resvRow{Start: H + 10, End: H + 20, Force: H + 5}, H + 10, H + 20, true},
		"ends at the hour start": {resvRow{Start: H - 10, End: H}, 0, 0, false},
		"starts at the hour end": {resvRow{Start: H + h, End: H + h + 5}, 0, 0, false},
		"no end: not read":       {resvRow{Start: H + 10}, 0, 0, false},
		"forced past its end":    {resvRow{Start: H + 10, End: H + 20, Force: H + 30}, 0, 0, false},
	} {
		s, e, ok := tc.r.window(H)
		if ok != tc.ok || ok && (s != tc.s || e != tc.e) {
			t.Errorf("%s: window = %d, %d, %v; want %d, %d, %v", name, s-H, e-H, ok, tc.s-H, tc.e-H, tc.ok)
		}
	}
}
