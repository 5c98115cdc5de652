package healthtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpubridge/gpubridge/bridge/health"
)

// Cluster is the fake. It implements health.NodeControl, health.JobRunner,
// health.Outputs and health.TenantUsage.
type Cluster struct {
	mu     sync.Mutex
	nodes  map[string]*health.SlurmNode
	fences map[string]bool
	jobs   map[int64]*Job
	order  []int64
	out    map[string][]byte
	nextID int64
	calls  []string

	// Check gives a check's output and exit code on a node; default: an
	// empty output and exit 0.
	Check func(node, check string) (string, int)
	// Now stamps the output's markers; default time.Now.
	Now func() time.Time
	// FailSubmit makes Submit fail.
	FailSubmit error
}

// Job is a job in the fake.
type Job struct {
	ID     int64
	Req    health.JobRequest
	State  string
	Node   string
	Tenant string // a tenant's job (not a check)
	key    string
	checks []string
}

// Checks are the checks of a check job, in run order.
func (j Job) Checks() []string { return slices.Clone(j.checks) }

var (
	_ health.NodeControl = (*Cluster)(nil)
	_ health.JobRunner   = (*Cluster)(nil)
	_ health.Outputs     = (*Cluster)(nil)
	_ health.TenantUsage = (*Cluster)(nil)
)

// New returns a fake with idle nodes of 4 h100 each.
func New(nodes ...string) *Cluster {
	c := &Cluster{nodes: map[string]*health.SlurmNode{}, fences: map[string]bool{}, jobs: map[int64]*Job{}, out: map[string][]byte{}, nextID: 100}
	for _, n := range nodes {
		c.nodes[n] = &health.SlurmNode{Name: n, Partitions: []string{"pool"}, GPUs: []health.GPU{{Type: "h100", Count: 4}}}
	}
	return c
}

func (c *Cluster) log(format string, a ...any) { c.calls = append(c.calls, fmt.Sprintf(format, a...)) }

// Calls returns the mutations made so far and forgets them.
func (c *Cluster) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	return out
}

// Node returns a node as slurmctld would report it.
func (c *Cluster) Node(name string) health.SlurmNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.nodes[name]
}

// Fenced reports whether the node has its health reservation.
func (c *Cluster) Fenced(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fences[name]
}

// PersonDrains drains a node with a reason of someone else's.
func (c *Cluster) PersonDrains(node, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	n.Drain, n.Reason = true, reason
}

// PersonResumes resumes a node (scontrol update state=resume).
func (c *Cluster) PersonResumes(node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	n.Drain, n.Down, n.Reason = false, false, ""
}

// Nodes returns every node.
func (c *Cluster) Nodes(context.Context) ([]health.SlurmNode, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []health.SlurmNode
	for _, n := range c.nodes {
		cp := *n
		cp.AllocCPUs, cp.AllocGPUs = 0, 0
		for _, j := range c.jobs {
			if j.Node == n.Name && j.State == "RUNNING" {
				cp.AllocCPUs++
			}
		}
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Fences returns the fenced nodes.
func (c *Cluster) Fences(context.Context) (map[string]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]bool{}
	for k, v := range c.fences {
		if v {
			out[k] = true
		}
	}
	return out, nil
}

// Fence creates the node's reservation.
func (c *Cluster) Fence(_ context.Context, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fences[node] {
		return fmt.Errorf("reservation %s exists", health.FenceName(node))
	}
	c.fences[node] = true
	c.log("fence %s", node)
	return nil
}

// Unfence deletes it.
func (c *Cluster) Unfence(_ context.Context, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.fences, node)
	c.log("unfence %s", node)
	return nil
}

// Drain drains a node.
func (c *Cluster) Drain(_ context.Context, node, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	n.Drain, n.Reason = true, reason
	c.log("drain %s: %s", node, reason)
	return nil
}

// Down stops a node and kills its jobs (NODE_FAIL).
func (c *Cluster) Down(_ context.Context, node, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	n.Down, n.Reason = true, reason
	for _, j := range c.jobs {
		if j.Node == node && j.State == "RUNNING" {
			j.State = "NODE_FAIL"
		}
	}
	c.log("down %s: %s", node, reason)
	return nil
}

// Resume resumes a node.
func (c *Cluster) Resume(_ context.Context, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[node]
	n.Drain, n.Down, n.Reason = false, false, ""
	c.log("resume %s", node)
	return nil
}

