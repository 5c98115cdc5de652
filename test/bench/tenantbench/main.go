package main

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/internal/sacctmgr"
	"github.com/gpubridge/gpubridge/internal/slurmrest"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tenantbench:", err)
		os.Exit(1)
	}
}

type opts struct {
	tenants, users, sample int
	prefix                 string
	sameDescription, keep  bool
	skipREST               bool
	cpuprofile             string
}

// bench holds what the steps share.
type bench struct {
	opts
	ctx    context.Context
	sacct  func(args ...string) (string, error)
	exec   func(script string) (time.Duration, error)
	quota  tenant.Quota
	naming tenant.Naming
}

func run() error {
	var o opts
	flag.IntVar(&o.tenants, "tenants", 1000, "tenants to apply")
	flag.IntVar(&o.users, "users", 3, "users per tenant")
	flag.IntVar(&o.sample, "sacctmgr-tenants", 100, "tenants created by the one-command-per-object sacctmgr loop (a sample; the total is extrapolated when smaller than -tenants; 0 = all)")
	flag.StringVar(&o.prefix, "prefix", "t3b", "name prefix of every object the benchmark creates")
	flag.BoolVar(&o.sameDescription, "same-description", false, "give every tenant the same description and organization (the default gives each its own, as a site does)")
	flag.BoolVar(&o.keep, "keep", false, "leave the benchmark's tenants in Slurm")
	flag.BoolVar(&o.skipREST, "skip-rest", false, "do not also measure the cold apply and delete without sacctmgr (slurmrestd only)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the no-op apply to this file")
	flag.Parse()
	if o.sample <= 0 || o.sample > o.tenants {
		o.sample = o.tenants
	}
	if msg := tenant.CheckName(o.prefix + "s0000"); msg != "" {
		return fmt.Errorf("-prefix: %s", msg)
	}
	// An interrupted run (Ctrl-C, a timeout's SIGTERM) still removes what it
	// made: the steps stop, the deferred clean-ups run on a fresh context.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe := os.Getenv("GPUBRIDGE_TESTBED_EXEC")
	root := os.Getenv("GPUBRIDGE_TESTBED_ROOT")
	if exe == "" || root == "" || os.Getenv("GPUBRIDGE_SLURMREST_URL") == "" || os.Getenv("GPUBRIDGE_DB_DSN") == "" {
		return fmt.Errorf("the testbed is not configured: `make testbed-up` and `source .testbed/env`")
	}
	b := &bench{opts: o, ctx: ctx}
	b.sacct = func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.Command(exe, append([]string{"sacctmgr"}, args...)...) // clean-ups too: not cancelled
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("sacctmgr %s: %w: %s", strings.Join(args[:min(3, len(args))], " "), err, clip(errb.String()))
		}
		return out.String(), err
	}
	// exec runs a shell script inside the testbed root (one process, so that
	// the chroot's start-up is not counted) and times it.
	b.exec = func(script string) (time.Duration, error) {
		path := filepath.Join(root, "tmp", o.prefix+"-bench.sh")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			return 0, err
		}
		defer os.Remove(path)
		t0 := time.Now()
		out, err := exec.CommandContext(ctx, exe, "bash", "/tmp/"+filepath.Base(path)).CombinedOutput()
		d := time.Since(t0)
		if err != nil {
			return d, fmt.Errorf("%w: %s", err, clip(string(out)))
		}
		return d, nil
	}
	b.naming = tenant.Naming{QOSPrefix: os.Getenv("GPUBRIDGE_QOS_PREFIX"), OnDemandQOS: "ondemand"}
	if v := os.Getenv("GPUBRIDGE_ONDEMAND_QOS"); v != "" {
		b.naming.OnDemandQOS = v
	}

	b.removeByPrefix(o.prefix) // leftovers of an interrupted run
	defer func() {
		if !o.keep {
			b.removeByPrefix(o.prefix)
		}
	}()
	onDemandMade, err := b.ensureOnDemand()
	if err != nil {
		return err
	}
	if onDemandMade && !o.keep {
		defer b.sacct("-i", "delete", "qos", "name="+b.naming.OnDemandQOS)
	}

	st, dropDB, err := scratchStore(ctx, os.Getenv("GPUBRIDGE_DB_DSN"), "gpubridge_"+o.prefix+"bench")
	if err != nil {
		return err
	}
	defer dropDB()
	cl, err := slurmrest.New(ctx, slurmrest.Options{
		URL: os.Getenv("GPUBRIDGE_SLURMREST_URL"), JWTKeyFile: os.Getenv("GPUBRIDGE_SLURMREST_JWT_KEY"),
		Token: os.Getenv("GPUBRIDGE_SLURMREST_TOKEN"), User: "root", Cluster: os.Getenv("GPUBRIDGE_CLUSTER"), Timeout: 15 * time.Minute,
	})
	if err != nil {
		return err
	}
	// As gpubridge is configured by default (reconcile.readAssociations=auto):
	// associations from slurmdbd's database when its DSN is set.
	ad := slurmadapter.New(cl)
	adREST := slurmadapter.New(cl)
	readFrom := "slurmrestd"
	if dsn := os.Getenv("GPUBRIDGE_SLURMDB_DSN"); dsn != "" {
		db, err := sqlx.Open("mysql", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		ad.ReadAssociationsFrom(slurmadapter.AssocDB{DB: db}, nil)
		readFrom = "slurmdbd's database (reconcile.readAssociations=auto with slurmdb.dsn set)"
	}
	types, err := ad.GPUTypes(ctx)
	if err != nil {
		return err
	}
	b.quota = tenant.Quota{}
	for _, t := range types {
		if len(b.quota) < 2 {
			b.quota[t] = 2
		}
	}
	ts := b.tenants(o.prefix, o.tenants)
	if ps := tenant.ValidateSet(ts, nil, tenant.Rules{GPUTypes: types, Naming: b.naming}, true); len(ps) > 0 {
		return ps
	}
	looks := "each tenant with its own description and organization"
	if o.sameDescription {
		looks = "every tenant with the same description and organization"
	}
	fmt.Printf("tenants bench: %d tenants x %d users (%d QOS, %d accounts, %d users, %d associations), GPU quota %s, %s\n",
		o.tenants, o.users, o.tenants, o.tenants, o.tenants*o.users, o.tenants*o.users, b.quota, looks)
	if out, err := exec.Command("uptime").Output(); err == nil {
		fmt.Printf("  machine load at start: %s", out)
	}

	// 1. The fast peer: sacctmgr with the same tenants, from one file.
	peer, err := b.peer(ts)
	if err != nil {
		return fmt.Errorf("sacctmgr load: %w", err)
	}
	// 2. The slow peer: one sacctmgr command per object, on a sample.
	loop, cmds, err := b.loop()
	if err != nil {
		return fmt.Errorf("sacctmgr loop: %w", err)
	}
	// 3. gpubridge, on the same tables.
	if _, err := st.Put(ctx, "tenantbench", ts); err != nil {
		return err
	}
	// gpubridge with reconcile.sacctmgr set (the testbed's sacctmgr runs in
	// its root, through GPUBRIDGE_TESTBED_EXEC: that start-up is counted),
	// and with slurmrestd only.
	runner := &sacctmgr.Runner{Argv: []string{exe, "sacctmgr"}, Cluster: cl.Cluster()}
	tad := &timedLoading{timed: &timed{Cluster: ad.WithSacctmgr(runner, 0, nil)}}
	tREST := &timed{Cluster: ad}
	scope := func(n string) bool { return strings.HasPrefix(n, o.prefix) }
	r := &reconcile.Reconciler{Store: st, Cluster: tad, Naming: b.naming, Actor: "tenantbench", Scope: scope}
	rNoopREST := *r
	rNoopREST.Cluster = adREST
	rREST := *r
	rREST.Cluster = tREST
	apply := func(r *reconcile.Reconciler, tm *timed, profile string) (m measure, err error) {
		s0, c0 := cl.Stats(), runner.Commands()
		if profile != "" {
			f, err := os.Create(profile)
			if err != nil {
				return m, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return m, err
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		tm.reset()
		p, tss, err := r.Plan(ctx)
		if err != nil {
			return m, err
		}
		m.plan = time.Since(t0)
		if _, err := r.Apply(ctx, p, tss); err != nil {
			return m, err
		}
		m.d = time.Since(t0)
		s1 := cl.Stats()
		m.reads, m.writes, m.changes = s1.Reads-s0.Reads, s1.Writes-s0.Writes, len(p.Changes)
		tm.mu.Lock()
		m.steps = strings.Join(tm.steps, ", ")
		tm.mu.Unlock()
		m.cmds = int(runner.Commands() - c0)
		return m, nil
	}
	deleteAll := func() error {
		stored, err := st.ListStored(ctx)
		if err != nil {
			return err
		}
		var del tenant.Edit
		for _, t := range stored {
			if strings.HasPrefix(t.Name, o.prefix) {
				del.Delete = append(del.Delete, t)
			}
		}
		return st.Commit(ctx, "tenantbench", del)
	}
	cold, err := apply(r, tad.timed, "")
	if err != nil {
		return fmt.Errorf("cold apply: %w", err)
	}
	noop, err := apply(r, tad.timed, o.cpuprofile)
	if err != nil {
		return fmt.Errorf("no-op apply: %w", err)
	}
	noopREST, err := apply(&rNoopREST, tad.timed, "")
	if err != nil {
		return fmt.Errorf("no-op apply (associations from slurmrestd): %w", err)
	}
	parts, err := b.noopParts(st, cl)
	if err != nil {
		return fmt.Errorf("no-op breakdown: %w", err)
	}
	if err := deleteAll(); err != nil {
		return err
	}
	gone, err := apply(r, tad.timed, "")
	if err != nil {
		return fmt.Errorf("delete apply: %w", err)
	}
	var coldREST, goneREST measure
	if !o.skipREST {
		if _, err := st.Put(ctx, "tenantbench", ts); err != nil {
			return err
		}
		if coldREST, err = apply(&rREST, tREST, ""); err != nil {
			return fmt.Errorf("cold apply (slurmrestd only): %w", err)
		}
		if err := deleteAll(); err != nil {
			return err
		}
		if goneREST, err = apply(&rREST, tREST, ""); err != nil {
			return fmt.Errorf("delete apply (slurmrestd only): %w", err)
		}
	}

	// Report.
	total, label := loop, "measured"
	if o.sample < o.tenants {
		total = time.Duration(float64(loop) * float64(o.tenants) / float64(o.sample))
		label = fmt.Sprintf("EXTRAPOLATED linearly from %d tenants; sacctmgr slows as the tables grow, so the real total is higher", o.sample)
	}
	fmt.Println()
	fmt.Printf("  %-44s %9s  %s\n", "what", "wall", "requests / commands")
	row := func(what string, d time.Duration, how string) {
		fmt.Printf("  %-44s %8.2fs  %s\n", what, d.Seconds(), how)
	}
	row("gpubridge cold apply (reconcile.sacctmgr)", cold.d, cold.String())
	row("  batches (start-end)", cold.d-cold.plan, cold.steps)
	row("gpubridge no-op apply", noop.d, noop.String()+"; associations from "+readFrom)
	row("gpubridge no-op apply, associations by REST", noopREST.d, noopREST.String()+" (reconcile.readAssociations=rest)")
	row("  of which, by REST: store, reads, diff", noopREST.plan, parts)
	row("gpubridge delete apply (all tenants)", gone.d, gone.String())
	row("  batches (start-end)", gone.d-gone.plan, gone.steps)
	if !o.skipREST {
		row("gpubridge cold apply, slurmrestd only", coldREST.d, coldREST.String())
		row("  batches (start-end)", coldREST.d-coldREST.plan, coldREST.steps)
		row("gpubridge delete apply, slurmrestd only", goneREST.d, goneREST.String())
		row("  batches (start-end)", goneREST.d-goneREST.plan, goneREST.steps)
	}
	row("sacctmgr add qos + load file (cold)", peer.cold, fmt.Sprintf("2 commands (add qos %.2fs, load %.2fs)", peer.addQOS.Seconds(), peer.load.Seconds()))
	row("sacctmgr load file again (no-op)", peer.noop, "1 command")
	row("sacctmgr delete account + delete qos", peer.del, fmt.Sprintf("2 commands (account %.2fs, qos %.2fs)", peer.delAcct.Seconds(), peer.delQOS.Seconds()))
	row(fmt.Sprintf("sacctmgr loop, %d tenants", o.sample), loop, fmt.Sprintf("%d commands, %.0f ms each", cmds, float64((loop/time.Duration(max(1, cmds))).Microseconds())/1000))
	row(fmt.Sprintf("sacctmgr loop, all %d tenants", o.tenants), total, label)
	fmt.Println()
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	ratio := func(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 1e-9) }
	fmt.Printf("  cold:   gpubridge / sacctmgr load      = %5.2fx  (goal <= 1: %s)\n", ratio(cold.d, peer.cold), met(cold.d <= peer.cold))
	fmt.Printf("  no-op:  gpubridge                      = %5.2fs, %d reads, %d writes  (goal <= 0.5 s and 0 writes: %s)\n", noop.d.Seconds(), noop.reads, noop.writes, met(noop.d <= 500*time.Millisecond && noop.writes == 0))
	fmt.Printf("  no-op:  gpubridge / sacctmgr load      = %5.3fx  (goal <= 0.1: %s)\n", ratio(noop.d, peer.noop), met(noop.d*10 <= peer.noop))
	fmt.Printf("  delete: gpubridge / sacctmgr delete    = %5.2fx  (goal <= 2: %s)\n", ratio(gone.d, peer.del), met(gone.d <= 2*peer.del))
	if !o.skipREST {
		fmt.Printf("  slurmrestd only: cold / sacctmgr load = %5.2fx, delete / sacctmgr delete = %5.2fx\n", ratio(coldREST.d, peer.cold), ratio(goneREST.d, peer.del))
	}
	fmt.Printf("  sacctmgr loop (all tenants) / gpubridge cold = %.1fx\n", ratio(total, cold.d))
	if out, err := exec.Command("uptime").Output(); err == nil {
		fmt.Printf("  machine load at end:   %s", out)
	}
	return nil
}

type measure struct {
	d, plan       time.Duration
	reads, writes int64
	changes       int
	steps         string
	cmds          int
}

func (m measure) String() string {
	s := fmt.Sprintf("%d changes, slurmrestd %d reads, %d writes", m.changes, m.reads, m.writes)
	if m.cmds > 0 {
		s += fmt.Sprintf(", %d sacctmgr commands", m.cmds)
	}
	return s
}

// tenants are n tenants named prefix0000.., with their own descriptions
// and organizations unless sameDescription.
func (b *bench) tenants(prefix string, n int) []tenant.Tenant {
	var ts []tenant.Tenant
	for i := range n {
		name := fmt.Sprintf("%s%04d", prefix, i)
		t := tenant.Tenant{Name: name, GPUs: b.quota.Clone(), State: tenant.Active}
		if !b.sameDescription {
			t.Description = fmt.Sprintf("Team %04d research", i)
			t.Organization = fmt.Sprintf("org-%04d", i)
		}
		for u := range b.users {
			t.Users = append(t.Users, fmt.Sprintf("%s%c", name, 'a'+u))
		}
		ts = append(ts, t)
	}
	return ts
}

type peerTimes struct {
	addQOS, load, cold, noop, delAcct, delQOS, del time.Duration
}

// peer measures sacctmgr on the same tenants (the same names, QOS,
// descriptions, organizations, users, QOS lists and defaults as
// gpubridge projects): one `sacctmgr add qos` of every QOS, one `sacctmgr
// load` of a flat file with the accounts and users, the same load again
// (nothing to do), and deleting the accounts and the QOS with one command
// each. Users are removed afterwards (not timed: gpubridge leaves user
// records too).
func (b *bench) peer(ts []tenant.Tenant) (peerTimes, error) {
	var pt peerTimes
	objs := tenant.Project(ts, b.naming)
	var qos, accts, users []string
	var grp []string
	for _, k := range b.quota.Types() {
		grp = append(grp, tenant.GPUTRES(k)+"="+fmt.Sprint(b.quota[k]))
	}
	for _, q := range objs.QOS {
		if !q.Shared {
			qos = append(qos, q.Name)
		}
	}
	var f strings.Builder
	f.WriteString("Cluster - '" + os.Getenv("GPUBRIDGE_CLUSTER") + "'\n")
	f.WriteString("Parent - 'root'\n")
	for _, a := range objs.Accounts {
		accts = append(accts, a.Name)
		fmt.Fprintf(&f, "Account - '%s':Description='%s':Organization='%s'\n", a.Name, a.Description, a.Organization)
	}
	byAcct := map[string][]tenant.Assoc{}
	for _, a := range objs.Assocs {
		byAcct[a.Account] = append(byAcct[a.Account], a)
	}
	for _, a := range objs.Accounts {
		fmt.Fprintf(&f, "Parent - '%s'\n", a.Name)
		for _, as := range byAcct[a.Name] {
			users = append(users, as.User)
			fmt.Fprintf(&f, "User - '%s':DefaultAccount='%s':QOS='%s':DefaultQOS='%s'\n", as.User, a.Name, strings.Join(as.QOS, ","), as.DefaultQOS)
		}
	}
	root := os.Getenv("GPUBRIDGE_TESTBED_ROOT")
	file := b.prefix + "-peer.load"
	if err := os.WriteFile(filepath.Join(root, "tmp", file), []byte(f.String()), 0o644); err != nil {
		return pt, err
	}
	defer os.Remove(filepath.Join(root, "tmp", file))
	var err error
	if pt.addQOS, err = b.exec(fmt.Sprintf("sacctmgr -i add qos name=%s GrpTRES=%s >/dev/null\n", strings.Join(qos, ","), strings.Join(grp, ","))); err != nil {
		return pt, err
	}
	if pt.load, err = b.exec("sacctmgr -i load file=/tmp/" + file + " >/dev/null\n"); err != nil {
		return pt, err
	}
	pt.cold = pt.addQOS + pt.load
	if pt.noop, err = b.exec("sacctmgr -i load file=/tmp/" + file + " >/dev/null\n"); err != nil {
		return pt, err
	}
	if pt.delAcct, err = b.exec("sacctmgr -i delete account name=" + strings.Join(accts, ",") + " >/dev/null\n"); err != nil {
		return pt, err
	}
	if pt.delQOS, err = b.exec("sacctmgr -i delete qos name=" + strings.Join(qos, ",") + " >/dev/null\n"); err != nil {
		return pt, err
	}
	pt.del = pt.delAcct + pt.delQOS
	_, err = b.exec("sacctmgr -i delete user name=" + strings.Join(users, ",") + " >/dev/null\n")
	return pt, err
}

// loop runs the equivalent of gpubridge's objects as one `sacctmgr -i add`
// per object (a QOS, an account and a user per association), on the
// sample, in one shell inside the testbed root, then removes them.
func (b *bench) loop() (time.Duration, int, error) {
	ts := b.tenants(b.prefix+"s", b.sample)
	objs := tenant.Project(ts, b.naming)
	var script strings.Builder
	script.WriteString("set -e\n")
	cmds := 0
	for _, q := range objs.QOS {
		if q.Shared {
			continue
		}
		fmt.Fprintf(&script, "sacctmgr -i add qos %s GrpTRES=%s >/dev/null\n", q.Name, q.GrpTRES)
		cmds++
	}
	for _, a := range objs.Accounts {
		fmt.Fprintf(&script, "sacctmgr -i add account %s parent=root description='%s' organization='%s' >/dev/null\n", a.Name, a.Description, a.Organization)
		cmds++
	}
	for _, a := range objs.Assocs {
		fmt.Fprintf(&script, "sacctmgr -i add user %s account=%s qos=%s defaultqos=%s >/dev/null\n", a.User, a.Account, strings.Join(a.QOS, ","), a.DefaultQOS)
		cmds++
	}
	d, err := b.exec(script.String())
	b.removeByPrefix(b.prefix + "s")
	return d, cmds, err
}

// noopParts times the pieces of a no-op plan once more: the store read,
// each of the three cluster reads (request and decode), and the diff.
func (b *bench) noopParts(st *tenantstore.Store, cl *slurmrest.Client) (string, error) {
	var parts []string
	tm := func(what string, f func() error) error {
		t0 := time.Now()
		err := f()
		parts = append(parts, fmt.Sprintf("%s %.0f ms", what, float64(time.Since(t0).Microseconds())/1000))
		return err
	}
	var ts []tenant.Tenant
	if err := tm("store", func() (err error) { ts, err = st.List(b.ctx); return err }); err != nil {
		return "", err
	}
	if err := tm("GET qos", func() error { _, err := cl.ListQOS(b.ctx); return err }); err != nil {
		return "", err
	}
	if err := tm("GET accounts", func() error { _, err := cl.ListAccounts(b.ctx); return err }); err != nil {
		return "", err
	}
	if err := tm("GET associations", func() error {
		_, err := cl.ListAssociations(b.ctx, slurmrest.AssociationFilter{Clusters: []string{cl.Cluster()}, Own: true})
		return err
	}); err != nil {
		return "", err
	}
	state, err := slurmadapter.New(cl).ReadState(b.ctx)
	if err != nil {
		return "", err
	}
	if err := tm("diff", func() error {
		reconcile.Diff(reconcile.Input{Tenants: ts, Naming: b.naming, State: state, JobsRead: true,
			Scope: func(n string) bool { return strings.HasPrefix(n, b.prefix) }})
		return nil
	}); err != nil {
		return "", err
	}
	return strings.Join(parts, ", "), nil
}

// ensureOnDemand creates the shared on-demand QOS the tenants' users name
// (as gpubridge's apply would) when it is missing, and reports whether it
// did.
func (b *bench) ensureOnDemand() (bool, error) {
	out, err := b.sacct("-n", "-P", "show", "qos", "name="+b.naming.OnDemandQOS, "format=name")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(out) != "" {
		return false, nil
	}
	_, err = b.sacct("-i", "add", "qos", b.naming.OnDemandQOS, "description="+tenant.OnDemandDescription)
	return err == nil, err
}

// removeByPrefix deletes the accounts, QOS and users whose names start with
// prefix, with one sacctmgr command per kind (and per 500 names).
func (b *bench) removeByPrefix(prefix string) {
	for _, kind := range []struct{ entity, field string }{{"account", "account"}, {"qos", "name"}, {"user", "user"}} {
		out, err := b.sacct("-n", "-P", "show", kind.entity, "format="+kind.field)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tenantbench: cleanup:", err)
			continue
		}
		var names []string
		for _, n := range strings.Fields(out) {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		for len(names) > 0 {
			chunk := names[:min(500, len(names))]
			names = names[len(chunk):]
			if _, err := b.sacct("-i", "delete", kind.entity, "name="+strings.Join(chunk, ",")); err != nil {
				fmt.Fprintln(os.Stderr, "tenantbench: cleanup:", err)
			}
		}
	}
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

// scratchStore creates and migrates a scratch database beside gpubridge's.
func scratchStore(ctx context.Context, dsn, name string) (*tenantstore.Store, func(), error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, nil, err
	}
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
		return nil, nil, fmt.Errorf("scratch database %s: %w", name, err)
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, nil, fmt.Errorf("scratch database %s: %w", name, err)
	}
	cfg.DBName = name
	db, err := sqldb.OpenMigrated(ctx, cfg.FormatDSN())
	if err != nil {
		return nil, nil, err
	}
	drop := func() {
		db.Close()
		admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name)
		admin.Close()
	}
	return tenantstore.New(db), drop, nil
}

