package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/gpubridge/gpubridge/bridge/reconcile"
	rmetrics "github.com/gpubridge/gpubridge/bridge/reconcile/metrics"
	"github.com/gpubridge/gpubridge/bridge/reconcile/slurmadapter"
	"github.com/gpubridge/gpubridge/bridge/tenant"
	"github.com/gpubridge/gpubridge/bridge/tenantadmin"
	tenantview "github.com/gpubridge/gpubridge/bridge/tenantadmin/view"
	"github.com/gpubridge/gpubridge/bridge/tenantstore"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/config"
	"github.com/gpubridge/gpubridge/internal/sqldb"
)

// The wiring of the tenant use cases (bridge/tenantadmin) to gpubridge's
// database, slurmrestd, the writer lock and the daemon's metrics, for the
// tenant commands (add/modify/delete/show tenant, add/delete user, plan,
// apply, import, dump) and the daemon's reconcile.

// GuardPath is where apply writes the job_submit guard's data file when
// --guard-file is not given: config tenants.guardFile ($GPUBRIDGE_GUARD_FILE).
// A configuration error is reported by the command's other config reads.
func (e *Env) GuardPath() string {
	c, err := e.Config()
	if err != nil {
		return ""
	}
	return c.Tenants.GuardFile
}

// ReconcileJob is the daemon's periodic reconcile: the use case apply
// calls, without a person (no confirmation, never a mass deletion). Its
// backends connect at each run's first use (and again after a failed
// one), so that the daemon starts while slurmrestd or the database are
// not reachable yet.
type ReconcileJob struct{ Service *tenantadmin.Service }

func (j ReconcileJob) Name() string                  { return "reconcile" }
func (j ReconcileJob) Run(ctx context.Context) error { return j.Service.Reconcile(ctx) }

// ReconcileJob is the daemon's reconcile for configuration c, counting
// refusals on rec.
func (e *Env) ReconcileJob(c config.Config, rec *rmetrics.Recorder) ReconcileJob {
	s := e.TenantsFor(c, "gpubridge serve (reconcile)", e.GuardPath())
	s.Logger = e.Logger().With("component", "reconcile")
	s.Refusals = rec
	return ReconcileJob{s}
}

// Tenants wires the tenant use cases for a command named what (its
// command path: the writer lock's holder); guardPath is where apply
// writes the guard file ("" for none).
func (e *Env) Tenants(what, guardPath string) (*tenantadmin.Service, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	// No logger: a command prints what the service would log (the plan
	// and its refusal), and its error.
	return e.TenantsFor(c, what, guardPath), nil
}

// TenantsFor is Tenants for configuration c.
func (e *Env) TenantsFor(c config.Config, what, guardPath string) *tenantadmin.Service {
	s := &tenantadmin.Service{
		Backends:       tenantBackends{e: e, holder: WriterHolder(what)},
		Naming:         tenant.Naming{QOSPrefix: c.Tenants.QOSPrefix, OnDemandQOS: c.Tenants.OnDemandQOS, ReservationQOSSuffix: c.Bookings.ReservationQOSSuffix, ReservationPrefix: c.Bookings.ReservationPrefix},
		Actor:          Actor(),
		MaxDeleteShare: c.Reconcile.MaxDeleteShare,
	}
	if guardPath != "" {
		s.WriteGuard = func(b []byte, allowEmpty bool) (bool, error) {
			return slurmadapter.GuardFile{Path: guardPath, AllowEmpty: allowEmpty, Logger: e.Logger()}.Write(b)
		}
	}
	return s
}

// tenantBackends connects the tenant use cases to gpubridge's database,
// slurmrestd and the writer lock, each on first use.
type tenantBackends struct {
	e      *Env
	holder string
}

