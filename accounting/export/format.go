package export

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gpubridge/gpubridge/accounting/meter"
)

// periodNames caches Period.String for the few periods of an export.
type periodNames map[meter.Period]string

func (c periodNames) get(p meter.Period) string {
	s, ok := c[p]
	if !ok {
		s = p.String()
		c[p] = s
	}
	return s
}

// The formatting of the cells every line item writes (hundreds of
// thousands per export), without fmt or time.Format on the common path;
// each gives the same bytes as the fmt or time formatting it stands for
// (format_test.go holds them to it).

// appendGPUHours appends GPUHours(sec).
func appendGPUHours(b []byte, sec int64) []byte {
	neg := sec < 0
	if neg {
		sec = -sec
	}
	micro := microHours(sec)
	if micro < 0 { // out of range: as fmt writes it
		s := fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000)
		if neg {
			s = "-" + s
		}
		return append(b, s...)
	}
	if neg && micro != 0 {
		b = append(b, '-')
	}
	b = strconv.AppendInt(b, micro/1_000_000, 10)
	b = append(b, '.')
	return appendFrac(b, uint64(micro%1_000_000), 6)
}

// appendFrac appends v as exactly n digits, with leading zeros.
func appendFrac(b []byte, v uint64, n int) []byte {
	var d [20]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:n]...)
}

// maxFastUnix is 10000-01-01T00:00:00Z: RFC 3339 times before it (and
// from 1970 on) are written without package time.
const maxFastUnix = 253402300800

// rfcLayout is how the exports write an instant (UTC, whole seconds).
const rfcLayout = "2006-01-02T15:04:05Z"

// appendUnixRFC appends the Unix time s as rfcLayout in UTC.
func appendUnixRFC(b []byte, s int64) []byte {
	if s < 0 || s >= maxFastUnix {
		return time.Unix(s, 0).UTC().AppendFormat(b, rfcLayout)
	}
	y, m, d := civil(s / 86400)
	sec := s % 86400
	b = appendFrac(b, uint64(y), 4)
	b = append(b, '-')
	b = appendFrac(b, uint64(m), 2)
	b = append(b, '-')
	b = appendFrac(b, uint64(d), 2)
	b = append(b, 'T')
	b = appendFrac(b, uint64(sec/3600), 2)
	b = append(b, ':')
	b = appendFrac(b, uint64(sec/60%60), 2)
	b = append(b, ':')
	b = appendFrac(b, uint64(sec%60), 2)
	return append(b, 'Z')
}

// civil returns the proleptic Gregorian date of days since 1970-01-01
// (days >= 0), after Howard Hinnant's days_from_civil inverse.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendJSONString appends s as encoding/json writes a string (HTML
// characters and U+2028/U+2029 escaped, invalid UTF-8 replaced): plain
// printable ASCII as it is, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSON appends jl as json.Marshal writes it.
func (jl *jsonLine) appendJSON(b []byte) []byte {
	b = append(b, `{"tenant":`...)
	b = appendJSONString(b, jl.Tenant)
	b = append(b, `,"hasTenant":`...)
	b = strconv.AppendBool(b, jl.HasTenant)
	b = append(b, `,"tenantDescription":`...)
	b = appendJSONString(b, jl.Description)
	b = append(b, `,"organization":`...)
	b = appendJSONString(b, jl.Organization)
	b = append(b, `,"costCenter":`...)
	b = appendJSONString(b, jl.CostCenter)
	b = append(b, `,"account":`...)
	b = appendJSONString(b, jl.Account)
	b = append(b, `,"user":`...)
	b = appendJSONString(b, jl.User)
	if jl.JobID != 0 {
		b = append(b, `,"jobId":`...)
		b = strconv.AppendUint(b, uint64(jl.JobID), 10)
	}
	if jl.Submit != "" {
		b = append(b, `,"submitTime":`...)
		b = appendJSONString(b, jl.Submit)
	}
	b = append(b, `,"usagePeriod":`...)
	b = appendJSONString(b, jl.UsagePeriod)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, jl.Kind)
	b = append(b, `,"revision":`...)
	b = strconv.AppendInt(b, int64(jl.Revision), 10)
	b = append(b, `,"tier":`...)
	b = appendJSONString(b, jl.Tier)
	b = append(b, `,"gpuType":`...)
	b = appendJSONString(b, jl.GPUType)
	b = append(b, `,"gpuCount":`...)
	b = strconv.AppendInt(b, jl.GPUCount, 10)
	b = append(b, `,"start":`...)
	b = appendJSONString(b, jl.Start)
	b = append(b, `,"end":`...)
	b = appendJSONString(b, jl.End)
	b = append(b, `,"gpuSeconds":`...)
	b = strconv.AppendInt(b, jl.GPUSeconds, 10)
	b = append(b, `,"bookedGpuSeconds":`...)
	b = strconv.AppendInt(b, jl.BookedGPUSeconds, 10)
	b = append(b, `,"ratePerGPUHour":`...)
	b = appendJSONString(b, jl.Rate)
	b = append(b, `,"rateBasis":`...)
	b = appendJSONString(b, jl.RateBasis)
	b = append(b, `,"amount":`...)
	b = appendJSONString(b, jl.Amount)
	b = append(b, `,"amountMinor":`...)
	b = strconv.AppendInt(b, jl.AmountMinor, 10)
	if jl.Booking != 0 {
		b = append(b, `,"booking":`...)
		b = strconv.AppendInt(b, jl.Booking, 10)
	}
	return append(b, '}')
}
