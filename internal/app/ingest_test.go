package app

import (
	"errors"
	"testing"
	"time"
)

func TestParseAccept(t *testing.T) {
	a, err := ParseAccept("2026-11-20T12:00..2026-11-20T14:00")
	if err != nil || !a.From.Equal(time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)) || !a.To.Equal(time.Date(2026, 11, 20, 14, 0, 0, 0, time.UTC)) || a.Actor == "" {
		t.Fatalf("ParseAccept = %+v, %v", a, err)
	}
	for _, bad := range []string{"2026-11-20T12:00", "2026-11-20T14:00..2026-11-20T12:00", "x..2026-11-20", "2026-11-20T12:00..2026-11-20T12:00"} {
		if _, err := ParseAccept(bad); err == nil {
			t.Errorf("ParseAccept(%q): want an error", bad)
		} else if !errors.Is(err, ErrInput) {
			t.Errorf("ParseAccept(%q): %T, want an input error", bad, err)
		}
	}
}