func (b tenantBackends) Store(ctx context.Context) (tenantadmin.Store, error) {
	st, err := b.e.TenantStore(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (b tenantBackends) Cluster(ctx context.Context) (tenantadmin.Cluster, error) {
	return b.e.TenantCluster(ctx)
}

func (b tenantBackends) WriterLock(ctx context.Context) (func(), error) {
	return b.e.WriterLock(ctx, b.holder)
}

// TenantStore opens the tenant store on gpubridge's database.
func (e *Env) TenantStore(ctx context.Context) (*tenantstore.Store, error) {
	db, err := e.DB(ctx)
	if err != nil {
		return nil, err
	}
	return tenantstore.New(db), nil
}

// TenantCluster is the reconcile adapter over the slurmrestd client,
// reading associations from slurmdbd's database as
// reconcile.readAssociations says, with sacctmgr for large batches when
// reconcile.sacctmgr names it.
func (e *Env) TenantCluster(ctx context.Context) (tenantadmin.Cluster, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	ad, err := e.tenantAdapter(ctx, c)
	if err != nil {
		return nil, err
	}
	h, err := e.Cluster()
	if err != nil {
		return nil, err
	}
	r, err := h.Sacctmgr(ctx)
	if err != nil {
		return nil, err
	}
	if r != nil {
		return ad.WithSacctmgr(r, c.Reconcile.SacctmgrFrom, e.Logger()), nil
	}
	return ad, nil
}

func (e *Env) tenantAdapter(ctx context.Context, c config.Config) (*slurmadapter.Adapter, error) {
	cl, err := e.Slurm(ctx)
	if err != nil {
		return nil, err
	}
	ad := slurmadapter.New(cl)
	if c.OfSeveral() {
		ad.TypesOnNodes() // slurmdbd's TRES are every cluster's
	}
	mode := c.Reconcile.ReadAssociations
	if mode == config.ReadAssociationsREST || mode == config.ReadAssociationsAuto && c.SlurmDB.DSN == "" {
		return ad, nil
	}
	db, err := e.SlurmDB(ctx) // the pool: an error only when slurmdb.dsn is unset
	if err != nil {
		return nil, fmt.Errorf("reconcile.readAssociations=%s: %w", mode, err)
	}
	var fallback func(error) bool
	if mode == config.ReadAssociationsAuto {
		fallback = func(err error) bool {
			e.Logger().Warn("associations are read from slurmrestd: the read of slurmdbd's database failed (reconcile.readAssociations=auto)", "error", err)
			return true
		}
	}
	return ad.ReadAssociationsFrom(slurmadapter.AssocDB{DB: db}, fallback), nil
}

// TenantNames reads the tenant names from the tenant store without
// migrating it (a shell completion's <TAB> must never change the
// database).
func (e *Env) TenantNames(ctx context.Context) ([]string, error) {
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	if err := c.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := sqldb.Open(ctx, c.Database.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return tenantstore.New(db).Names(ctx)
}

// ParseAudit reads show audit's options: kind=, name= (or tenant=NAME
// for the tenant kind), limit= (default 50, at most 100000).
func ParseAudit(where map[string]string) (tenantstore.AuditFilter, error) {
	f := tenantstore.AuditFilter{Kind: where["kind"], Name: where["name"], Limit: 50}
	if n := where["tenant"]; n != "" {
		f.Kind, f.Name = tenantstore.AuditKind, n
	}
	if l, ok := where["limit"]; ok {
		n, err := strconv.Atoi(l)
		if err != nil || n <= 0 || n > 100000 {
			return f, Inputf("limit: %q is not a number from 1 to 100000", l)
		}
		f.Limit = n
	}
	return f, nil
}

// Audit reads the audit log rows f keeps, newest first.
func (e *Env) Audit(ctx context.Context, f tenantstore.AuditFilter) (AuditLog, error) {
	st, err := e.TenantStore(ctx)
	if err != nil {
		return nil, err
	}
	return st.Audit(ctx, f)
}

// PlanReport is what plan and apply report (--json prints it): the plan,
// the store changes of a tenants file, the slurmrestd requests and
// sacctmgr commands the use case made, and whether it applied the plan
// and wrote the guard file.
type PlanReport struct {
	*reconcile.Plan
	StoreChanges []tenantadmin.StoreChange `json:"storeChanges,omitempty"`
	Reads        int64                     `json:"reads"`
	Writes       int64                     `json:"writes"`
	// Sacctmgr is how many sacctmgr commands wrote (reconcile.sacctmgr).
	Sacctmgr     int64 `json:"sacctmgrCommands,omitempty"`
	Applied      bool  `json:"applied,omitempty"`
	GuardWritten bool  `json:"guardWritten,omitempty"`
}

// Text is what plan prints: the plan, one line per change, and its
// summary line.
func (r PlanReport) Text() string {
	var b strings.Builder
	tenantview.Plan(&b, r.Plan, r.StoreChanges)
	return b.String()
}

// Pending is how many changes the plan would make (in Slurm, tenants
// dropped from the store, and a file's store changes): plan --detailed-exitcode exits 2 when
// there are any.
func (r PlanReport) Pending() int { return len(r.Changes) + len(r.Removed) + len(r.StoreChanges) }

// Plan computes the plan for the command what, counting the slurmrestd
// requests it makes.
func (e *Env) Plan(ctx context.Context, what string) (PlanReport, error) {
	svc, err := e.Tenants(what, "")
	if err != nil {
		return PlanReport{}, err
	}
	var p *reconcile.Plan
	n, err := e.countRequests(ctx, func() (err error) {
		p, err = svc.Plan(ctx)
		return err
	})
	if err != nil {
		return PlanReport{}, err
	}
	return PlanReport{Plan: p, Reads: n.reads, Writes: n.writes, Sacctmgr: n.sacctmgr}, nil
}

// PlanFile is Plan with a tenants file (path, "-": in) taken into the
// store first, as apply -f would: nothing is written. A file that cannot
// be read or has problems is ErrInput (exit 2).
func (e *Env) PlanFile(ctx context.Context, what, path string, in io.Reader) (PlanReport, error) {
	b, err := ReadTenantsFile(in, path)
	if err != nil {
		return PlanReport{}, err
	}
	svc, err := e.Tenants(what, "")
	if err != nil {
		return PlanReport{}, err
	}
	var pv tenantadmin.Preview
	n, err := e.countRequests(ctx, func() (err error) {
		pv, err = svc.PlanFile(ctx, b)
		return err
	})
	if err != nil {
		return PlanReport{}, tenantErr(err)
	}
	return PlanReport{Plan: pv.Plan, StoreChanges: pv.StoreChanges, Reads: n.reads, Writes: n.writes, Sacctmgr: n.sacctmgr}, nil
}

// ApplyOptions are apply's flags and streams.
type ApplyOptions struct {
	What string // the command's path (the writer lock's holder)
	// File is -f: a tenants file to take first ("" none, "-" In).
	File string
	In   io.Reader
	// GuardPath is --guard-file ("": GuardPath, config tenants.guardFile).
	GuardPath       string
	AllowMassDelete bool
	// Show, when set, is where the plan is shown before it is applied (nil
	// with --json).
	Show io.Writer
	// Confirm (nil: -i) is asked after the plan was shown.
	Confirm func(string) error
}

// ApplyReport is what apply reports: PlanReport (--json prints it), and
// where the guard file went.
type ApplyReport struct {
	PlanReport
	GuardPath string `json:"-"`
}

// Text is what apply prints when it is done (after the plan it showed).
func (r ApplyReport) Text() string {
	return tenantview.Applied(r.GuardPath, r.GuardWritten, len(r.Changes), tenantview.Requests{Reads: r.Reads, Writes: r.Writes, Sacctmgr: r.Sacctmgr})
}

// ApplyTenants runs apply as o says.
func (e *Env) ApplyTenants(ctx context.Context, o ApplyOptions) (ApplyReport, error) {
	if o.GuardPath == "" {
		o.GuardPath = e.GuardPath()
	}
	req := tenantadmin.ApplyRequest{AllowMassDelete: o.AllowMassDelete}
	if o.File != "" {
		b, err := ReadTenantsFile(o.In, o.File)
		if err != nil {
			return ApplyReport{}, err
		}
		req.File = b
	}
	if o.Show != nil {
		req.Show = func(pv tenantadmin.Preview) { tenantview.Plan(o.Show, pv.Plan, pv.StoreChanges) }
	}
	if o.Confirm != nil {
		req.Confirm = func(tenantadmin.Preview) error { return o.Confirm("") }
	}
	r, err := e.Apply(ctx, o.What, o.GuardPath, req)
	if err != nil {
		return ApplyReport{}, tenantErr(err)
	}
	return ApplyReport{PlanReport: r, GuardPath: o.GuardPath}, nil
}

// Apply runs apply for the command what (writing the guard file to
// guardPath, "" for none), counting the slurmrestd requests it makes.
func (e *Env) Apply(ctx context.Context, what, guardPath string, req tenantadmin.ApplyRequest) (PlanReport, error) {
	svc, err := e.Tenants(what, guardPath)
	if err != nil {
		return PlanReport{}, err
	}
	var res tenantadmin.ApplyResult
	n, err := e.countRequests(ctx, func() (err error) {
		res, err = svc.Apply(ctx, req)
		return err
	})
	if err != nil {
		return PlanReport{}, err
	}
	return PlanReport{Plan: res.Plan, StoreChanges: res.StoreChanges, Reads: n.reads, Writes: n.writes, Sacctmgr: n.sacctmgr, Applied: res.Applied, GuardWritten: res.GuardWritten}, nil
}

// requests counts what a use case sent Slurm.
type requests struct{ reads, writes, sacctmgr int64 }

// countRequests runs fn and returns the slurmrestd requests and sacctmgr
// commands it made.
func (e *Env) countRequests(ctx context.Context, fn func() error) (requests, error) {
	// Negotiate first (an error is left for the use case to meet), so
	// that the counts do not include the version negotiation.
	if cl, err := e.Slurm(ctx); err == nil {
		_ = cl.Negotiate(ctx)
	}
	r0, w0 := e.Requests()
	s0 := e.SacctmgrCommands()
	if err := fn(); err != nil {
		return requests{}, err
	}
	r1, w1 := e.Requests()
	return requests{reads: r1 - r0, writes: w1 - w0, sacctmgr: e.SacctmgrCommands() - s0}, nil
}

// ReadTenantsFile reads a tenants file ("-": in), at most
// tenant.MaxFileBytes and one byte more, so that a larger one is refused
// without being read whole.
func ReadTenantsFile(in io.Reader, path string) ([]byte, error) {
	r := in
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, Inputf("tenants file: %w", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, tenant.MaxFileBytes+1))
	if err != nil {
		return nil, Inputf("tenants file: %w", err)
	}
	return b, nil
}
