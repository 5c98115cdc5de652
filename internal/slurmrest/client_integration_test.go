//go:build integration

package slurmrest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpubridge/gpubridge/internal/testbed"
)

// TestIntegration runs every client method against the real testbed, once
// per supported data_parser version.
func TestIntegration(t *testing.T) {
	env := testbed.Require(t)
	for _, v := range Supported {
		t.Run(v, func(t *testing.T) {
			c := itClient(t, env, v)
			p := "it-sr" + strings.TrimPrefix(v, "v0.0.") // it-sr44, it-sr43: object-name prefix
			t.Run("Ping", func(t *testing.T) { itPing(t, c, v) })
			t.Run("JWTClock", func(t *testing.T) { itJWTClock(t, env, v) })
			t.Run("Nodes", func(t *testing.T) { itNodes(t, c) })
			t.Run("Partitions", func(t *testing.T) { itPartitions(t, c) })
			t.Run("TRES", func(t *testing.T) { itTRES(t, c) })
			t.Run("QOS", func(t *testing.T) { itQOS(t, c, p) })
			t.Run("AccountsUsersAssociations", func(t *testing.T) { itAccounts(t, env, c, p) })
			t.Run("Reservations", func(t *testing.T) { itReservations(t, c, p) })
			t.Run("Jobs", func(t *testing.T) { itJobs(t, c, p) })
		})
	}
}

