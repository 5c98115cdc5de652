package tenant

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/internal/money"
)

func span(d time.Duration) *reserve.Span { s := reserve.Span(d); return &s }

const day = 24 * time.Hour

func TestBookingArgs(t *testing.T) {
	lim := money.MustParse("5000.00")
	cases := map[string]struct {
		args map[string]string
		want BookingPolicy
		ps   Problems
	}{
		"every key": {
			args: map[string]string{"booking.maxgpus": "h100:8,1g.10gb:0", "booking.maxwindow": "14d", "booking.minlead": "36h",
				"booking.maxhorizon": "90d", "booking.spendlimit": "5000.00"},
			want: BookingPolicy{MaxGPUs: map[string]int{"h100": 8, "1g.10gb": 0}, MaxWindow: span(14 * day), MinLead: span(36 * time.Hour),
				MaxHorizon: span(90 * day), MonthlySpendLimit: &lim},
		},
		"zero is no limit": {args: map[string]string{"booking.maxhorizon": "0"}, want: BookingPolicy{MaxHorizon: span(0)}},
		"bad values": {
			args: map[string]string{"booking.maxgpus": "h100:-1,a100:2,h200", "booking.maxwindow": "2 weeks", "booking.minlead": "-1d",
				"booking.spendlimit": "lots"},
			want: BookingPolicy{MaxGPUs: map[string]int{"a100": 2}},
			ps: Problems{
				{Field: "bookings.maxGPUs", Msg: `"h200" has no count; write TYPE:COUNT such as h100:16`},
				{Field: "bookings.maxGPUs.a100", Msg: `unknown GPU type "a100"; the cluster tracks: 1g.10gb, 3g.40gb, h100`},
				{Field: "bookings.maxGPUs.h100", Msg: "-1 is negative; give 0 or more (in Slurm -1 would silently clear the limit)"},
				{Field: "bookings.maxWindow", Msg: `duration "2 weeks": want whole numbers with units w, d, h, m or s, such as 14d, 36h or 1d12h; or 0 for no limit`},
				{Field: "bookings.minLead", Msg: "-1d is negative; give a duration such as 14d, or 0 for no limit"},
				{Field: "bookings.monthlySpendLimit", Msg: `"lots" is not an amount such as 2500.00 (digits, at most 6 decimals)`},
			},
		},
		"window longer than horizon": {
			args: map[string]string{"booking.maxwindow": "30d", "booking.maxhorizon": "7d"},
			want: BookingPolicy{MaxWindow: span(30 * day), MaxHorizon: span(7 * day)},
			ps:   Problems{{Field: "bookings.maxWindow", Msg: "30d is longer than maxHorizon 7d: no booking could use it"}},
		},
		"booking= takes only none": {
			args: map[string]string{"booking": "yes"},
			ps: Problems{{Field: "bookings", Msg: "only booking=none is accepted (it removes the tenant's booking policy, so the default applies); " +
				"set the keys with booking.maxgpus=, booking.maxwindow=, booking.minlead=, booking.maxhorizon=, booking.spendlimit="}},
		},
		"none is for modify": {
			args: map[string]string{"booking.maxgpus": "h100:none"},
			ps:   Problems{{Field: "bookings.maxGPUs.h100", Msg: "none is only for `modify tenant`; leave the type out instead"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tn, ps := FromArgs("acme", c.args)
			ps = append(ps, Validate(tn, testRules)...)
			sortProblems(ps)
			want := append(Problems(nil), c.ps...)
			sortProblems(want)
			if diff := cmp.Diff(want, dedupe(ps)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.want, tn.Bookings); len(c.ps) == 0 && diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBookingUpdate(t *testing.T) {
	base, _ := FromArgs("acme", map[string]string{"booking.maxgpus": "h100:8,1g.10gb:2", "booking.maxwindow": "14d", "booking.spendlimit": "100"})
	cases := map[string]struct {
		set  map[string]string
		want string // BookingPolicy.String
	}{
		"merge a type":   {set: map[string]string{"booking.maxgpus": "h100:4,3g.40gb:1"}, want: "maxgpus=1g.10gb:2,3g.40gb:1,h100:4 maxwindow=14d spendlimit=100.00"},
		"drop a type":    {set: map[string]string{"booking.maxgpus": "1g.10gb:none"}, want: "maxgpus=h100:8 maxwindow=14d spendlimit=100.00"},
		"drop all types": {set: map[string]string{"booking.maxgpus": "1g.10gb:none,h100:none"}, want: "maxwindow=14d spendlimit=100.00"},
		"unset a key":    {set: map[string]string{"booking.maxwindow": "none", "booking.spendlimit": "none"}, want: "maxgpus=1g.10gb:2,h100:8"},
		"set a key":      {set: map[string]string{"booking.minlead": "1h"}, want: "maxgpus=1g.10gb:2,h100:8 maxwindow=14d minlead=1h spendlimit=100.00"},
		"drop it all":    {set: map[string]string{"booking": "none"}, want: ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, ps := Update(base, c.set)
			if len(ps) > 0 {
				t.Fatal(ps)
			}
			if got.Bookings.String() != c.want {
				t.Errorf("policy %q; want %q", got.Bookings.String(), c.want)
			}
			if base.Bookings.String() != "maxgpus=1g.10gb:2,h100:8 maxwindow=14d spendlimit=100.00" {
				t.Errorf("Update changed its input: %q", base.Bookings.String())
			}
			ch := Changes(base, got)
			if len(ch) != 1 || ch[0].Title != "Booking" || ch[0].New != c.want {
				t.Errorf("Changes = %+v", ch)
			}
		})
	}
}

// TestBookingOver: a tenant's keys override the default one by one; the
// types of maxGPUs merge; keys the tenant does not set keep the default's.
func TestBookingOver(t *testing.T) {
	lim := money.MustParse("10")
	def := reserve.Policy{MaxGPUs: map[string]int{"h100": 4, "1g.10gb": 7}, MaxWindow: reserve.Span(30 * day), MaxHorizon: reserve.Span(365 * day)}
	cases := map[string]struct {
		p    BookingPolicy
		want reserve.Policy
	}{
		"nothing set": {want: def},
		"every key": {
			p:    BookingPolicy{MaxGPUs: map[string]int{"h100": 8, "3g.40gb": 0}, MaxWindow: span(0), MinLead: span(day), MaxHorizon: span(90 * day), MonthlySpendLimit: &lim},
			want: reserve.Policy{MaxGPUs: map[string]int{"h100": 8, "1g.10gb": 7, "3g.40gb": 0}, MinLead: reserve.Span(day), MaxHorizon: reserve.Span(90 * day), MonthlySpendLimit: &lim},
		},
		"one key": {
			p:    BookingPolicy{MinLead: span(time.Hour)},
			want: reserve.Policy{MaxGPUs: def.MaxGPUs, MaxWindow: def.MaxWindow, MinLead: reserve.Span(time.Hour), MaxHorizon: def.MaxHorizon},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := c.p.Over(def)
			if diff := cmp.Diff(c.want, got, cmp.Comparer(func(a, b money.Amount) bool { c, err := a.Cmp(b); return err == nil && c == 0 })); diff != "" {
				t.Errorf("Over (-want +got):\n%s", diff)
			}
		})
	}
	if def.MaxGPUs["h100"] != 4 || len(def.MaxGPUs) != 2 {
		t.Errorf("Over changed the default: %v", def.MaxGPUs)
	}
	if got := (BookingPolicy{}).Over(reserve.Policy{}); got.MaxGPUs != nil {
		t.Errorf("empty over empty has MaxGPUs %v", got.MaxGPUs)
	}
}

func TestBookingFile(t *testing.T) {
	f, ps := ParseFile([]byte(`
tenants:
  - name: acme
    gpus: {h100: 2}
    bookings: {maxGPUs: {h100: 8}, maxWindow: 14d, minLead: 36h, maxHorizon: "0", monthlySpendLimit: "5000.00"}
  - name: globex
    bookings: {maxGPUs: {h100: 1.0, a100: 1}, maxWindow: forever, window: 3d, monthlySpendLimit: 10.5}
`), nil, testRules)
	want := Problems{
		{Field: "tenants[1] (globex).bookings.maxGPUs.a100", Msg: `unknown GPU type "a100"; the cluster tracks: 1g.10gb, 3g.40gb, h100`},
		{Field: "tenants[1] (globex).bookings.maxGPUs.h100", Msg: "1.0 is a decimal number; give a whole number without a decimal point, such as 1"},
		{Field: "tenants[1] (globex).bookings.maxWindow", Msg: `duration "forever": want whole numbers with units w, d, h, m or s, such as 14d, 36h or 1d12h; or 0 for no limit`},
		{Field: "tenants[1] (globex).bookings.window", Msg: "is not a bookings field; known fields: maxGPUs, maxWindow, minLead, maxHorizon, monthlySpendLimit"},
	}
	got := append(Problems(nil), ps...)
	sortProblems(got)
	sortProblems(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("problems (-want +got):\n%s", diff)
	}
	f, ps = ParseFile([]byte(`
tenants:
  - name: acme
    bookings: {maxGPUs: {h100: 8}, maxWindow: 14d, minLead: 36h, maxHorizon: "0", monthlySpendLimit: "5000.00"}
`), nil, testRules)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if got := f.Tenants[0].Bookings.String(); got != "maxgpus=h100:8 maxwindow=14d minlead=1d12h maxhorizon=0s spendlimit=5000.00" {
		t.Errorf("parsed policy %q", got)
	}
	// Round trip through Marshal, and through JSON (the audit log, --json).
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, ps := ParseFile(b, nil, testRules)
	if len(ps) > 0 {
		t.Fatalf("%v\n%s", ps, b)
	}
	if diff := cmp.Diff(f.Tenants[0].Bookings.String(), back.Tenants[0].Bookings.String()); diff != "" {
		t.Errorf("file round trip (-want +got):\n%s\n%s", diff, b)
	}
	j, err := json.Marshal(f.Tenants[0])
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON Tenant
	if err := json.Unmarshal(j, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON.Bookings.String() != f.Tenants[0].Bookings.String() {
		t.Errorf("JSON round trip: %q -> %s -> %q", f.Tenants[0].Bookings.String(), j, fromJSON.Bookings.String())
	}
	// A tenant without a policy writes none.
	if b, _ := json.Marshal(Tenant{Name: "x"}); strings.Contains(string(b), "bookings") {
		t.Errorf("empty policy marshalled: %s", b)
	}
}

var resvNaming = Naming{QOSPrefix: "q-", OnDemandQOS: "ondemand", ReservationQOSSuffix: "-resv", ReservationPrefix: "gpubridge-"}

// TestProjectReservationQOS: every tenant gets a reservation QOS (flag
// REQUIRED_RESERVATION, no limits, blocked while deleting), listed on its
// users' associations but never their default; none without a suffix.
func TestProjectReservationQOS(t *testing.T) {
	ts := []Tenant{
		{Name: "acme", Users: []string{"alice"}, GPUs: Quota{"h100": 2}},
		{Name: "globex", Users: []string{"bob"}, State: Deleting},
	}
	o := Project(ts, resvNaming)
	var names []string
	for _, q := range o.QOS {
		names = append(names, q.Name)
	}
	if diff := cmp.Diff([]string{"ondemand", "q-acme", "q-acme-resv", "q-globex", "q-globex-resv"}, names); diff != "" {
		t.Errorf("QOS (-want +got):\n%s", diff)
	}
	resv := o.QOS[slices.IndexFunc(o.QOS, func(q QOS) bool { return q.Name == "q-acme-resv" })]
	if diff := cmp.Diff(QOS{Name: "q-acme-resv", Description: "gpubridge: bookings of tenant acme (jobs inside its reservations)", GrpTRES: TRES{}, RequiresReservation: true}, resv); diff != "" {
		t.Errorf("reservation QOS (-want +got):\n%s", diff)
	}
	if !IsMarked(resv.Description) {
		t.Error("the reservation QOS is not marked")
	}
	if g := o.QOS[slices.IndexFunc(o.QOS, func(q QOS) bool { return q.Name == "q-globex-resv" })]; !g.SubmitBlocked {
		t.Error("a deleting tenant's reservation QOS takes new jobs")
	}
	if diff := cmp.Diff([]Assoc{
		{Account: "acme", User: "alice", QOS: []string{"ondemand", "q-acme", "q-acme-resv"}, DefaultQOS: "q-acme"},
		{Account: "globex", User: "bob", QOS: []string{"ondemand", "q-globex", "q-globex-resv"}, DefaultQOS: "q-globex"},
	}, o.Assocs); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
	for _, q := range Project(ts, Naming{QOSPrefix: "q-", OnDemandQOS: "ondemand"}).QOS {
		if strings.HasSuffix(q.Name, "-resv") || q.RequiresReservation {
			t.Errorf("no suffix, yet %+v", q)
		}
	}
}

func TestQOSOwner(t *testing.T) {
	cases := map[string]struct {
		n     Naming
		qos   string
		owner string
		ok    bool
	}{
		"tenant QOS":             {resvNaming, "q-acme", "acme", true},
		"reservation QOS":        {resvNaming, "q-acme-resv", "acme", true},
		"suffix alone":           {resvNaming, "q--resv", "-resv", true},
		"prefix alone":           {resvNaming, "q-", "", false},
		"another prefix":         {resvNaming, "acme", "", false},
		"no suffix configured":   {Naming{QOSPrefix: "q-"}, "q-acme-resv", "acme-resv", true},
		"no prefix":              {Naming{ReservationQOSSuffix: "-resv"}, "acme-resv", "acme", true},
		"a hyphenated tenant":    {Naming{ReservationQOSSuffix: "-resv"}, "team-a", "team-a", true},
		"hyphenated reservation": {Naming{ReservationQOSSuffix: "-resv"}, "team-a-resv", "team-a", true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o, ok := c.n.QOSOwner(c.qos)
			if o != c.owner || ok != c.ok {
				t.Errorf("QOSOwner(%q) = %q, %v; want %q, %v", c.qos, o, ok, c.owner, c.ok)
			}
		})
	}
	for _, tn := range []string{"acme", "a", "team-x"} {
		if o, ok := resvNaming.QOSOwner(resvNaming.ReservationQOSName(tn)); !ok || o != tn {
			t.Errorf("owner of %s's reservation QOS: %q", tn, o)
		}
	}
}

// TestReservationQOSNames: a tenant name that ends in the suffix, or whose
// reservation QOS would be too long or taken, is refused.
func TestReservationQOSNames(t *testing.T) {
	r := Rules{GPUTypes: []string{"h100"}, Naming: resvNaming}
	cases := map[string]struct {
		name string
		n    Naming
		want Problems
	}{
		"plain":        {name: "acme"},
		"ends in it":   {name: "team-resv", want: Problems{{Field: "name", Msg: `names ending in "-resv" are kept for reservation QOS (tenant team's is q-team-resv; bookings.reservationQOSSuffix); choose another name`}}},
		"no suffix":    {name: "team-resv", n: Naming{QOSPrefix: "q-"}},
		"too long":     {name: "abcdefghijklmnopqrstuvwxyz012345", n: Naming{QOSPrefix: strings.Repeat("p", 30), ReservationQOSSuffix: "-resv"}, want: Problems{{Field: "name", Msg: `the reservation QOS name "` + strings.Repeat("p", 30) + `abcdefghijklmnopqrstuvwxyz012345-resv" would be longer than 64 characters; choose a shorter name`}}},
		"is on-demand": {name: "od", n: Naming{OnDemandQOS: "od-x", ReservationQOSSuffix: "-x"}, want: Problems{{Field: "name", Msg: `the reservation QOS name "od-x" is taken by the shared on-demand QOS; choose another name`}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rr := r
			if c.n != (Naming{}) {
				rr.Naming = c.n
			}
			if diff := cmp.Diff(c.want, Validate(Tenant{Name: c.name}, rr)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
