package mig

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	h100, _ := ModelNamed("H100-80GB")
	cases := map[string]struct {
		l    Layout
		want []string // substrings of the error, one per problem; none: valid
	}{
		"7x 1g.10gb":            {l: Layout{{"1g.10gb", 0}, {"1g.10gb", 1}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"1g.10gb", 4}, {"1g.10gb", 5}, {"1g.10gb", 6}}},
		"4g+2g+1g":              {l: Layout{{"4g.40gb", 0}, {"2g.20gb", 4}, {"1g.10gb", 6}}},
		"2x 3g.40gb":            {l: Layout{{"3g.40gb", 0}, {"3g.40gb", 4}}},
		"4x 1g.20gb":            {l: Layout{{"1g.20gb", 0}, {"1g.20gb", 2}, {"1g.20gb", 4}, {"1g.20gb", 6}}},
		"empty":                 {l: nil},
		"3g.40gb at slot 2":     {l: Layout{{"3g.40gb", 2}}, want: []string{"3g.40gb cannot start at memory slice 2 on H100-80GB (allowed start slots: 0,4)"}},
		"1g.10gb at slot 7":     {l: Layout{{"1g.10gb", 7}}, want: []string{"cannot start at memory slice 7"}},
		"overlap":               {l: Layout{{"4g.40gb", 0}, {"1g.10gb", 3}}, want: []string{"1g.10gb@3 overlaps 4g.40gb@0 on memory slice 3"}},
		"two +me":               {l: Layout{{"1g.10gb+me", 0}, {"1g.10gb+me", 1}}, want: []string{"2 instances of 1g.10gb+me; an H100-80GB allows at most 1"}},
		"unknown profile":       {l: Layout{{"1g.5gb", 0}}, want: []string{`H100-80GB has no MIG profile "1g.5gb"`}},
		"every problem at once": {l: Layout{{"7g.80gb", 0}, {"1g.10gb", 0}, {"2g.20gb", 1}}, want: []string{"overlaps", "cannot start at memory slice 1", "uses 10 compute slices"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := h100.Validate(tc.l)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want valid", tc.l, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%s) accepted an invalid layout", tc.l)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// Configs must be exactly the sets of instances that fit on one GPU: check
// it against every count vector within NVIDIA's per-profile limits.
func TestConfigsAreExactlyWhatFits(t *testing.T) {
	for _, m := range Models() {
		t.Run(m.Name, func(t *testing.T) {
			listed := map[string]bool{}
			for _, c := range m.Configs() {
				l, err := m.Place(c)
				if err != nil {
					t.Fatalf("config %s does not place: %v", c.key(m), err)
				}
				if err := m.Validate(l); err != nil {
					t.Fatalf("config %s placed as %s: %v", c.key(m), l, err)
				}
				if diff := cmp.Diff(c, l.Counts()); diff != "" {
					t.Fatalf("placement of %s has other counts (-want +got):\n%s", c.key(m), diff)
				}
				listed[c.key(m)] = true
			}
			counts := make([]int, len(m.Profiles))
			var walk func(i int)
			fits, total := 0, 0
			walk = func(i int) {
				if i == len(m.Profiles) {
					c := Counts{}
					for k, p := range m.Profiles {
						if counts[k] > 0 {
							c[p.Name] = counts[k]
						}
					}
					if len(c) == 0 {
						return
					}
					total++
					_, err := m.Place(c)
					if (err == nil) != listed[c.key(m)] {
						t.Errorf("%s: Place error %v, but listed in Configs = %v", c.key(m), err, listed[c.key(m)])
					}
					if err == nil {
						fits++
					}
					return
				}
				for n := 0; n <= m.Profiles[i].MaxInstances; n++ {
					counts[i] = n
					walk(i + 1)
				}
				counts[i] = 0
			}
			walk(0)
			if fits != len(listed) {
				t.Errorf("%d of %d count vectors fit, Configs lists %d", fits, total, len(listed))
			}
		})
	}
}

func TestPlaceRefuses(t *testing.T) {
	h100, _ := ModelNamed("H100-80GB")
	cases := map[string]struct {
		want Counts
		msg  string
	}{
		"3x 3g.40gb":       {Counts{"3g.40gb": 3}, "3x 3g.40gb: an H100-80GB allows at most 2"},
		"4g + 2x 2g":       {Counts{"4g.40gb": 1, "2g.20gb": 2}, "do not fit together on one H100-80GB"},
		"unknown":          {Counts{"1g.5gb": 1}, `no MIG profile "1g.5gb"`},
		"negative":         {Counts{"1g.10gb": -1}, "negative"},
		"6x 1g + 1g.20gb?": {Counts{"1g.10gb": 6, "2g.20gb": 1}, "do not fit together"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := h100.Place(tc.want)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Place = %s, %v; want error saying %q", l, err, tc.msg)
			}
		})
	}
}