func itClient(t *testing.T, env testbed.Env, v string) *Client {
	t.Helper()
	var log bytes.Buffer
	c, err := New(context.Background(), Options{
		URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, User: env.RestUser, APIVersion: v,
		Timeout: 20 * time.Second, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("New(%s): %v", v, err)
	}
	t.Cleanup(func() {
		// The real server's exchanges must not leak a token into the log either.
		for _, tok := range c.auth.tokens {
			if strings.Contains(log.String(), tok.token) {
				t.Errorf("debug log contains a token")
			}
		}
	})
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func itPing(t *testing.T, c *Client, v string) {
	p, err := c.Ping(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.APIVersion != v || c.APIVersion() != v || p.Cluster != "testbed" || !strings.HasPrefix(p.SlurmVersion, "26.") || !p.Up() {
		t.Errorf("Ping = %+v", p)
	}
	// Negotiation without a pin prefers v0.0.44 on 26.05.
	env := testbed.Require(t)
	n, err := New(ctx(t), Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile})
	if err != nil {
		t.Fatal(err)
	}
	if n.APIVersion() != V44 || n.Cluster() != "testbed" {
		t.Errorf("negotiated %s on cluster %q, want v0.0.44 on testbed", n.APIVersion(), n.Cluster())
	}
}

// itJWTClock pins what slurmrestd accepts: iat is not checked (an hour in
// the future or past passes), exp is (an expired token is refused by
// slurmctld and slurmdbd, although ping still answers).
func itJWTClock(t *testing.T, env testbed.Env, v string) {
	cases := map[string]struct {
		shift  time.Duration // the client's clock against the real one
		life   time.Duration
		wantOK bool
	}{
		"iat an hour ahead":  {shift: time.Hour, life: 2 * time.Hour, wantOK: true},
		"iat an hour behind": {shift: -time.Hour, life: 2 * time.Hour, wantOK: true},
		"exp a minute ago":   {shift: -11 * time.Minute, life: 10 * time.Minute},
		"exp an hour ago":    {shift: -2 * time.Hour, life: time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// NoClockCorrection: this pins Slurm's own rules; the correction
			// is tested in test/fault (TestClockOff).
			c, err := New(ctx(t), Options{URL: env.RestURL, JWTKeyFile: env.JWTKeyFile, APIVersion: v, TokenLifetime: tc.life,
				Now: func() time.Time { return time.Now().Add(tc.shift) }, NoClockCorrection: true})
			if err != nil {
				t.Fatalf("New: %v (negotiation pings, which slurmctld answers even with an expired token)", err)
			}
			_, errNodes := c.ListNodes(ctx(t))
			_, errQOS := c.ListQOS(ctx(t))
			if tc.wantOK {
				if errNodes != nil || errQOS != nil {
					t.Errorf("ListNodes: %v; ListQOS: %v", errNodes, errQOS)
				}
				return
			}
			if !errors.Is(errNodes, ErrUnauthorized) {
				t.Errorf("ListNodes with an expired token: %v, want ErrUnauthorized (HTTP 511, error 1007)", errNodes)
			}
			var se *SlurmError
			if !errors.As(errQOS, &se) || se.HTTPStatus != 502 || !se.HasNumber(7000) {
				t.Errorf("ListQOS with an expired token: %v, want HTTP 502 with error 7000", errQOS)
			}
		})
	}
}

func itNodes(t *testing.T, c *Client) {
	nodes, err := c.ListNodes(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, n := range nodes {
		for _, g := range n.GPUs() {
			got[n.Name+"/"+g.Type] = []int64{g.Total}
			if g.Used < 0 || g.Used > g.Total {
				t.Errorf("%s %s: used %d of %d", n.Name, g.Type, g.Used, g.Total)
			}
		}
		if len(n.State) == 0 || n.CPUs == 0 || n.MemoryMB == 0 || n.TRES == "" {
			t.Errorf("node %s lacks state, cpus, memory or tres: %+v", n.Name, n)
		}
	}
	want := map[string][]int64{"gpu-a/h100": {4}, "gpu-b/1g.10gb": {7}, "gpu-b/3g.40gb": {2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPUs per node and type (-want +got):\n%s", diff)
	}
	i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == "gpu-a" })
	if i < 0 || !slices.Equal(nodes[i].Partitions, []string{"pool", "ondemand"}) {
		t.Errorf("gpu-a partitions: %+v", nodes)
	}
}

func itPartitions(t *testing.T, c *Client) {
	parts, err := c.ListPartitions(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Partition{}
	for _, p := range parts {
		byName[p.Name] = p
	}
	pool := byName["pool"]
	if pool.Nodes != "gpu-a,gpu-b" || pool.TotalNodes != 2 || pool.PriorityTier != 10 || !slices.Contains(pool.State, "UP") ||
		!strings.Contains(pool.TRES, "gres/gpu:h100=4") || !pool.MaxTimeMinutes.Infinite {
		t.Errorf("pool = %+v", pool)
	}
	if _, ok := byName["ondemand"]; !ok {
		t.Errorf("no ondemand partition in %v", parts)
	}
}

func itTRES(t *testing.T, c *Client) {
	tres, err := c.ListTRES(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, r := range tres {
		if r.ID == 0 {
			t.Errorf("TRES %s has no id", r.Key())
		}
		keys[r.Key()] = true
	}
	for _, k := range []string{"cpu", "mem", "gres/gpu", "gres/gpu:h100", "gres/gpu:1g.10gb", "gres/gpu:3g.40gb"} {
		if !keys[k] {
			t.Errorf("TRES %s missing from %v", k, keys)
		}
	}
}

func findQOS(t *testing.T, c *Client, name string) (QOS, bool) {
	t.Helper()
	all, err := c.ListQOS(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(q QOS) bool { return q.Name == name })
	if i < 0 {
		return QOS{}, false
	}
	return all[i], true
}

func itQOS(t *testing.T, c *Client, p string) {
	name, other := p+"-q", p+"-q2"
	itRemove(t, c, itObjects{qos: []string{name, other}})
	x := ctx(t)
	// Create two in one request.
	err := c.SetQOS(x, []QOSSpec{
		{Name: name, Description: "it quota", Priority: LimitOf(50), PreemptMode: []string{"REQUEUE"}, Preempt: []string{},
			UsageFactor: ptr(2.0), GrpTRES: []TRES{GPU("h100", 16), GPU("1g.10gb", 14)},
			MaxTRESPerUser: []TRES{GPU("", 3)}, MaxTRESPerJob: []TRES{{Type: "cpu", Count: 4}},
			GrpJobs: LimitOf(5), MaxJobsPerUser: LimitOf(2), MaxSubmitPerUser: LimitOf(20), MaxWallMinutes: LimitOf(60)},
		{Name: other, Description: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := findQOS(t, c, name)
	if !ok {
		t.Fatalf("QOS %s not created", name)
	}
	type view struct {
		Desc                                   string
		Prio, GrpJobs, MaxJobsPU, MaxSubPU, MW string
		Mode                                   []string
		UF                                     float64
		Grp, PU, PJ                            string
	}
	v := func(q QOS) view {
		return view{q.Description, q.Priority.String(), q.GrpJobs.String(), q.MaxJobsPerUser.String(), q.MaxSubmitPerUser.String(),
			q.MaxWallMinutes.String(), q.PreemptMode, q.UsageFactor, tresKeys(q.GrpTRES), tresKeys(q.MaxTRESPerUser), tresKeys(q.MaxTRESPerJob)}
	}
	want := view{"it quota", "50", "5", "2", "20", "60", []string{"REQUEUE"}, 2, "gres/gpu:1g.10gb=14,gres/gpu:h100=16", "gres/gpu=3", "cpu=4"}
	if diff := cmp.Diff(want, v(q)); diff != "" {
		t.Errorf("created QOS (-want +got):\n%s", diff)
	}
	// The same read through sacctmgr: the JSON paths mean what we think.
	out := testbed.Require(t).Exec(t, "", "sacctmgr", "-n", "-P", "show", "qos", name, "format=grptres,grpjobs,maxjobspu,maxsubmitpu,maxtrespu,maxtres,maxwall,preemptmode")
	if got := strings.TrimSpace(out); got != "gres/gpu:1g.10gb=14,gres/gpu:h100=16|5|2|20|gres/gpu=3|cpu=4|01:00:00|requeue" {
		t.Errorf("sacctmgr show qos: %q", got)
	}
	// Modify: lower one GPU type, clear the other and the job limit. The
	// preempt mode must survive an update that does not name it.
	before := c.Stats()
	err = c.SetQOS(x, []QOSSpec{{Name: name, GrpTRES: []TRES{GPU("h100", 8)}, ClearGrpTRES: []string{"gres/gpu:1g.10gb"}, GrpJobs: Unlimited()}})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Stats().Writes - before.Writes; d != 1 {
		t.Errorf("SetQOS made %d writes, want 1", d)
	}
	q, _ = findQOS(t, c, name)
	want.Grp, want.GrpJobs = "gres/gpu:h100=8", "unlimited"
	if diff := cmp.Diff(want, v(q)); diff != "" {
		t.Errorf("modified QOS (-want +got):\n%s", diff)
	}
	if n, ok := q.GrpTRESCount("gres/gpu:h100"); !ok || n != 8 {
		t.Errorf("GrpTRESCount(h100) = %d, %v", n, ok)
	}
	// A negative count is refused before anything is sent.
	before = c.Stats()
	if err := c.SetQOS(x, []QOSSpec{{Name: name, GrpTRES: []TRES{GPU("h100", -1)}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative GrpTRES: %v, want ErrInvalid", err)
	}
	if c.Stats() != before {
		t.Errorf("a refused SetQOS sent requests: %+v -> %+v", before, c.Stats())
	}
	if err := c.DeleteQOS(x, other); err != nil {
		t.Fatal(err)
	}
	if _, ok := findQOS(t, c, other); ok {
		t.Errorf("QOS %s still there after DeleteQOS", other)
	}
}

func tresKeys(ts []TRES) string {
	s := slices.Clone(ts)
	slices.SortFunc(s, func(a, b TRES) int { return strings.Compare(a.Key(), b.Key()) })
	for i := range s {
		s[i].ID = 0
	}
	return FormatTRES(s)
}

func itAccounts(t *testing.T, env testbed.Env, c *Client, p string) {
	acct, child, bare := p+"-a", p+"-b", p+"-bare"
	u1, u2 := p+"-u1", p+"-u2"
	qos := p + "-aq"
	x := ctx(t)
	itRemove(t, c, itObjects{accounts: []string{child, acct, bare}, users: []string{u1, u2}, qos: []string{qos}})
	if err := c.SetQOS(x, []QOSSpec{{Name: qos, PreemptMode: []string{"DISABLED"}}}); err != nil {
		t.Fatal(err)
	}
	// Two accounts with their cluster associations, child under acct.
	if err := c.CreateAccounts(x, []AccountSpec{{Name: acct, Description: "it tenant"}, {Name: child, Parent: acct}}); err != nil {
		t.Fatal(err)
	}
	// Again: nothing changes (Slurm answers 304), and that is success.
	if err := c.CreateAccounts(x, []AccountSpec{{Name: acct, Description: "it tenant"}}); err != nil {
		t.Fatalf("second CreateAccounts: %v", err)
	}
	accts, err := c.ListAccounts(x)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(accts, func(a Account) bool { return a.Name == acct }); i < 0 || accts[i].Description != "it tenant" || accts[i].Organization != acct {
		t.Errorf("ListAccounts: %s missing or wrong: %+v", acct, accts)
	}
	if err := c.CreateUsers(x, []UserSpec{{Name: u1, DefaultAccount: acct}, {Name: u2, DefaultAccount: acct}}); err != nil {
		t.Fatal(err)
	}
	err = c.SetAssociations(x, []AssociationSpec{
		{Account: acct, User: u1, QOS: []string{"normal", qos}, DefaultQOS: qos},
		{Account: acct, User: u2, QOS: []string{"normal"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	assocs, err := c.ListAssociations(x, AssociationFilter{Accounts: []string{acct, child}, Clusters: []string{"testbed"}})
	if err != nil {
		t.Fatal(err)
	}
	type av struct {
		Account, User, Parent, DefQOS string
		QOS                           []string
	}
	var got []av
	for _, a := range assocs {
		q := slices.Clone(a.QOS)
		slices.Sort(q)
		got = append(got, av{a.Account, a.User, a.ParentAccount, a.DefaultQOS, q})
	}
	slices.SortFunc(got, func(a, b av) int { return strings.Compare(a.Account+"/"+a.User, b.Account+"/"+b.User) })
	want := []av{
		{acct, "", "root", "", []string{"normal"}},
		{acct, u1, "", qos, []string{qos, "normal"}},
		{acct, u2, "", "", []string{"normal"}},
		{child, "", acct, "", []string{"normal"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}
	// Modify: the QOS list is replaced; leaving out the default QOS is
	// Slurm's error 7011 (HTTP 422).
	err = c.SetAssociations(x, []AssociationSpec{{Account: acct, User: u1, QOS: []string{"normal"}}})
	var se *SlurmError
	if !errors.As(err, &se) || se.HTTPStatus != 422 || !se.HasNumber(7011) {
		t.Errorf("dropping the default QOS: %v, want HTTP 422 error 7011", err)
	}
	if err := c.SetAssociations(x, []AssociationSpec{{Account: acct, User: u1, QOS: []string{"normal"}, DefaultQOS: "normal"}}); err != nil {
		t.Fatal(err)
	}
	assocs, _ = c.ListAssociations(x, AssociationFilter{Accounts: []string{acct}, Users: []string{u1}})
	if len(assocs) != 1 || !slices.Equal(assocs[0].QOS, []string{"normal"}) || assocs[0].DefaultQOS != "normal" {
		t.Errorf("after modify: %+v", assocs)
	}
	users, err := c.ListUsers(x)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(users, func(u User) bool { return u.Name == u1 }); i < 0 || users[i].DefaultAccount != acct || users[i].AdminLevel != "None" {
		t.Errorf("ListUsers: %s missing or wrong: %+v", u1, users)
	}

	// The silent no-op: an account that exists but has no cluster
	// association. Slurm accepts the user association and creates nothing;
	// the client refuses instead.
	// POST accounts/ (which CreateAccounts does not use) makes just that.
	if err := c.do(x, "POST", c.dbPath("accounts/"), nil, map[string]any{"accounts": []map[string]string{{"name": bare, "description": "d", "organization": "o"}}}, nil); err != nil {
		t.Fatal(err)
	}
	before := c.Stats()
	err = c.SetAssociations(x, []AssociationSpec{{Account: bare, User: u1}})
	if !errors.Is(err, ErrNoClusterAssociation) {
		t.Errorf("SetAssociations on %s: %v, want ErrNoClusterAssociation", bare, err)
	}
	if w := c.Stats().Writes - before.Writes; w != 0 {
		t.Errorf("%d writes for a refused SetAssociations", w)
	}

	// Coordinators: add twice (second is a no-op write-wise), remove.
	if err := c.AddCoordinators(x, acct, []string{u1, u2}); err != nil {
		t.Fatal(err)
	}
	before = c.Stats()
	if err := c.AddCoordinators(x, acct, []string{u1}); err != nil {
		t.Fatal(err)
	}
	if w := c.Stats().Writes - before.Writes; w != 0 {
		t.Errorf("AddCoordinators of an existing coordinator made %d writes", w)
	}
	a, err := c.GetAccount(x, acct)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(a.Coordinators)
	if diff := cmp.Diff([]string{u1, u2}, a.Coordinators); diff != "" {
		t.Errorf("coordinators (-want +got):\n%s", diff)
	}
	if err := c.RemoveCoordinators(x, acct, []string{u1}); err != nil {
		t.Fatal(err)
	}
	out := env.Exec(t, "", "sacctmgr", "-n", "-P", "show", "user", u1, u2, "withcoord", "format=user,coord")
	// A coordinator of acct also coordinates its sub-account (Slurm's rule).
	if got := strings.Fields(strings.ReplaceAll(out, "\n", " ")); !slices.Equal(got, []string{u1 + "|", u2 + "|" + acct + "," + child}) {
		t.Errorf("sacctmgr coordinators after remove: %q", out)
	}
	a, _ = c.GetAccount(x, acct)
	if a.Description != "it tenant" {
		t.Errorf("coordinator change altered the description: %+v", a)
	}
	if _, err := c.GetAccount(x, p+"-none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetAccount(missing): %v, want ErrNotFound", err)
	}

	// Delete one user association, then the rest through the account.
	removed, err := c.DeleteAssociations(x, AssociationFilter{Accounts: []string{acct}, Users: []string{u2}})
	if err != nil || len(removed) != 1 {
		t.Errorf("DeleteAssociations = %q, %v; want one removed", removed, err)
	}
	if _, err := c.DeleteAssociations(x, AssociationFilter{Clusters: []string{"testbed"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("DeleteAssociations with only a cluster: %v, want ErrInvalid", err)
	}
	if err := c.DeleteAccount(x, child); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteUser(x, u2); err != nil {
		t.Fatal(err)
	}
	users, _ = c.ListUsers(x)
	if slices.ContainsFunc(users, func(u User) bool { return u.Name == u2 }) {
		t.Errorf("user %s still listed after DeleteUser", u2)
	}
}

func itReservations(t *testing.T, c *Client, p string) {
	name, byTRES := p+"-r", p+"-rt"
	itRemove(t, c, itObjects{reservations: []string{name, byTRES}})
	x := ctx(t)
	// Far in the future, and apart per version, so it collides with nothing.
	off := map[string]int{"it-sr44": 0, "it-sr43": 1}[p]
	start := time.Now().UTC().Truncate(time.Hour).Add(time.Duration(400+off*3) * 24 * time.Hour)
	got, err := c.CreateReservation(x, ReservationSpec{Name: name, Accounts: []string{"root"}, Nodes: []string{"gpu-a"},
		Start: start, Duration: 2 * time.Hour, Flags: []string{"IGNORE_JOBS"}})
	if err != nil {
		t.Fatal(err)
	}
	if got != name {
		t.Errorf("CreateReservation returned %q", got)
	}
	r, err := c.GetReservation(x, name)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Start.Equal(start) || !r.End.Equal(start.Add(2*time.Hour)) || r.Nodes != "gpu-a" || !slices.Equal(r.Accounts, []string{"root"}) {
		t.Errorf("reservation = %+v", r)
	}
	if err := c.UpdateReservations(x, []ReservationSpec{{Name: name, End: start.Add(3 * time.Hour), Users: []string{"root"}}}); err != nil {
		t.Fatal(err)
	}
	all, err := c.ListReservations(x)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(r Reservation) bool { return r.Name == name })
	if i < 0 || !all[i].End.Equal(start.Add(3*time.Hour)) {
		t.Errorf("after update: %+v", all)
	}
	// A booking by GPU count rather than by node: Slurm picks the node.
	if _, err := c.CreateReservation(x, ReservationSpec{Name: byTRES, Accounts: []string{"root"}, Partition: "pool",
		Start: start.Add(24 * time.Hour), End: start.Add(25 * time.Hour), TRES: []TRES{GPU("h100", 2)}}); err != nil {
		t.Fatal(err)
	}
	rt, err := c.GetReservation(x, byTRES)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rt.TRES, "gres/gpu:h100=2") || rt.Nodes != "gpu-a" || rt.Partition != "pool" {
		t.Errorf("TRES reservation = %+v", rt)
	}
	for _, n := range []string{name, byTRES} {
		if err := c.DeleteReservation(x, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetReservation(x, name); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetReservation after delete: %v, want ErrNotFound", err)
	}
	if err := c.DeleteReservation(x, name); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteReservation twice: %v, want ErrNotFound", err)
	}
}

func itJobs(t *testing.T, c *Client, p string) {
	acct, qos := p+"-j", p+"-jq"
	x := ctx(t)
	alice := c.As("alice")
	var jobs []int64
	itRemove(t, c, itObjects{accounts: []string{acct}, qos: []string{qos}, jobs: &jobs})
	if err := c.SetQOS(x, []QOSSpec{{Name: qos, PreemptMode: []string{"DISABLED"}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateAccounts(x, []AccountSpec{{Name: acct}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetAssociations(x, []AssociationSpec{{Account: acct, User: "alice", QOS: []string{"normal", qos}, DefaultQOS: "normal"}}); err != nil {
		t.Fatal(err)
	}
	submitted := time.Now().Add(-2 * time.Second)
	// A short job that runs, as alice, on a MIG slice.
	run, err := alice.SubmitJob(x, JobSpec{Name: p + "-run", Account: acct, Partition: "pool", TRESPerNode: "gres/gpu:1g.10gb:1",
		Script: "#!/bin/bash\nsleep 2\n", TimeLimitMinutes: 2, Comment: "it run", Environment: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, run.JobID)
	// A held job to update and cancel.
	held, err := alice.SubmitJob(x, JobSpec{Name: p + "-held", Account: acct, Partition: "pool", TRESPerNode: "gres/gpu:1g.10gb:1",
		Script: "#!/bin/bash\nsleep 2\n", TimeLimitMinutes: 2, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, held.JobID)
	j, err := c.GetJob(x, held.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if !j.HasState("PENDING") || j.User != "alice" || j.Account != acct || j.Partition != "pool" || j.TRESPerNode != "gres/gpu:1g.10gb:1" || j.TimeLimitMinutes.String() != "2" ||
		j.NodeCount.String() != "1" || j.Hold != true || j.Reason != "JobHeldUser" {
		t.Errorf("held job = %+v", j)
	}
	pending, err := c.ListJobs(x, JobFilter{States: []string{"PENDING"}, Accounts: []string{acct}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(pending, func(j Job) bool { return j.ID == held.JobID }) {
		t.Errorf("ListJobs(PENDING) lacks %d: %+v", held.JobID, pending)
	}
	// The owner moves the pending job (what the burst controller does as SlurmUser).
	if err := alice.UpdateJob(x, held.JobID, JobUpdate{Partition: ptr("ondemand"), QOS: ptr(qos), Comment: ptr("moved")}); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateJob(x, held.JobID, JobUpdate{AdminComment: ptr("gpubridge: burst")}); err != nil {
		t.Fatal(err)
	}
	j, _ = c.GetJob(x, held.JobID)
	if diff := cmp.Diff([]string{"ondemand", qos, "moved", "gpubridge: burst"}, []string{j.Partition, j.QOS, j.Comment, j.AdminComment}); diff != "" {
		t.Errorf("after UpdateJob (-want +got):\n%s", diff)
	}
	if err := c.UpdateJob(x, held.JobID, JobUpdate{Partition: ptr("no-such-partition")}); err == nil {
		t.Errorf("UpdateJob to a missing partition succeeded")
	}
	if err := c.CancelJob(x, held.JobID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJob(x, 999_999_999); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJob(missing): %v, want ErrNotFound", err)
	}

	// The running job completes and slurmdbd has it.
	deadline := time.Now().Add(45 * time.Second)
	var rec DBJob
	for {
		recs, err := c.ListDBJobs(x, DBJobFilter{Start: submitted, End: time.Now().Add(time.Minute), Accounts: []string{acct},
			ShowDuplicates: true, SkipSteps: true})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(recs, func(r DBJob) bool { return r.JobID == run.JobID })
		if i >= 0 && slices.Contains(recs[i].State, "COMPLETED") {
			rec = recs[i]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d not COMPLETED in slurmdbd within 45s: %+v", run.JobID, recs)
		}
		time.Sleep(time.Second)
	}
	// (Comment stays empty: slurmdbd stores it only with AccountingStoreFlags=job_comment.)
	if rec.User != "alice" || rec.Account != acct || rec.Partition != "pool" ||
		rec.StartTime.IsZero() || rec.EndTime.Before(rec.StartTime) || rec.Elapsed < 2*time.Second {
		t.Errorf("slurmdb record = %+v", rec)
	}
	if !slices.ContainsFunc(rec.TRESAllocated, func(r TRES) bool { return r.Key() == "gres/gpu:1g.10gb" && r.Count == 1 && r.ID > 0 }) {
		t.Errorf("TRESAllocated lacks gres/gpu:1g.10gb=1: %+v", rec.TRESAllocated)
	}
	// The cancelled job never became eligible (it was held), so a plain
	// window leaves it out (sacct's rule); a state filter finds it.
	recs, err := c.ListDBJobs(x, DBJobFilter{Start: submitted, End: time.Now().Add(time.Minute), Accounts: []string{acct}, States: []string{"CANCELLED"}, SkipSteps: true})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(recs, func(r DBJob) bool { return r.JobID == held.JobID }); i < 0 || !slices.Contains(recs[i].State, "CANCELLED") || recs[i].Elapsed != 0 ||
		len(recs[i].TRESAllocated) != 0 || !recs[i].StartTime.Equal(recs[i].EndTime) {
		t.Errorf("cancelled job %d not in slurmdbd as CANCELLED: %+v", held.JobID, recs)
	}
}
