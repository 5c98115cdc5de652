package interval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetAdd(t *testing.T) {
	base := Set{{10, 20}, {30, 40}, {50, 60}}
	cases := map[string]struct {
		s    Set
		add  Interval
		want Set
	}{
		"into empty":             {s: nil, add: Interval{1, 2}, want: Set{{1, 2}}},
		"empty interval":         {s: base, add: Interval{25, 25}, want: base},
		"reversed interval":      {s: base, add: Interval{28, 22}, want: base},
		"before all":             {s: base, add: Interval{0, 5}, want: Set{{0, 5}, {10, 20}, {30, 40}, {50, 60}}},
		"after all":              {s: base, add: Interval{70, 80}, want: Set{{10, 20}, {30, 40}, {50, 60}, {70, 80}}},
		"between":                {s: base, add: Interval{22, 28}, want: Set{{10, 20}, {22, 28}, {30, 40}, {50, 60}}},
		"touching left":          {s: base, add: Interval{5, 10}, want: Set{{5, 20}, {30, 40}, {50, 60}}},
		"touching right":         {s: base, add: Interval{20, 25}, want: Set{{10, 25}, {30, 40}, {50, 60}}},
		"bridging two touching":  {s: base, add: Interval{20, 30}, want: Set{{10, 40}, {50, 60}}},
		"overlapping one":        {s: base, add: Interval{35, 45}, want: Set{{10, 20}, {30, 45}, {50, 60}}},
		"inside one":             {s: base, add: Interval{32, 38}, want: base},
		"equal to one":           {s: base, add: Interval{30, 40}, want: base},
		"swallowing all":         {s: base, add: Interval{0, 100}, want: Set{{0, 100}}},
		"spanning three partly":  {s: base, add: Interval{15, 55}, want: Set{{10, 60}}},
		"largest end":            {s: base, add: Interval{55, math.MaxInt64}, want: Set{{10, 20}, {30, 40}, {50, math.MaxInt64}}},
		"smallest start touches": {s: base, add: Interval{math.MinInt64, 10}, want: Set{{math.MinInt64, 20}, {30, 40}, {50, 60}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := slices.Clone(tc.s)
			got := tc.s.Add(tc.add)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%v + %v (-want +got):\n%s", tc.s, tc.add, d)
			}
			if d := cmp.Diff(before, tc.s); d != "" {
				t.Errorf("Add changed its receiver (-before +after):\n%s", d)
			}
		})
	}
}