// timed is a cluster with each batch's wall time recorded (the bench
// prints the applies' steps).
type timed struct {
	reconcile.Cluster
	mu    sync.Mutex
	start time.Time
	steps []string
}

func (t *timed) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start, t.steps = time.Now(), nil
}

func (t *timed) rec(what string, n int, f func() error) error {
	t0 := time.Now()
	err := f()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps = append(t.steps, fmt.Sprintf("%s %d: %.2f-%.2fs", what, n, t0.Sub(t.start).Seconds(), time.Since(t.start).Seconds()))
	return err
}

func (t *timed) PutQOS(ctx context.Context, q []reconcile.QOSWrite) error {
	return t.rec("qos", len(q), func() error { return t.Cluster.PutQOS(ctx, q) })
}
func (t *timed) CreateAccounts(ctx context.Context, a []tenant.Account) error {
	return t.rec("accounts", len(a), func() error { return t.Cluster.CreateAccounts(ctx, a) })
}
func (t *timed) CreateUsers(ctx context.Context, u []tenant.User) error {
	return t.rec("users", len(u), func() error { return t.Cluster.CreateUsers(ctx, u) })
}
func (t *timed) PutAssocs(ctx context.Context, a []tenant.Assoc) error {
	return t.rec("associations", len(a), func() error { return t.Cluster.PutAssocs(ctx, a) })
}
func (t *timed) DeleteAssocs(ctx context.Context, k []reconcile.AssocKey) error {
	return t.rec("delete associations", len(k), func() error { return t.Cluster.DeleteAssocs(ctx, k) })
}
func (t *timed) DeleteAccounts(ctx context.Context, n []string) error {
	return t.rec("delete accounts", len(n), func() error { return t.Cluster.DeleteAccounts(ctx, n) })
}
func (t *timed) DeleteQOS(ctx context.Context, n []string) error {
	return t.rec("delete QOS", len(n), func() error { return t.Cluster.DeleteQOS(ctx, n) })
}

// timedLoading is timed over slurmadapter.Bulk, with its loads timed too.
type timedLoading struct {
	*timed
}

func (t *timedLoading) bulk() *slurmadapter.Bulk { return t.Cluster.(*slurmadapter.Bulk) }

func (t *timedLoading) LoadAssocs(ctx context.Context, a []reconcile.NewAssoc) error {
	return t.rec("load associations and users", len(a), func() error { return t.bulk().LoadAssocs(ctx, a) })
}

func (t *timedLoading) DropsUserAssocs(n int) bool { return t.bulk().DropsUserAssocs(n) }
