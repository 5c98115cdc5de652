package burst

import "testing"

func TestArrayTasks(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    int64
		wantErr bool
	}{
		"plain job":   {"", 1, false},
		"range":       {"1-3", 3, false},
		"brackets":    {"[2-3]", 2, false},
		"list":        {"1,3,5-7", 5, false},
		"step":        {"0-9:2", 5, false},
		"step uneven": {"1-10:4", 3, false},
		"max running": {"1-100%5", 100, false},
		"single":      {"7", 1, false},
		"bad":         {"a-b", 0, true},
		"backwards":   {"5-1", 0, true},
		"zero step":   {"1-5:0", 0, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ArrayTasks(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ArrayTasks(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}
