package view

import (
	"time"

	"github.com/gpubridge/gpubridge/bridge/reserve"
)

// Times prints times in UTC, or, when Local, in Zone with its offset
// (--local).
type Times struct {
	Zone  reserve.Zone
	Local bool
}

// Format is t as the booking commands print it.
func (z Times) Format(t time.Time) string { return reserve.FormatTime(t, z.Zone, z.Local) }

// utc prints in UTC (the audit summaries).
var utc = Times{}
