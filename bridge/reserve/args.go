package reserve

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Request is a booking to add, as typed input (the CLI's key=value
// arguments through ParseAdd, or the tenant API's JSON).
type Request struct {
	Tenant    string    `json:"tenant"`
	Kind      Kind      `json:"kind"`
	GPUType   string    `json:"gpuType,omitempty"`
	NodeClass string    `json:"nodeClass,omitempty"`
	Count     int       `json:"count"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Purpose   string    `json:"purpose,omitempty"`
	// Fields names the input fields for problems (DefaultFields when zero;
	// End is "duration" when the window was given as a length).
	Fields Fields `json:"-"`
}

func (r Request) fields() Fields {
	f := r.Fields
	if f.Start == "" {
		f.Start = DefaultFields.Start
	}
	if f.End == "" {
		f.End = DefaultFields.End
	}
	if f.GPUs == "" {
		f.GPUs = DefaultFields.GPUs
		if r.Kind == KindNode {
			f.GPUs = "nodes"
		}
	}
	return f
}

// AddKeys are the keys ParseAdd reads.
var AddKeys = []string{"tenant", "gpus", "nodes", "start", "end", "duration", "purpose"}

// ModifyKeys are the keys ParseChange reads (after `set`).
var ModifyKeys = []string{"start", "end", "duration", "gpus", "nodes", "purpose"}

// ParseAdd reads add-booking arguments: tenant=, gpus=TYPE:COUNT or
// nodes=CLASS:COUNT, start=, end= or duration=, purpose=. It reports every
// problem at once, each naming its field.
func ParseAdd(kv map[string]string, now time.Time, zone Zone) (Request, Problems) {
	var r Request
	var ps Problems
	r.Tenant = strings.TrimSpace(kv["tenant"])
	if r.Tenant == "" {
		ps.Add("tenant", "required: the tenant the booking is for (tenant=acme)")
	}
	g, hasG := kv["gpus"]
	n, hasN := kv["nodes"]
	switch {
	case hasG && hasN:
		ps.Add("gpus", "give gpus=TYPE:COUNT or nodes=CLASS:COUNT, not both")
	case hasN:
		r.Kind = KindNode
		r.NodeClass, r.Count = parseAmount(&ps, "nodes", n, "nodes=dgx:2")
		r.Fields.GPUs = "nodes"
	case hasG:
		r.Kind = KindGPU
		r.GPUType, r.Count = parseAmount(&ps, "gpus", g, "gpus=h100:8")
	default:
		ps.Add("gpus", "required: what to book, gpus=TYPE:COUNT (gpus=h100:8) or nodes=CLASS:COUNT")
	}
	r.Fields.Start, r.Fields.End = DefaultFields.Start, DefaultFields.End
	if r.Fields.GPUs == "" {
		r.Fields.GPUs = DefaultFields.GPUs
	}
	if s, ok := kv["start"]; ok {
		r.Start = parseTimeField(&ps, "start", s, now, zone)
	} else {
		ps.Add("start", "required: when the window starts (start=2026-12-14T00:00Z, start=now+2d)")
	}
	e, hasE := kv["end"]
	d, hasD := kv["duration"]
	switch {
	case hasE && hasD:
		ps.Add("end", "give end= or duration=, not both")
	case hasE:
		r.End = parseTimeField(&ps, "end", e, now, zone)
	case hasD:
		r.Fields.End = "duration"
		dur, err := ParseDuration(d)
		if err != nil {
			ps.Add("duration", "%v", err)
		} else if !r.Start.IsZero() {
			r.End = r.Start.Add(dur)
			checkRange(&ps, "duration", r.End)
		}
	default:
		ps.Add("end", "required: when the window ends (end=...) or how long it lasts (duration=14d)")
	}
	if !r.Start.IsZero() && !r.End.IsZero() && !r.End.After(r.Start) {
		ps.Add(r.Fields.End, "%s is not after start %s: a window must end after it starts", FormatTime(r.End, Zone{}, false), FormatTime(r.Start, Zone{}, false))
	}
	if p, ok := kv["purpose"]; ok {
		r.Purpose = strings.TrimSpace(p)
		checkPurpose(&ps, r.Purpose)
	}
	return r, ps
}

// Change is a modification of a booking; nil fields stay as they are.
type Change struct {
	Start   *time.Time `json:"start,omitempty"`
	End     *time.Time `json:"end,omitempty"`
	Count   *int       `json:"count,omitempty"`
	Type    *string    `json:"type,omitempty"` // the GPU type or node class named; must be the booking's own
	Purpose *string    `json:"purpose,omitempty"`
	// Duration, when set, makes End = (new) Start + Duration.
	Duration *time.Duration `json:"duration,omitempty"`
	Fields   Fields         `json:"-"`
}

// ParseChange reads modify-booking arguments (after `set`).
func ParseChange(kv map[string]string, now time.Time, zone Zone) (Change, Problems) {
	var c Change
	var ps Problems
	c.Fields = DefaultFields
	if s, ok := kv["start"]; ok {
		t := parseTimeField(&ps, "start", s, now, zone)
		c.Start = &t
	}
	e, hasE := kv["end"]
	d, hasD := kv["duration"]
	switch {
	case hasE && hasD:
		ps.Add("end", "give end= or duration=, not both")
	case hasE:
		t := parseTimeField(&ps, "end", e, now, zone)
		c.End = &t
	case hasD:
		c.Fields.End = "duration"
		dur, err := ParseDuration(d)
		if err != nil {
			ps.Add("duration", "%v", err)
		} else {
			c.Duration = &dur
			if c.Start != nil && !c.Start.IsZero() {
				checkRange(&ps, "duration", c.Start.Add(dur))
			}
		}
	}
	for _, k := range []string{"gpus", "nodes"} {
		if v, ok := kv[k]; ok {
			if c.Count != nil {
				ps.Add(k, "give gpus= or nodes=, not both")
				continue
			}
			name, n := parseAmount(&ps, k, v, map[string]string{"gpus": "gpus=h100:8", "nodes": "nodes=dgx:2"}[k])
			c.Type, c.Count = &name, &n
			c.Fields.GPUs = k
		}
	}
	if p, ok := kv["purpose"]; ok {
		p = strings.TrimSpace(p)
		checkPurpose(&ps, p)
		c.Purpose = &p
	}
	if len(kv) == 0 {
		ps.Add("set", "nothing to change; give start=, end=, duration=, gpus= or purpose=")
	}
	return c, ps
}

func parseAmount(ps *Problems, field, v, example string) (string, int) {
	name, cnt, ok := strings.Cut(strings.TrimSpace(v), ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		ps.Add(field, "%q: want NAME:COUNT, e.g. %s", v, example)
		return name, 0
	}
	if strings.ContainsAny(name, ",= ") {
		ps.Add(field, "%q: one NAME:COUNT only, e.g. %s", v, example)
		return name, 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(cnt))
	switch {
	case err != nil:
		ps.Add(field, "count %q is not a whole number", cnt)
	case n < 0:
		ps.Add(field, "count %d is negative; book at least 1", n)
	case n == 0:
		ps.Add(field, "count is 0; book at least 1")
	}
	return name, n
}

func parseTimeField(ps *Problems, field, s string, now time.Time, zone Zone) time.Time {
	t, err := ParseTime(s, now, zone)
	if err != nil {
		ps.Add(field, "%v", err)
		return time.Time{}
	}
	return t
}

func checkPurpose(ps *Problems, p string) {
	if len(p) > 255 {
		ps.Add("purpose", "is %d bytes; at most 255", len(p))
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			ps.Add("purpose", "contains a control character")
			break
		}
	}
}
