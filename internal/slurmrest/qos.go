package slurmrest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// QOS is a slurmdbd quality of service with the limits gpubridge uses.
type QOS struct {
	ID          int
	Name        string
	Description string
	Priority    Limit
	Flags       []string
	// PreemptMode (e.g. [REQUEUE]) and Preempt, the QOS this one may preempt.
	PreemptMode []string
	Preempt     []string
	UsageFactor float64 // 1 when unset
	// GrpTRES is the QOS's group limit (GrpTRES), e.g. gres/gpu:h100=16.
	GrpTRES           []TRES
	MaxTRESPerUser    []TRES
	MaxTRESPerAccount []TRES
	MaxTRESPerJob     []TRES
	GrpJobs           Limit // running jobs in the QOS
	GrpSubmitJobs     Limit
	MaxJobsPerUser    Limit
	MaxSubmitPerUser  Limit
	MaxWallMinutes    Limit // per job
}

// GrpTRESCount returns the GrpTRES count for a key such as gres/gpu:h100.
func (q QOS) GrpTRESCount(key string) (int64, bool) {
	for _, t := range q.GrpTRES {
		if t.Key() == key {
			return t.Count, true
		}
	}
	return 0, false
}

// QOSSpec creates a QOS or modifies an existing one; unset fields are left
// as they are. TRES lists are merged into the existing limits: listed
// entries are set (count >= 0), entries named in the matching Clear field
// are removed, others are untouched. An explicit Unlimited() clears a
// numeric limit.
type QOSSpec struct {
	Name        string
	Description string // empty leaves it
	Priority    Limit
	Flags       []string // nil leaves them
	PreemptMode []string // nil leaves it
	Preempt     []string // nil leaves it
	UsageFactor *float64

	GrpTRES             []TRES
	ClearGrpTRES        []string // TRES keys, e.g. gres/gpu:1g.10gb
	MaxTRESPerUser      []TRES
	ClearMaxTRESPerUser []string
	MaxTRESPerJob       []TRES
	ClearMaxTRESPerJob  []string

	GrpJobs          Limit
	MaxJobsPerUser   Limit
	MaxSubmitPerUser Limit
	MaxWallMinutes   Limit

	// New says the caller knows the QOS does not exist yet: it has no
	// preempt mode to keep, so SetQOS need not read the QOS for it.
	New bool
}

type wTRESPer struct {
	Account []wTRES `json:"account,omitempty"`
	Job     []wTRES `json:"job,omitempty"`
	User    []wTRES `json:"user,omitempty"`
}

type wPerAU struct {
	Account *wNoVal `json:"account,omitempty"`
	User    *wNoVal `json:"user,omitempty"`
}

type wCount struct {
	Count *wNoVal `json:"count,omitempty"`
}

type wQOSJobs struct {
	Count      *wNoVal `json:"count,omitempty"`
	ActiveJobs *struct {
		Per *wPerAU `json:"per,omitempty"`
	} `json:"active_jobs,omitempty"`
	Per *wPerAU `json:"per,omitempty"`
}

type wQOSTRES struct {
	Total []wTRES   `json:"total,omitempty"`
	Per   *wTRESPer `json:"per,omitempty"`
}

type wQOSWall struct {
	Per *struct {
		Job *wNoVal `json:"job,omitempty"`
	} `json:"per,omitempty"`
}

type wQOSMax struct {
	ActiveJobs *wCount   `json:"active_jobs,omitempty"`
	Jobs       *wQOSJobs `json:"jobs,omitempty"`
	TRES       *wQOSTRES `json:"tres,omitempty"`
	WallClock  *wQOSWall `json:"wall_clock,omitempty"`
}

type wPreempt struct {
	List *[]string `json:"list,omitempty"` // nil leaves it; empty clears it
	Mode []string  `json:"mode,omitempty"`
}

