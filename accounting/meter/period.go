package meter

import (
	"fmt"
	"time"
)

// Period is a calendar month in UTC, counted as months since January of
// year 0, so periods order and subtract as integers. The zero value is not a
// usable period; use [PeriodOf] or [ParsePeriod].
type Period int32

// PeriodOf returns the period holding instant t (t is taken in UTC).
func PeriodOf(t time.Time) Period {
	t = t.UTC()
	return Period(t.Year()*12 + int(t.Month()) - 1)
}

// PeriodOfUnix returns the period holding the Unix second sec.
func PeriodOfUnix(sec int64) Period { return PeriodOf(time.Unix(sec, 0)) }

// ParsePeriod reads "YYYY-MM".
func ParsePeriod(s string) (Period, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || len(s) != 7 {
		return 0, fmt.Errorf("period %q: want YYYY-MM, e.g. 2026-11", s)
	}
	return PeriodOf(t), nil
}

// Year and Month of the period.
func (p Period) Year() int               { return int(p) / 12 }
func (p Period) Month() time.Month       { return time.Month(int(p)%12 + 1) }
func (p Period) String() string          { return fmt.Sprintf("%04d-%02d", p.Year(), int(p.Month())) }
func (p Period) Next() Period            { return p + 1 }
func (p Period) Prev() Period            { return p - 1 }
func (p Period) Start() time.Time        { return time.Date(p.Year(), p.Month(), 1, 0, 0, 0, 0, time.UTC) }
func (p Period) End() time.Time          { return p.Next().Start() }
func (p Period) StartUnix() int64        { return p.Start().Unix() }
func (p Period) EndUnix() int64          { return p.End().Unix() }
func (p Period) Contains(sec int64) bool { return sec >= p.StartUnix() && sec < p.EndUnix() }

// MarshalText writes "YYYY-MM" (JSON, YAML, CSV).
func (p Period) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads "YYYY-MM".
func (p *Period) UnmarshalText(b []byte) error {
	v, err := ParsePeriod(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
