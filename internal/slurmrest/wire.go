package slurmrest

import (
	"time"
)

// This file holds the wire forms shared by several objects. They mirror
// the data_parser schemas of v0.0.43 and v0.0.44, which are identical for
// every field this client reads or writes; per-object wire structs live
// beside their domain types.

// wNoVal is Slurm's {"set","infinite","number"} for integers.
type wNoVal struct {
	Set      bool  `json:"set"`
	Infinite bool  `json:"infinite"`
	Number   int64 `json:"number"`
}

// wNoValF is the same for floating-point values (usage_factor).
type wNoValF struct {
	Set      bool    `json:"set"`
	Infinite bool    `json:"infinite"`
	Number   float64 `json:"number"`
}

func (w *wNoVal) limit() Limit {
	if w == nil {
		return Limit{}
	}
	if w.Infinite {
		return Limit{Set: true, Infinite: true}
	}
	if !w.Set {
		return Limit{}
	}
	return Limit{Set: true, Number: w.Number}
}

// wireLimit is the write form of a Limit: nil (omitted) when unset.
func wireLimit(l Limit) *wNoVal {
	switch {
	case l.Infinite:
		return &wNoVal{Set: true, Infinite: true}
	case !l.Set:
		return nil
	}
	return &wNoVal{Set: true, Number: l.Number}
}

func num(n int64) *wNoVal { return &wNoVal{Set: true, Number: n} }

// time returns the Unix time it holds, UTC, or the zero time when unset,
// infinite or 0.
func (w *wNoVal) time() time.Time {
	if w == nil || !w.Set || w.Infinite || w.Number <= 0 {
		return time.Time{}
	}
	return time.Unix(w.Number, 0).UTC()
}

func unixTime(n int64) time.Time {
	// Slurm's NO_VAL (0xfffffffe) and INFINITE (0xffffffff) markers of
	// 32-bit times mean "none": slurmdbd reports the start of a job
	// cancelled before it started as 4294967294.
	if n <= 0 || n >= 0xfffffffe {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// wTRES is one entry of a TRES list.
type wTRES struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	ID    int    `json:"id,omitempty"`
	Count int64  `json:"count"`
}

func fromWireTRES(ws []wTRES) []TRES {
	if len(ws) == 0 {
		return nil
	}
	out := make([]TRES, len(ws))
	for i, w := range ws {
		out[i] = TRES(w)
	}
	return out
}