func TestOf(t *testing.T) {
	cases := map[string]struct {
		in   []Interval
		want Set
	}{
		"nothing":          {want: nil},
		"only empty":       {in: []Interval{{3, 3}, {5, 1}}, want: nil},
		"unsorted":         {in: []Interval{{30, 40}, {10, 20}}, want: Set{{10, 20}, {30, 40}}},
		"overlapping":      {in: []Interval{{10, 20}, {15, 25}, {5, 12}}, want: Set{{5, 25}}},
		"touching":         {in: []Interval{{100, 200}, {200, 300}}, want: Set{{100, 300}}},
		"duplicates":       {in: []Interval{{1, 2}, {1, 2}, {1, 2}}, want: Set{{1, 2}}},
		"ledger like rows": {in: []Interval{{100, 200}, {250, 400}}, want: Set{{100, 200}, {250, 400}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, Of(tc.in...)); d != "" {
				t.Errorf("Of(%v) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestSetUnionSubtractIntersect(t *testing.T) {
	cases := map[string]struct {
		s, o            Set
		union, subtract Set
		window          Interval
		intersect       Set
	}{
		"both empty":          {window: Interval{0, 10}},
		"other empty":         {s: Set{{1, 5}}, union: Set{{1, 5}}, subtract: Set{{1, 5}}, window: Interval{0, 3}, intersect: Set{{1, 3}}},
		"self empty":          {o: Set{{1, 5}}, union: Set{{1, 5}}, window: Interval{0, 10}},
		"disjoint":            {s: Set{{1, 5}}, o: Set{{10, 15}}, union: Set{{1, 5}, {10, 15}}, subtract: Set{{1, 5}}, window: Interval{4, 12}, intersect: Set{{4, 5}}},
		"touching":            {s: Set{{1, 5}}, o: Set{{5, 9}}, union: Set{{1, 9}}, subtract: Set{{1, 5}}, window: Interval{5, 9}},
		"hole punched":        {s: Set{{0, 100}}, o: Set{{10, 20}, {40, 50}}, union: Set{{0, 100}}, subtract: Set{{0, 10}, {20, 40}, {50, 100}}, window: Interval{15, 45}, intersect: Set{{15, 45}}},
		"all removed":         {s: Set{{10, 20}, {30, 40}}, o: Set{{0, 50}}, union: Set{{0, 50}}, window: Interval{0, 0}},
		"edges trimmed":       {s: Set{{10, 20}, {30, 40}}, o: Set{{5, 12}, {38, 45}}, union: Set{{5, 20}, {30, 45}}, subtract: Set{{12, 20}, {30, 38}}, window: Interval{15, 35}, intersect: Set{{15, 20}, {30, 35}}},
		"other spans members": {s: Set{{10, 20}, {30, 40}, {50, 60}}, o: Set{{15, 55}}, union: Set{{10, 60}}, subtract: Set{{10, 15}, {55, 60}}, window: Interval{100, 200}},
		"fresh parts of a window": {
			s: Set{{100, 500}}, o: Set{{0, 150}, {200, 300}, {450, 900}},
			union: Set{{0, 900}}, subtract: Set{{150, 200}, {300, 450}}, window: Interval{100, 500}, intersect: Set{{100, 500}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := [3]Set{tc.s.Union(tc.o), tc.s.Subtract(tc.o), tc.s.Intersect(tc.window)}
			want := [3]Set{tc.union, tc.subtract, tc.intersect}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("[union, subtract, intersect] of %v and %v (-want +got):\n%s", tc.s, tc.o, d)
			}
			if d := cmp.Diff(tc.union, tc.o.Union(tc.s)); d != "" {
				t.Errorf("Union is not symmetric (-want +got):\n%s", d)
			}
		})
	}
}

func TestSetQueries(t *testing.T) {
	s := Set{{10, 20}, {30, 40}}
	cases := map[string]struct {
		t        int64
		contains bool
		iv       Interval
		covers   bool
	}{
		"before":            {t: 9, iv: Interval{5, 12}},
		"first second":      {t: 10, contains: true, iv: Interval{10, 20}, covers: true},
		"last second":       {t: 19, contains: true, iv: Interval{19, 20}, covers: true},
		"first end":         {t: 20, iv: Interval{15, 25}},
		"gap":               {t: 25, iv: Interval{25, 26}},
		"across the gap":    {t: 30, contains: true, iv: Interval{15, 35}},
		"inside second":     {t: 35, contains: true, iv: Interval{31, 39}, covers: true},
		"after":             {t: 40, iv: Interval{40, 41}},
		"empty is covered":  {t: 1000, iv: Interval{1000, 1000}, covers: true},
		"reversed is empty": {t: -5, iv: Interval{50, 0}, covers: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := [2]bool{s.Contains(tc.t), s.Covers(tc.iv)}
			if d := cmp.Diff([2]bool{tc.contains, tc.covers}, got); d != "" {
				t.Errorf("[Contains(%d), Covers(%v)] of %v (-want +got):\n%s", tc.t, tc.iv, s, d)
			}
		})
	}
	if got := s.Len(); got != 20 {
		t.Errorf("Len = %d, want 20", got)
	}
	if got := Set(nil).Len(); got != 0 {
		t.Errorf("empty Len = %d, want 0", got)
	}
}

func TestSetString(t *testing.T) {
	cases := map[string]struct {
		s    Set
		want string
	}{
		"empty": {want: "{}"},
		"two":   {s: Set{{1, 2}, {5, 9}}, want: "[1, 2) [5, 9)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.s.String(); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
		})
	}
}

// model is the brute-force set the property test checks Set against: one
// boolean per second of [0, span).
type model [span]bool

const span = 48

func (m *model) add(iv Interval) {
	for t := max(iv.Start, 0); t < min(iv.End, span); t++ {
		m[t] = true
	}
}

func modelOf(s Set) model {
	var m model
	for _, iv := range s {
		m.add(iv)
	}
	return m
}

func randomInterval(r *rand.Rand) Interval {
	a, b := r.Int64N(span+1), r.Int64N(span+1)
	if r.IntN(8) == 0 {
		return Interval{b, a} // sometimes reversed (empty)
	}
	return Interval{min(a, b), max(a, b)}
}

func randomSet(r *rand.Rand) (Set, model) {
	var s Set
	var m model
	for range r.IntN(6) {
		iv := randomInterval(r)
		s = s.Add(iv)
		m.add(iv)
	}
	return s, m
}

// wellFormed fails the test when s is not sorted, disjoint, merged and
// free of empty members.
func wellFormed(t *testing.T, what string, s Set) {
	t.Helper()
	for i, iv := range s {
		if iv.Empty() {
			t.Fatalf("%s: member %d of %v is empty", what, i, s)
		}
		if i > 0 && s[i-1].End >= iv.Start {
			t.Fatalf("%s: members %d and %d of %v overlap or touch", what, i-1, i, s)
		}
	}
}

// TestSetAgainstModel checks every operation on random sets against the
// per-second model, and that each result is well formed.
func TestSetAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 5))
	for n := range 5000 {
		s, ms := randomSet(r)
		o, mo := randomSet(r)
		w := randomInterval(r)
		wellFormed(t, "Add", s)
		if d := cmp.Diff(ms, modelOf(s)); d != "" {
			t.Fatalf("round %d: Add built %v (-model +set):\n%s", n, s, d)
		}
		var union, diff, inter, meet model
		var count int64
		for x := range int64(span) {
			union[x] = ms[x] || mo[x]
			diff[x] = ms[x] && !mo[x]
			inter[x] = ms[x] && w.Contains(x)
			meet[x] = ms[x] && mo[x]
			if ms[x] {
				count++
			}
			if s.Contains(x) != ms[x] {
				t.Fatalf("round %d: %v Contains(%d) = %v", n, s, x, !ms[x])
			}
		}
		covers := true
		for x := max(w.Start, 0); x < min(w.End, span); x++ {
			covers = covers && ms[x]
		}
		for what, got := range map[string]Set{"Union": s.Union(o), "Subtract": s.Subtract(o), "Intersect": s.Intersect(w), "Meet": s.Meet(o)} {
			wellFormed(t, what, got)
			want := map[string]model{"Union": union, "Subtract": diff, "Intersect": inter, "Meet": meet}[what]
			if d := cmp.Diff(want, modelOf(got)); d != "" {
				t.Fatalf("round %d: %v %s %v / %v = %v (-model +set):\n%s", n, s, what, o, w, got, d)
			}
		}
		if s.Covers(w) != covers {
			t.Fatalf("round %d: %v Covers(%v) = %v, model says %v", n, s, w, !covers, covers)
		}
		if s.Len() != count {
			t.Fatalf("round %d: %v Len = %d, model says %d", n, s, s.Len(), count)
		}
	}
}