// Submit queues a check job.
func (c *Cluster) Submit(_ context.Context, r health.JobRequest) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.FailSubmit != nil {
		return 0, c.FailSubmit
	}
	if len(r.Nodes) < 1 || len(r.Nodes) > 2 || slices.ContainsFunc(r.Nodes, func(n string) bool { return c.nodes[n] == nil }) {
		return 0, fmt.Errorf("fake: job needs one or two known nodes, got %v", r.Nodes)
	}
	if r.Reservation != "" && !c.fences[strings.TrimPrefix(r.Reservation, "gpubridge_health_")] {
		return 0, fmt.Errorf("fake: reservation %s does not exist", r.Reservation)
	}
	key := strings.TrimPrefix(r.Comment, "gpubridge-health run=")
	header := strings.SplitN(r.Script, "\n", 3)[1] // # gpubridge health run <key>: a, b
	_, list, _ := strings.Cut(header, ": ")
	c.nextID++
	j := &Job{ID: c.nextID, Req: r, State: "PENDING", Node: r.Nodes[0], key: key, checks: strings.Split(list, ", ")}
	c.jobs[j.ID] = j
	c.order = append(c.order, j.ID)
	c.log("submit %d on %s: %s", j.ID, j.Node, list)
	return j.ID, nil
}

// SubmitTenant queues a tenant's job pinned to node; it runs until
// cancelled once it starts.
func (c *Cluster) SubmitTenant(tenant, node string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	j := &Job{ID: c.nextID, State: "PENDING", Node: node, Tenant: tenant}
	c.jobs[j.ID] = j
	c.order = append(c.order, j.ID)
	return j.ID
}

// JobState returns a job's state.
func (c *Cluster) JobState(id int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.jobs[id].State
}

// Jobs returns the check jobs submitted so far.
func (c *Cluster) Jobs() []Job {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Job
	for _, id := range c.order {
		if j := c.jobs[id]; j.Tenant == "" {
			out = append(out, *j)
		}
	}
	return out
}

// tick starts what can start; a check job runs to its end at once.
func (c *Cluster) tick() {
	for _, id := range c.order {
		j := c.jobs[id]
		if j.State != "PENDING" {
			continue
		}
		nodes := j.Req.Nodes
		if len(nodes) == 0 {
			nodes = []string{j.Node}
		}
		if slices.ContainsFunc(nodes, func(name string) bool {
			// a drained node, or one its health reservation holds whole
			return c.nodes[name].Unavailable() || (c.fences[name] && j.Req.Reservation != health.FenceName(name))
		}) {
			continue
		}
		if j.Tenant != "" {
			j.State = "RUNNING"
			continue
		}
		j.State = "COMPLETED"
		c.out[j.key] = c.output(j)
	}
}

func (c *Cluster) output(j *Job) []byte {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	var b strings.Builder
	for _, ch := range j.checks {
		out, rc := "", 0
		if c.Check != nil {
			// A job on two nodes prints what the first failing node gives.
			for i, n := range j.Req.Nodes {
				o, r := c.Check(n, ch)
				if i == 0 || (rc == 0 && r != 0) {
					out, rc = o, r
				}
			}
		}
		t := now().Unix()
		fmt.Fprintf(&b, "@@gpubridge-health %s begin %s %d\n%s", j.key, ch, t, out)
		if out != "" && !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "@@gpubridge-health %s end %s rc=%d %d\n", j.key, ch, rc, t+1)
	}
	return []byte(b.String())
}

// States ticks the scheduler once and returns the jobs' states.
func (c *Cluster) States(_ context.Context, ids []int64) (map[int64]health.JobState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick()
	out := map[int64]health.JobState{}
	for _, id := range ids {
		if j, ok := c.jobs[id]; ok {
			out[id] = health.JobState{State: j.State}
		}
	}
	return out, nil
}

// Find finds a job by run key.
func (c *Cluster) Find(_ context.Context, key string) (int64, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, j := range c.jobs {
		if j.key == key {
			return j.ID, true, nil
		}
	}
	return 0, false, nil
}

// Cancel cancels a job.
func (c *Cluster) Cancel(_ context.Context, id int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j, ok := c.jobs[id]; ok && (j.State == "PENDING" || j.State == "RUNNING") {
		j.State = "CANCELLED"
	}
	c.log("cancel %d", id)
	return nil
}

// Forget drops a job from slurmctld's memory (MinJobAge passed).
func (c *Cluster) Forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.jobs, id)
}

// Path is the output file of a run.
func (c *Cluster) Path(key string) string { return "/fake/" + key + ".out" }

// Read returns a run's output.
func (c *Cluster) Read(_ context.Context, key string, max int64) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.out[key]
	if !ok {
		return nil, health.ErrNoOutput
	}
	if int64(len(b)) > max {
		b = b[:max]
	}
	return slices.Clone(b), nil
}

// Remove deletes a run's output.
func (c *Cluster) Remove(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.out, key)
	return nil
}

// SetOutput replaces a run's output (a cut file, garbage).
func (c *Cluster) SetOutput(key string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out[key] = b
}

// TenantNodes returns the nodes running the tenant's jobs.
func (c *Cluster) TenantNodes(_ context.Context, tenant string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, j := range c.jobs {
		if j.Tenant == tenant && j.State == "RUNNING" && !slices.Contains(out, j.Node) {
			out = append(out, j.Node)
		}
	}
	sort.Strings(out)
	return out, nil
}