type wQOS struct {
	ID          int       `json:"id,omitempty"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Flags       []string  `json:"flags,omitempty"`
	Priority    *wNoVal   `json:"priority,omitempty"`
	UsageFactor *wNoValF  `json:"usage_factor,omitempty"`
	Preempt     *wPreempt `json:"preempt,omitempty"`
	Limits      *struct {
		Max *wQOSMax `json:"max,omitempty"`
	} `json:"limits,omitempty"`
}

type qosResp struct {
	envelope
	QOS []wQOS `json:"qos"`
}

func (w wQOS) qos() QOS {
	q := QOS{ID: w.ID, Name: w.Name, Description: w.Description, Flags: w.Flags, Priority: w.Priority.limit(), UsageFactor: 1}
	if w.UsageFactor != nil && w.UsageFactor.Set && !w.UsageFactor.Infinite {
		q.UsageFactor = w.UsageFactor.Number
	}
	if p := w.Preempt; p != nil {
		q.PreemptMode = p.Mode
		if p.List != nil {
			q.Preempt = *p.List
		}
	}
	if w.Limits == nil || w.Limits.Max == nil {
		return q
	}
	m := w.Limits.Max
	if m.ActiveJobs != nil {
		q.GrpJobs = m.ActiveJobs.Count.limit()
	}
	if j := m.Jobs; j != nil {
		q.GrpSubmitJobs = j.Count.limit()
		if j.ActiveJobs != nil && j.ActiveJobs.Per != nil {
			q.MaxJobsPerUser = j.ActiveJobs.Per.User.limit()
		}
		if j.Per != nil {
			q.MaxSubmitPerUser = j.Per.User.limit()
		}
	}
	if t := m.TRES; t != nil {
		q.GrpTRES = fromWireTRES(t.Total)
		if t.Per != nil {
			q.MaxTRESPerUser = fromWireTRES(t.Per.User)
			q.MaxTRESPerAccount = fromWireTRES(t.Per.Account)
			q.MaxTRESPerJob = fromWireTRES(t.Per.Job)
		}
	}
	if wc := m.WallClock; wc != nil && wc.Per != nil {
		q.MaxWallMinutes = wc.Per.Job.limit()
	}
	return q
}

// ListQOS returns every QOS (GET /slurmdb/{v}/qos/).
func (c *Client) ListQOS(ctx context.Context) ([]QOS, error) {
	var resp qosResp
	if err := c.do(ctx, http.MethodGet, c.dbPath("qos/"), nil, nil, &resp); err != nil {
		return nil, fmt.Errorf("list QOS: %w", err)
	}
	out := make([]QOS, 0, len(resp.QOS))
	for _, w := range resp.QOS {
		out = append(out, w.qos())
	}
	return out, nil
}

func (s QOSSpec) wire() (wQOS, error) {
	w := wQOS{Name: s.Name, Description: s.Description, Flags: s.Flags}
	if s.Name == "" {
		return w, fmt.Errorf("%w: a QOS has no name", ErrInvalid)
	}
	for field, l := range map[string]Limit{"Priority": s.Priority, "GrpJobs": s.GrpJobs, "MaxJobsPerUser": s.MaxJobsPerUser,
		"MaxSubmitPerUser": s.MaxSubmitPerUser, "MaxWallMinutes": s.MaxWallMinutes} {
		if err := l.validate("QOS " + s.Name + " " + field); err != nil {
			return w, err
		}
	}
	w.Priority = wireLimit(s.Priority)
	if s.UsageFactor != nil {
		if *s.UsageFactor < 0 {
			return w, fmt.Errorf("%w: QOS %s UsageFactor %g is negative", ErrInvalid, s.Name, *s.UsageFactor)
		}
		w.UsageFactor = &wNoValF{Set: true, Number: *s.UsageFactor}
	}
	if s.Preempt != nil || s.PreemptMode != nil {
		w.Preempt = &wPreempt{Mode: s.PreemptMode}
		if s.Preempt != nil {
			l := slices.Clone(s.Preempt)
			if l == nil {
				l = []string{}
			}
			w.Preempt.List = &l
		}
	}
	grp, err := wireTRESList(s.GrpTRES, s.ClearGrpTRES, "QOS "+s.Name+" GrpTRES")
	if err != nil {
		return w, err
	}
	pu, err := wireTRESList(s.MaxTRESPerUser, s.ClearMaxTRESPerUser, "QOS "+s.Name+" MaxTRESPerUser")
	if err != nil {
		return w, err
	}
	pj, err := wireTRESList(s.MaxTRESPerJob, s.ClearMaxTRESPerJob, "QOS "+s.Name+" MaxTRESPerJob")
	if err != nil {
		return w, err
	}
	// Build limits.max only with what is set, so an update leaves the rest.
	var m wQOSMax
	if l := wireLimit(s.GrpJobs); l != nil {
		m.ActiveJobs = &wCount{Count: l}
	}
	if pu, ps := wireLimit(s.MaxJobsPerUser), wireLimit(s.MaxSubmitPerUser); pu != nil || ps != nil {
		m.Jobs = &wQOSJobs{}
		if pu != nil {
			m.Jobs.ActiveJobs = &struct {
				Per *wPerAU `json:"per,omitempty"`
			}{&wPerAU{User: pu}}
		}
		if ps != nil {
			m.Jobs.Per = &wPerAU{User: ps}
		}
	}
	if len(grp)+len(pu)+len(pj) > 0 {
		m.TRES = &wQOSTRES{Total: grp}
		if len(pu)+len(pj) > 0 {
			m.TRES.Per = &wTRESPer{User: pu, Job: pj}
		}
	}
	if l := wireLimit(s.MaxWallMinutes); l != nil {
		m.WallClock = &wQOSWall{Per: &struct {
			Job *wNoVal `json:"job,omitempty"`
		}{l}}
	}
	if m != (wQOSMax{}) {
		w.Limits = &struct {
			Max *wQOSMax `json:"max,omitempty"`
		}{&m}
	}
	return w, nil
}

// SetQOS creates the QOS that do not exist and modifies those that do, in
// one request (POST /slurmdb/{v}/qos/).
//
// Slurm resets an existing QOS's PreemptMode to "cluster" on any update
// that does not name one; so when a spec leaves PreemptMode nil (and is
// not New), SetQOS first reads the QOS (one ListQOS) and sends the current
// mode back.
func (c *Client) SetQOS(ctx context.Context, specs []QOSSpec) error {
	if len(specs) == 0 {
		return nil
	}
	var body struct {
		QOS []wQOS `json:"qos"`
	}
	var names []string
	needModes := false
	for _, s := range specs {
		w, err := s.wire()
		if err != nil {
			return fmt.Errorf("set QOS: %w", err)
		}
		if slices.Contains(names, s.Name) { // quadratic, but a QOS batch is small next to its request
			return fmt.Errorf("set QOS: %w: %s listed twice", ErrInvalid, s.Name)
		}
		names = append(names, s.Name)
		body.QOS = append(body.QOS, w)
		needModes = needModes || s.PreemptMode == nil && !s.New
	}
	if needModes {
		existing, err := c.ListQOS(ctx)
		if err != nil {
			return fmt.Errorf("set QOS: read current preempt modes: %w", err)
		}
		for i, s := range specs {
			if s.PreemptMode != nil {
				continue
			}
			for _, q := range existing {
				if q.Name == s.Name && len(q.PreemptMode) > 0 {
					if body.QOS[i].Preempt == nil {
						body.QOS[i].Preempt = &wPreempt{}
					}
					body.QOS[i].Preempt.Mode = q.PreemptMode
				}
			}
		}
	}
	idx := make([]int, len(body.QOS))
	for i := range idx {
		idx[i] = i
	}
	return chunked(ctx, c, "set QOS", idx, func(ctx context.Context, part []int) error {
		req := struct {
			QOS []wQOS `json:"qos"`
		}{make([]wQOS, len(part))}
		partNames := make([]string, len(part))
		for j, i := range part {
			req.QOS[j], partNames[j] = body.QOS[i], names[i]
		}
		if err := c.do(ctx, http.MethodPost, c.dbPath("qos/"), nil, req, nil); err != nil {
			return bulkError("set QOS", partNames, err)
		}
		return nil
	}, nil)
}

// DeleteQOSNames deletes QOS: one DELETE /slurmdb/{v}/qos/{name} per
// QOS (the API has no bulk delete of QOS), PipelineDepth at a time. A
// failed delete does not stop the others; the *BulkError names the QOS
// that were not deleted. "normal" and empty names are refused before
// anything is sent.
func (c *Client) DeleteQOSNames(ctx context.Context, names []string) error {
	for _, n := range names {
		if n == "" || n == "normal" {
			return fmt.Errorf("delete QOS: %w: refusing to delete %q", ErrInvalid, n)
		}
	}
	return c.pipeline(ctx, "delete QOS", names, c.DeleteQOS)
}

// DeleteQOS deletes a QOS (DELETE /slurmdb/{v}/qos/{name}).
func (c *Client) DeleteQOS(ctx context.Context, name string) error {
	if name == "" || name == "normal" {
		return fmt.Errorf("delete QOS: %w: refusing to delete %q", ErrInvalid, name)
	}
	if err := c.do(ctx, http.MethodDelete, c.dbPath("qos/%s", url.PathEscape(name)), nil, nil, nil); err != nil {
		return fmt.Errorf("delete QOS %q: %w", name, err)
	}
	return nil
}