// TestSetAsCoverage holds the cases of the ledger's former coverage type
// (accounting/ledger, now this Set): adds in any order, then the seconds
// and ranges it holds.
func TestSetAsCoverage(t *testing.T) {
	cases := map[string]struct {
		adds []Interval
		want Set
	}{
		"empty add ignored":   {[]Interval{{5, 5}}, nil},
		"one":                 {[]Interval{{1, 5}}, Set{{1, 5}}},
		"touching merge":      {[]Interval{{1, 5}, {5, 9}}, Set{{1, 9}}},
		"overlap merge":       {[]Interval{{1, 5}, {3, 9}}, Set{{1, 9}}},
		"disjoint sorted":     {[]Interval{{10, 20}, {1, 5}}, Set{{1, 5}, {10, 20}}},
		"bridge two":          {[]Interval{{1, 5}, {10, 20}, {4, 11}}, Set{{1, 20}}},
		"inside":              {[]Interval{{1, 20}, {4, 11}}, Set{{1, 20}}},
		"three, middle added": {[]Interval{{1, 2}, {10, 20}, {30, 40}, {5, 6}}, Set{{1, 2}, {5, 6}, {10, 20}, {30, 40}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var s Set
			for _, a := range tc.adds {
				s = s.Add(a)
			}
			if d := cmp.Diff(tc.want, s); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	c := Set{{1, 5}, {10, 20}}
	for tm, want := range map[int64]bool{0: false, 1: true, 4: true, 5: false, 9: false, 10: true, 19: true, 20: false, 99: false} {
		if got := c.Contains(tm); got != want {
			t.Errorf("Contains(%d) = %v, want %v", tm, got, want)
		}
	}
	c = Set{{10, 20}, {30, 40}}
	for iv, want := range map[Interval]bool{{10, 20}: true, {12, 18}: true, {10, 21}: false, {15, 35}: false, {30, 40}: true, {5, 5}: true, {0, 10}: false} {
		if got := c.Covers(iv); got != want {
			t.Errorf("Covers(%v) = %v, want %v", iv, got, want)
		}
	}
}
