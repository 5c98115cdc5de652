package daemon

import (
	"testing"
	"time"
)

// The campaign's next tick: a standby retries at the campaign interval,
// or just after the holder's lease expires when that is sooner; the
// leader ticks at the renewal interval, never past its renew deadline.
func TestCampaignNext(t *testing.T) {
	cases := map[string]struct {
		leading bool
		retryIn time.Duration
		want    time.Duration
	}{
		"standby, lease held long":     {retryIn: 3 * time.Second, want: 2 * time.Second},
		"standby, lease expires soon":  {retryIn: 500 * time.Millisecond, want: 510 * time.Millisecond},
		"standby, nothing known":       {want: 2 * time.Second},
		"leader past its deadline now": {leading: true, want: time.Millisecond},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l := NewLeader(nil, nil, LeaseTTL(2*time.Second), nil)
			l.retryIn = c.retryIn
			cp := &campaign{l: l, interval: 2 * time.Second, leading: c.leading}
			if got := cp.next(); got != c.want {
				t.Errorf("next() = %s, want %s", got, c.want)
			}
		})
	}
}

func TestLeaseTTL(t *testing.T) {
	cases := map[string]struct{ interval, want time.Duration }{
		"default 2 s":     {2 * time.Second, 3 * time.Second},
		"tests' 20 ms":    {20 * time.Millisecond, time.Second},
		"a slow campaign": {10 * time.Second, 15 * time.Second},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := LeaseTTL(c.interval); got != c.want {
				t.Errorf("LeaseTTL(%s) = %s, want %s", c.interval, got, c.want)
			}
		})
	}
}
