package main

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/slurmrest"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
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
	keep                   bool
}

func run() error {
	var o opts
	flag.IntVar(&o.tenants, "tenants", 1000, "tenants to apply")
	flag.IntVar(&o.users, "users", 3, "users per tenant")
	flag.IntVar(&o.sample, "sacctmgr-tenants", 200, "tenants created by the sacctmgr loop (a sample; the total is extrapolated when smaller than -tenants; 0 = all)")
	flag.StringVar(&o.prefix, "prefix", "t3b", "name prefix of every object the benchmark creates")
	flag.BoolVar(&o.keep, "keep", false, "leave the benchmark's tenants in Slurm")
	flag.Parse()
	if o.sample <= 0 || o.sample > o.tenants {
		o.sample = o.tenants
	}
	if msg := tenant.CheckName(o.prefix + "0000"); msg != "" {
		return fmt.Errorf("-prefix: %s", msg)
	}
	ctx := context.Background()
	exe := os.Getenv("GPUBRIDGE_TESTBED_EXEC")
	if exe == "" || os.Getenv("GPUBRIDGE_SLURMREST_URL") == "" || os.Getenv("GPUBRIDGE_DB_DSN") == "" {
		return fmt.Errorf("the testbed is not configured: `make testbed-up` and `source .testbed/env`")
	}
	sacct := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, exe, append([]string{"sacctmgr"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("sacctmgr %s: %w: %s", strings.Join(args[:min(3, len(args))], " "), err, strings.TrimSpace(errb.String()))
		}
		return out.String(), err
	}
	loopPrefix := o.prefix + "s"
	removeByPrefix(sacct, o.prefix) // leftovers of an interrupted run
	defer func() {
		if !o.keep {
			removeByPrefix(sacct, o.prefix)
		}
	}()

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
	ad := slurmadapter.New(cl)
	types, err := ad.GPUTypes(ctx)
	if err != nil {
		return err
	}
	quota := tenant.Quota{}
	for _, t := range types {
		if len(quota) < 2 {
			quota[t] = 2
		}
	}
	var ts []tenant.Tenant
	for i := range o.tenants {
		n := fmt.Sprintf("%s%04d", o.prefix, i)
		t := tenant.Tenant{Name: n, GPUs: quota.Clone(), State: tenant.Active}
		for u := range o.users {
			t.Users = append(t.Users, fmt.Sprintf("%s%c", n, 'a'+u))
		}
		ts = append(ts, t)
	}
	naming := tenant.Naming{QOSPrefix: os.Getenv("GPUBRIDGE_QOS_PREFIX"), OnDemandQOS: "ondemand"}
	if v := os.Getenv("GPUBRIDGE_ONDEMAND_QOS"); v != "" {
		naming.OnDemandQOS = v
	}
	if ps := tenant.ValidateSet(ts, nil, tenant.Rules{GPUTypes: types, Naming: naming}, true); len(ps) > 0 {
		return ps
	}
	if _, err := st.Put(ctx, "tenantbench", ts); err != nil {
		return err
	}
	r := &reconcile.Reconciler{Store: st, Cluster: ad, Naming: naming, Actor: "tenantbench",
		Scope: func(n string) bool { return strings.HasPrefix(n, o.prefix) }}
	apply := func() (time.Duration, slurmrest.Stats, int, error) {
		s0 := cl.Stats()
		t0 := time.Now()
		p, tss, err := r.Plan(ctx)
		if err != nil {
			return 0, slurmrest.Stats{}, 0, err
		}
		if _, err := r.Apply(ctx, p, tss); err != nil {
			return 0, slurmrest.Stats{}, 0, err
		}
		d := time.Since(t0)
		s1 := cl.Stats()
		return d, slurmrest.Stats{Reads: s1.Reads - s0.Reads, Writes: s1.Writes - s0.Writes}, len(p.Changes), err
	}
	objects := fmt.Sprintf("%d QOS, %d accounts, %d users, %d associations", o.tenants, o.tenants, o.tenants*o.users, o.tenants*o.users)
	fmt.Printf("tenants bench: %d tenants x %d users (%s), GPU quota %s\n", o.tenants, o.users, objects, quota)

	// The equivalent sacctmgr loop, one command per object, run inside the
	// testbed root by one shell (so the host's chroot start-up is not
	// counted), first, on the same tables the cold apply will find.
	var script strings.Builder
	script.WriteString("set -e\n")
	grp := []string{}
	for t, n := range quota {
		grp = append(grp, tenant.GPUTRES(t)+"="+fmt.Sprint(n))
	}
	cmds := 0
	for i := range o.sample {
		n := fmt.Sprintf("%s%04d", loopPrefix, i)
		fmt.Fprintf(&script, "sacctmgr -i add qos %s GrpTRES=%s >/dev/null\n", n, strings.Join(grp, ","))
		fmt.Fprintf(&script, "sacctmgr -i add account %s parent=root description=tenant organization=gpubridge >/dev/null\n", n)
		cmds += 2
		for u := range o.users {
			fmt.Fprintf(&script, "sacctmgr -i add user %s%c account=%s qos=%s defaultqos=%s >/dev/null\n", n, 'a'+u, n, n, n)
			cmds++
		}
	}
	root := os.Getenv("GPUBRIDGE_TESTBED_ROOT")
	path := filepath.Join(root, "tmp", o.prefix+"-sacctmgr-loop.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		return err
	}
	defer os.Remove(path)
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, exe, "bash", "/tmp/"+filepath.Base(path))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sacctmgr loop: %w: %s", err, out)
	}
	loop := time.Since(t0)
	perCmd := loop / time.Duration(cmds)
	total := loop
	label := "measured"
	if o.sample < o.tenants {
		total = time.Duration(float64(loop) * float64(o.tenants) / float64(o.sample))
		label = fmt.Sprintf("EXTRAPOLATED linearly from a sample of %d tenants (%d commands); sacctmgr slows as the tables grow, so the real total is higher", o.sample, cmds)
	}
	// Both start from the same tables: the loop's objects go before the apply.
	removeByPrefix(sacct, loopPrefix)
	coldD, coldS, coldN, err := apply()
	if err != nil {
		return fmt.Errorf("cold apply: %w", err)
	}
	fmt.Printf("  cold apply:     %8.2f s   %5d changes   slurmrestd %d reads, %d writes\n", coldD.Seconds(), coldN, coldS.Reads, coldS.Writes)
	noopD, noopS, noopN, err := apply()
	if err != nil {
		return fmt.Errorf("no-op apply: %w", err)
	}
	fmt.Printf("  no-op apply:    %8.2f s   %5d changes   slurmrestd %d reads, %d writes\n", noopD.Seconds(), noopN, noopS.Reads, noopS.Writes)

	fmt.Printf("  sacctmgr loop:  %8.2f s   %5d commands for %d tenants (%.0f ms per command)\n", loop.Seconds(), cmds, o.sample, float64(perCmd.Microseconds())/1000)
	fmt.Printf("                  %8.2f s   for all %d tenants, %s\n", total.Seconds(), o.tenants, label)
	ratio := total.Seconds() / coldD.Seconds()
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	fmt.Printf("  ratio: sacctmgr loop / cold apply = %.1fx (goal >= 10x: %s)\n", ratio, met(ratio >= 10))
	fmt.Printf("  no-op apply: %d reads, %d writes (goal <= 3 reads, 0 writes: %s)\n", noopS.Reads, noopS.Writes, met(noopS.Reads <= 3 && noopS.Writes == 0))
	return nil
}

// removeByPrefix deletes the accounts, QOS and users whose names start with
// prefix, with one sacctmgr command each.
func removeByPrefix(sacct func(...string) (string, error), prefix string) {
	for _, kind := range []struct{ entity, field string }{{"account", "account"}, {"qos", "name"}, {"user", "user"}} {
		out, err := sacct("-n", "-P", "show", kind.entity, "format="+kind.field)
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
			if _, err := sacct("-i", "delete", kind.entity, "name="+strings.Join(chunk, ",")); err != nil {
				fmt.Fprintln(os.Stderr, "tenantbench: cleanup:", err)
			}
		}
	}
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
