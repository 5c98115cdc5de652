package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/robfig/cron/v3"
)

// DefaultPath is where the daemon and the CLI look for their file when no
// --config flag and no GPUBRIDGE_CONFIG variable name another.
const DefaultPath = "/etc/gpubridge/gpubridge.yaml"

// CurrentVersion is the only file format version this build reads.
const CurrentVersion = 1

// Config is the whole of gpubridge's configuration.
type Config struct {
	Version int `json:"version"`
	// Cluster is Slurm's ClusterName. Empty takes the one slurmrestd
	// serves; when set and different, commands refuse to write.
	Cluster   string    `json:"cluster"`
	SlurmRest SlurmRest `json:"slurmrest"`
	Database  Database  `json:"database"`
	SlurmDB   SlurmDB   `json:"slurmdb"`
	Tenants   Tenants   `json:"tenants"`
	Server    Server    `json:"server"`
	Schedules Schedules `json:"schedules"`
	Bookings  Bookings  `json:"bookings"`
	// Chargeback names the site that bills, in the FOCUS export.
	Chargeback Chargeback `json:"chargeback"`
	Reconcile  Reconcile  `json:"reconcile"`
	Health     Health     `json:"health"`
	// API is the tenant API and status page (cmd/gpubridge/api) on server.listen.
	API API `json:"api"`
	// Ingest tunes the daemon's ingest job (schedules.ingest runs it).
	Ingest Ingest `json:"ingest"`
	Portal Portal `json:"portal"` // config/portal.go
	// Clusters lists the clusters of the site's slurmdbd that gpubridge
	// serves (config/clusters.go); empty serves the one cluster of
	// cluster: and slurmrest:.
	Clusters []Cluster `json:"clusters,omitempty"`

	// ofSeveral marks a view of one of several clusters (Views).
	ofSeveral bool
}

// API tunes the tenant API and status page (cmd/gpubridge/api).
type API struct {
	// RefreshInterval is how often the API's snapshot (tenants, one bulk
	// jobs read, the burst plan, bookings in force, usage) is taken: the
	// age of what the tenant routes and the per-tenant metrics show.
	RefreshInterval Duration `json:"refreshInterval"`
	// AuthFailuresPerMinute and AuthFailureBurst bound failed
	// authentications per source address; past them its requests get 429
	// until the bucket refills.
	AuthFailuresPerMinute int `json:"authFailuresPerMinute"`
	AuthFailureBurst      int `json:"authFailureBurst"`
	// TokenRequestsPerSecond and TokenRequestBurst bound one token's
	// requests, AddressRequestsPerSecond and AddressRequestBurst one
	// source address's (every token behind it, and none); past them 429.
	TokenRequestsPerSecond   int `json:"tokenRequestsPerSecond"`
	TokenRequestBurst        int `json:"tokenRequestBurst"`
	AddressRequestsPerSecond int `json:"addressRequestsPerSecond"`
	AddressRequestBurst      int `json:"addressRequestBurst"`
}

// Ingest says how often the daemon's ingest job goes beyond its window
// (accounting/ingest.Ingester.Scheduled).
type Ingest struct {
	// ChangesEvery is how often it re-reads the job rows slurmdbd changed
	// since the previous pass (mod_time; one full scan of the job table).
	// 0 turns the passes off.
	ChangesEvery Duration `json:"changesEvery"`
	// VerifyEvery is how often it re-reads the open periods in full and
	// compares them with the ledger. 0 turns the verification off.
	VerifyEvery Duration `json:"verifyEvery"`
}

// Reconcile bounds what one writer may do (bridge/reconcile.DeletePolicy,
// internal/writerlock).
type Reconcile struct {
	// MaxDeleteShare is the largest share (0 to 1) of the tenants, or of
	// their user associations, that one plan may delete; a plan deleting
	// more, or every tenant, or objects the store has no record of, is
	// refused unless a person runs apply --allow-mass-delete.
	MaxDeleteShare float64 `json:"maxDeleteShare"`
	// WriterLockTimeout bounds how long a writer (apply, modify, delete,
	// burst run-once, the daemon's reconcile and burst jobs) waits for the
	// cluster's one-writer lock.
	WriterLockTimeout Duration `json:"writerLockTimeout"`
	// ReadAssociations is where plans read the cluster's associations:
	// "database" (slurmdbd's database through slurmdb.dsn: milliseconds),
	// "rest" (GET associations/: over a second at 4,000 associations), or
	// "auto" (the database when slurmdb.dsn is set, slurmrestd when it is
	// not or the database read fails, with a warning). See docs/scale.md.
	ReadAssociations string `json:"readAssociations"`
	// Sacctmgr is the command that runs sacctmgr for this cluster, split
	// on spaces ("sacctmgr", "ssh slurm-admin sacctmgr"; its user must be
	// a Slurm operator). Empty, the default, writes everything through
	// slurmrestd. When set, batches of SacctmgrFrom objects or more of
	// new user associations with their new users, and QOS and account
	// deletes go through sacctmgr (load files, name lists),
	// several times faster at hundreds of tenants (docs/scale.md); a
	// batch sacctmgr fails on is written through slurmrestd instead.
	// GPUBRIDGE_SACCTMGR sets it.
	Sacctmgr string `json:"sacctmgr"`
	// SacctmgrFrom is the smallest batch sent to sacctmgr; 0 means 20.
	SacctmgrFrom int `json:"sacctmgrFrom"`
}

// Where plans read associations (Reconcile.ReadAssociations).
const (
	ReadAssociationsAuto     = "auto"
	ReadAssociationsDatabase = "database"
	ReadAssociationsREST     = "rest"
)

// Chargeback names who provides, publishes and invoices the GPU time in
// the FOCUS export (ProviderName, PublisherName, InvoiceIssuerName). An
// empty ProviderName is the cluster's name; an empty PublisherName or
// InvoiceIssuerName is the ProviderName.
type Chargeback struct {
	ProviderName      string `json:"providerName"`
	PublisherName     string `json:"publisherName"`
	InvoiceIssuerName string `json:"invoiceIssuerName"`
}

// MaxNameLen bounds the chargeback names (bytes): the FOCUS metadata
// declares at most 256 for them.
const MaxNameLen = 255

// SlurmRest says how to reach slurmrestd and authenticate to it.
type SlurmRest struct {
	URL string `json:"url"`
	// JWTKeyFile is Slurm's HS256 key (AuthAltParameters=jwt_key=...);
	// gpubridge mints short-lived tokens from it.
	JWTKeyFile string `json:"jwtKeyFile"`
	// Token is a ready JWT, used when no key file is given. Never logged.
	Token string `json:"token"`
	// TokenFile holds a ready JWT (surrounding whitespace ignored), for
	// when gpubridge may not read the key. It is read when the client is
	// built and again at every reload (SIGHUP), so a rotated token takes
	// effect without a restart. Exclusive with jwtKeyFile and token.
	TokenFile string `json:"tokenFile"`
	// User is the Slurm user tokens are minted for (the `sun` claim).
	User string `json:"user"`
	// APIVersion pins the data_parser version (v0.0.44 or v0.0.43);
	// empty means negotiate from /openapi/v3.
	APIVersion string   `json:"apiVersion"`
	Timeout    Duration `json:"timeout"`
	// MaxBodyBytes bounds one slurmrestd answer (memory stays bounded
	// whatever the server sends); default 256 MiB.
	MaxBodyBytes int64 `json:"maxBodyBytes"`
}

// Database is gpubridge's own MariaDB database (tenants, bookings, ledger).
type Database struct {
	DSN string `json:"dsn"`
	// Init lets `gpubridge serve` create gpubridge's schema in an empty
	// database (like `serve --init`). Default false: serve refuses an
	// empty database, so that a wrong DSN never yields a fresh, empty
	// store whose reconcile would remove every tenant from Slurm.
	Init bool `json:"init"`
}

// SlurmDB is slurmdbd's database, read through a read-only user.
type SlurmDB struct {
	DSN string `json:"dsn"`
}

// Tenants holds the naming of the Slurm objects gpubridge owns.
type Tenants struct {
	// QOSPrefix is prepended to a tenant's name to form its QOS name.
	QOSPrefix         string `json:"qosPrefix"`
	PoolPartition     string `json:"poolPartition"`
	OnDemandPartition string `json:"onDemandPartition"`
	OnDemandQOS       string `json:"onDemandQOS"`
	// GuardFile is where apply and the daemon's reconcile write the
	// job_submit.lua guard's tenant table (contrib/job_submit.lua reads it
	// on the slurmctld host; DefaultGuardFile is the script's default and
	// the example config's); empty means the table is not written.
	GuardFile string `json:"guardFile"`
}

// DefaultGuardFile is where contrib/job_submit.lua looks for the tenant
// table unless slurmctld's environment sets GPUBRIDGE_GUARD_FILE: in
// gpubridge's state directory (contrib/gpubridge.service's
// StateDirectory=gpubridge), writable by gpubridge only, readable by
// SlurmUser.
const DefaultGuardFile = "/var/lib/gpubridge/guard/tenants.table"

// Server is the daemon's HTTP listeners: Listen serves the tenant API,
// the status page, /healthz and /readyz; MetricsListen serves /metrics
// (every tenant's quota, use and spend: never on the API's listener),
// /healthz and /readyz.
type Server struct {
	Listen string `json:"listen"`
	// MetricsListen is /metrics' own address (default 127.0.0.1:9181,
	// loopback); off loopback it needs TLS (the same certificate) or
	// allowPlainHTTP, like listen.
	MetricsListen string `json:"metricsListen"`
	// TLSCertFile and TLSKeyFile (PEM) make the server speak HTTPS; both
	// or neither. Re-read at every reload.
	TLSCertFile string `json:"tlsCertFile"`
	TLSKeyFile  string `json:"tlsKeyFile"`
	// AllowPlainHTTP lets serve listen without TLS on an address other
	// than loopback (with a warning); without it that is refused.
	AllowPlainHTTP bool `json:"allowPlainHTTP"`
	// Timeouts of each connection: reading a whole request, reading its
	// headers, writing the response, and keeping an idle keep-alive
	// connection. ShutdownTimeout bounds a graceful stop.
	ReadTimeout       Duration `json:"readTimeout"`
	ReadHeaderTimeout Duration `json:"readHeaderTimeout"`
	WriteTimeout      Duration `json:"writeTimeout"`
	IdleTimeout       Duration `json:"idleTimeout"`
	ShutdownTimeout   Duration `json:"shutdownTimeout"`
	// MaxHeaderBytes and MaxBodyBytes limit the size of a request.
	MaxHeaderBytes int   `json:"maxHeaderBytes"`
	MaxBodyBytes   int64 `json:"maxBodyBytes"`
}

// Schedules are robfig/cron/v3 specs for the daemon's periodic jobs.
type Schedules struct {
	Reconcile   string `json:"reconcile"`
	Burst       string `json:"burst"`
	Ingest      string `json:"ingest"`
	ClosePeriod string `json:"closePeriod"`
	// Bookings projects bookings onto Slurm reservations (bridge/reserve).
	Bookings string `json:"bookings"`
	// HealthCredits writes node health credits (health.credits).
	HealthCredits string `json:"healthCredits"`
	// BookingCharges writes the bookings' charges to the ledger
	// (accounting/billing.BookingCharger).
	BookingCharges string `json:"bookingCharges"`
	// Health finishes the health check runs whose jobs ended (results,
	// drains, resumes) between their schedules' cycles (bridge/health);
	// the schedules run on health.acceptance.spec and
	// health.schedules[].spec. Only when health.nodes lists nodes.
	Health string `json:"health"`
}

// Bookings are the settings of tenant bookings (bridge/reserve).
type Bookings struct {
	// ReservationPrefix names gpubridge's Slurm reservations: the prefix
	// and the booking id (gpubridge-42). Reservations under it whose rest is
	// a booking id are gpubridge's: repaired, and removed when orphaned.
	ReservationPrefix string `json:"reservationPrefix"`
	// ReservationQOSSuffix names each tenant's reservation QOS: the
	// tenant QOS's name and the suffix (acme-resv). Jobs inside the
	// tenant's bookings run under it, not counted against its quota.
	ReservationQOSSuffix string `json:"reservationQOSSuffix"`
	// LeadTime is how long before its start a booking's reservation is
	// created in Slurm; at least the pool partition's longest job time
	// limit, so that the scheduler keeps the GPUs free of jobs that would
	// run into the window.
	LeadTime Span `json:"leadTime"`
	// UnbookablePercent of each GPU type's pool (rounded up) is kept for
	// quota and burst work and never booked.
	UnbookablePercent int `json:"unbookablePercent"`
	// NodeClasses name sets of pool nodes that may be booked whole
	// (nodes=CLASS:N).
	NodeClasses map[string][]string `json:"nodeClasses,omitempty"`
	// DefaultPolicy limits tenants whose spec carries no booking policy.
	DefaultPolicy BookingPolicy `json:"defaultPolicy"`
	// Cancellation is what a cancelled booking is charged.
	Cancellation Cancellation `json:"cancellation"`
}

// Cancellation is the bookings' cancellation policy (meter.Cancellation).
type Cancellation struct {
	// FreeBefore is the notice that makes a cancellation free: a booking
	// cancelled at least this long before its start costs nothing; one
	// cancelled later is charged from its start to FreeBefore after the
	// cancel time (at most to its end). 0: free before the start, charged
	// up to the cancel time after it.
	FreeBefore Span `json:"freeBefore"`
}

// BookingPolicy limits what a tenant may book (bridge/reserve.Policy).
type BookingPolicy struct {
	// MaxGPUs per GPU type or MIG profile: the most a tenant may have booked
	// at once (0 forbids the type; absent: the pool is the limit).
	MaxGPUs map[string]int `json:"maxGPUs,omitempty"`
	// MaxWindow is the longest booking (0: no limit).
	MaxWindow Span `json:"maxWindow"`
	// MinLead is how far ahead a booking must start.
	MinLead Span `json:"minLead"`
	// MaxHorizon is how far ahead a booking may end (0: no limit).
	MaxHorizon Span `json:"maxHorizon"`
}

// Span is a duration written as a Go duration ("36h", "90m") or in whole
// days or weeks ("14d", "2w").
type Span struct{ time.Duration }

// UnmarshalJSON accepts "14d", "2w", "36h", "1h30m" or "0".
func (d *Span) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(strings.Trim(string(b), `"`))
	if s == "" || s == "null" || s == "0" {
		d.Duration = 0
		return nil
	}
	for unit, n := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if v, ok := strings.CutSuffix(s, unit); ok {
			k, err := strconv.Atoi(v)
			if err != nil || k < 0 || k > 100*365 {
				return fmt.Errorf("duration %q: want whole days or weeks such as 14d or 2w, or a duration such as 36h", s)
			}
			d.Duration = time.Duration(k) * n
			return nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: want a value like 14d, 2w, 36h or 90m", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes whole days as "14d", anything else as a Go duration.
func (d Span) MarshalJSON() ([]byte, error) {
	if d.Duration > 0 && d.Duration%(24*time.Hour) == 0 {
		return []byte(`"` + strconv.FormatInt(int64(d.Duration/(24*time.Hour)), 10) + `d"`), nil
	}
	return []byte(`"` + d.Duration.String() + `"`), nil
}

// Duration is a time.Duration that reads and writes as "10s" in YAML/JSON.
type Duration struct{ time.Duration }

// UnmarshalJSON accepts a Go duration string such as "10s" or "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		d.Duration = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: want a value like 10s or 2m", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Default returns the configuration used where nothing else is said.
func Default() Config {
	return Config{
		Version: CurrentVersion,
		SlurmRest: SlurmRest{
			URL:          "http://127.0.0.1:6820",
			User:         "root",
			Timeout:      Duration{10 * time.Second},
			MaxBodyBytes: 256 << 20,
		},
		Tenants: Tenants{
			PoolPartition:     "pool",
			OnDemandPartition: "ondemand",
			OnDemandQOS:       "ondemand",
		},
		Server: Server{
			Listen:            "127.0.0.1:9180",
			MetricsListen:     "127.0.0.1:9181",
			ReadTimeout:       Duration{10 * time.Second},
			ReadHeaderTimeout: Duration{5 * time.Second},
			WriteTimeout:      Duration{30 * time.Second},
			IdleTimeout:       Duration{2 * time.Minute},
			ShutdownTimeout:   Duration{20 * time.Second},
			MaxHeaderBytes:    64 << 10,
			MaxBodyBytes:      1 << 20,
		},
		Schedules: Schedules{
			Reconcile:   "@every 5m",
			Burst:       "@every 10s",
			Ingest:      "@every 5m",
			ClosePeriod: "0 3 2 * *", // 03:00 UTC on the 2nd: one day of grace for late records
			Bookings:    "@every 1m",
			// After the ingest: a run is credited once its end is ingested.
			HealthCredits: "@every 15m",
			// BookingCharges: often enough that show usage and the
			// exports follow a change within minutes.
			BookingCharges: "@every 5m",
			Health:         "@every 1m",
		},
		Bookings: Bookings{
			ReservationPrefix:    "gpubridge-",
			ReservationQOSSuffix: "-resv",
			LeadTime:             Span{24 * time.Hour},
			Cancellation:         Cancellation{FreeBefore: Span{24 * time.Hour}},
			// Bounded by default (issue 25): bookings end within 90 days and
			// last at most 14; maxGPUs unset means each tenant's quota.
			DefaultPolicy: BookingPolicy{MaxHorizon: Span{90 * 24 * time.Hour}, MaxWindow: Span{14 * 24 * time.Hour}},
		},
		Reconcile: Reconcile{MaxDeleteShare: 0.10, WriterLockTimeout: Duration{30 * time.Second}, ReadAssociations: ReadAssociationsAuto},
		Health:    defaultHealth(),
		API: API{RefreshInterval: Duration{15 * time.Second}, AuthFailuresPerMinute: 10, AuthFailureBurst: 20,
			TokenRequestsPerSecond: 20, TokenRequestBurst: 40, AddressRequestsPerSecond: 100, AddressRequestBurst: 200},
		Ingest: Ingest{ChangesEvery: Duration{time.Hour}, VerifyEvery: Duration{24 * time.Hour}},
	}
}

// Load reads the file at path over the defaults, then applies the
// environment. A missing file is not an error when optional is true (the
// default path may not exist on a workstation that uses only the environment).
// Every key that is not one of its place's and every value of the wrong
// type is reported at once (a ValidationError), with its field path.
func Load(path string, optional bool, env func(string) (string, bool)) (Config, error) {
	c := Default()
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := decode(b, &c); err != nil {
			c.ApplyEnv(orLookup(env))
			return c, fmt.Errorf("config %s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist) && optional:
	default:
		return c, fmt.Errorf("config: %w", err)
	}
	c.ApplyEnv(orLookup(env))
	return c, nil
}

func orLookup(env func(string) (string, bool)) func(string) (string, bool) {
	if env == nil {
		return os.LookupEnv
	}
	return env
}

// Read is Load and Validate: it reports the file's problems and the
// configuration's together, so that an admin fixes a file in one pass.
func Read(path string, optional bool, env func(string) (string, bool)) (Config, error) {
	c, err := Load(path, optional, env)
	var fileErrs ValidationError
	if err != nil && !errors.As(err, &fileErrs) {
		return c, err // unreadable, or not YAML
	}
	verr := c.Validate()
	if err == nil {
		return c, verr
	}
	var more ValidationError
	if errors.As(verr, &more) {
		seen := map[string]bool{}
		for _, e := range fileErrs {
			seen[e.Field] = true
		}
		for _, e := range more {
			if !seen[e.Field] { // a field the file set wrong is reported once
				fileErrs = append(fileErrs, e)
			}
		}
		slices.SortStableFunc(fileErrs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	}
	return c, fmt.Errorf("config %s: %w", path, fileErrs)
}

// envVars maps each GPUBRIDGE_* variable to the field it sets.
func (c *Config) envVars() map[string]*string {
	return map[string]*string{
		"GPUBRIDGE_CLUSTER":              &c.Cluster,
		"GPUBRIDGE_SLURMREST_URL":        &c.SlurmRest.URL,
		"GPUBRIDGE_SLURMREST_JWT_KEY":    &c.SlurmRest.JWTKeyFile,
		"GPUBRIDGE_SLURMREST_TOKEN":      &c.SlurmRest.Token,
		"GPUBRIDGE_SLURMREST_TOKEN_FILE": &c.SlurmRest.TokenFile,
		"GPUBRIDGE_SLURMREST_USER":       &c.SlurmRest.User,
		"GPUBRIDGE_SLURMREST_API":        &c.SlurmRest.APIVersion,
		"GPUBRIDGE_DB_DSN":               &c.Database.DSN,
		"GPUBRIDGE_SLURMDB_DSN":          &c.SlurmDB.DSN,
		"GPUBRIDGE_SACCTMGR":             &c.Reconcile.Sacctmgr,
		"GPUBRIDGE_LISTEN":               &c.Server.Listen,
		"GPUBRIDGE_METRICS_LISTEN":       &c.Server.MetricsListen,
		"GPUBRIDGE_TLS_CERT_FILE":        &c.Server.TLSCertFile,
		"GPUBRIDGE_TLS_KEY_FILE":         &c.Server.TLSKeyFile,
		"GPUBRIDGE_PORTAL_JWKS_FILE":     &c.Portal.JWKSFile,
		"GPUBRIDGE_QOS_PREFIX":           &c.Tenants.QOSPrefix,
		"GPUBRIDGE_POOL_PARTITION":       &c.Tenants.PoolPartition,
		"GPUBRIDGE_ONDEMAND_PARTITION":   &c.Tenants.OnDemandPartition,
		"GPUBRIDGE_ONDEMAND_QOS":         &c.Tenants.OnDemandQOS,
		"GPUBRIDGE_GUARD_FILE":           &c.Tenants.GuardFile,
		"GPUBRIDGE_BOOKINGS_PREFIX":      &c.Bookings.ReservationPrefix,
		"GPUBRIDGE_PROVIDER_NAME":        &c.Chargeback.ProviderName,
		"GPUBRIDGE_PUBLISHER_NAME":       &c.Chargeback.PublisherName,
		"GPUBRIDGE_INVOICE_ISSUER":       &c.Chargeback.InvoiceIssuerName,
	}
}

// EnvNames lists the environment variables Load honours, sorted.
func EnvNames() []string {
	var c Config
	var names []string
	for k := range c.envVars() {
		names = append(names, k)
	}
	slices.Sort(names)
	return append(names, "GPUBRIDGE_SLURMREST_TIMEOUT", "GPUBRIDGE_CONFIG")
}

// ApplyEnv overrides fields from GPUBRIDGE_* variables that are set.
func (c *Config) ApplyEnv(env func(string) (string, bool)) {
	for k, p := range c.envVars() {
		if v, ok := env(k); ok {
			*p = v
		}
	}
	if v, ok := env("GPUBRIDGE_SLURMREST_TIMEOUT"); ok {
		if d, err := time.ParseDuration(v); err == nil {
			c.SlurmRest.Timeout.Duration = d
		} else {
			c.SlurmRest.Timeout.Duration = -1 // reported by Validate
		}
	}
}

// FieldError is one problem with one field.
type FieldError struct {
	Field string
	Msg   string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// ValidationError carries every problem Validate found.
type ValidationError []FieldError

func (v ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problem(s)):", len(v))
	for _, e := range v {
		b.WriteString("\n  - ")
		b.WriteString(e.Error())
	}
	return b.String()
}

// Validate reports every problem at once; nil means the config is usable.
func (c Config) Validate() error {
	var errs ValidationError
	add := func(field, format string, a ...any) {
		errs = append(errs, FieldError{field, fmt.Sprintf(format, a...)})
	}
	if c.Version != CurrentVersion {
		add("version", "is %d; this gpubridge reads version %d (set version: %d)", c.Version, CurrentVersion, CurrentVersion)
	}
	if c.Cluster != "" && !validName(c.Cluster) {
		add("cluster", "%q is not a Slurm cluster name (letters, digits, '-' and '_'; set GPUBRIDGE_CLUSTER)", c.Cluster)
	}
	c.validateClusters(add) // slurmrest:, or each cluster's
	c.Server.validate(add)
	c.Schedules.validate(add)
	c.Tenants.validate(add)
	c.validateReconcile(add)
	c.Ingest.validate(add)
	c.Bookings.validate(add)
	c.API.validate(add)
	c.Portal.validate(add)
	c.Chargeback.validate(add)
	c.validateHealth(add)
	c.validateHealthCredits(add)
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// validate checks how slurmrestd is reached: its URL, API version,
// timeout, answer size, user and the one credential.
func (s SlurmRest) validate(add func(field, format string, a ...any)) {
	if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("slurmrest.url", "%q is not an http(s) URL such as http://127.0.0.1:6820", s.URL)
	}
	if s.APIVersion != "" && s.APIVersion != "v0.0.44" && s.APIVersion != "v0.0.43" {
		add("slurmrest.apiVersion", "%q is not supported; use v0.0.44, v0.0.43 or leave empty to negotiate", s.APIVersion)
	}
	if s.Timeout.Duration <= 0 {
		add("slurmrest.timeout", "must be a positive duration such as 10s")
	}
	if s.MaxBodyBytes < 64<<10 {
		add("slurmrest.maxBodyBytes", "is %d; must be at least 65536 (64 KiB; the default is 268435456, 256 MiB)", s.MaxBodyBytes)
	}
	if s.User == "" {
		add("slurmrest.user", "must name the Slurm user tokens are minted for (usually root or slurm)")
	}
	if s.TokenFile != "" && (s.JWTKeyFile != "" || s.Token != "") {
		add("slurmrest.tokenFile", "is set together with jwtKeyFile or token; set only one of the three (GPUBRIDGE_SLURMREST_JWT_KEY, GPUBRIDGE_SLURMREST_TOKEN, GPUBRIDGE_SLURMREST_TOKEN_FILE)")
	}
}

// validate checks that every schedule set is a cron spec (empty is
// disabled).
func (s Schedules) validate(add func(field, format string, a ...any)) {
	for field, spec := range map[string]string{
		"schedules.reconcile": s.Reconcile, "schedules.burst": s.Burst,
		"schedules.ingest": s.Ingest, "schedules.closePeriod": s.ClosePeriod,
		"schedules.bookings": s.Bookings, "schedules.healthCredits": s.HealthCredits,
		"schedules.bookingCharges": s.BookingCharges,
		"schedules.health":         s.Health,
	} {
		if spec == "" {
			continue // disabled
		}
		if _, err := cron.ParseStandard(spec); err != nil {
			add(field, "%q is not a cron spec (%v); use e.g. \"@every 5m\" or \"0 3 2 * *\"", spec, err)
		}
	}
}

// validate checks the Slurm names the tenants are made with and the guard
// file's path.
func (t Tenants) validate(add func(field, format string, a ...any)) {
	for field, v := range map[string]string{
		"tenants.poolPartition": t.PoolPartition, "tenants.onDemandPartition": t.OnDemandPartition,
		"tenants.onDemandQOS": t.OnDemandQOS,
	} {
		if !validName(v) {
			add(field, "%q is not a valid Slurm name (letters, digits, '-' and '_')", v)
		}
	}
	if t.QOSPrefix != "" && !validName(t.QOSPrefix) {
		add("tenants.qosPrefix", "%q may hold only letters, digits, '-' and '_'", t.QOSPrefix)
	}
	if g := t.GuardFile; g != "" && (!filepath.IsAbs(g) || filepath.Clean(g) != g) {
		add("tenants.guardFile", "%q is not a clean absolute file path; use e.g. %s (the path contrib/job_submit.lua reads by default)", g, DefaultGuardFile)
	}
}

// validateReconcile checks the bounds of one writer: the delete share,
// the writer lock's wait, sacctmgr, and where associations are read
// (database needs slurmdb.dsn).
func (c Config) validateReconcile(add func(field, format string, a ...any)) {
	r := c.Reconcile
	if s := r.MaxDeleteShare; !(s >= 0 && s <= 1) {
		add("reconcile.maxDeleteShare", "%v is not a share from 0 to 1 (0.10 means at most 10 %% of the tenants per run)", s)
	}
	if r.WriterLockTimeout.Duration <= 0 {
		add("reconcile.writerLockTimeout", "must be a positive duration such as 30s")
	}
	if r.SacctmgrFrom < 0 {
		add("reconcile.sacctmgrFrom", "is %d; it is the smallest batch sent to sacctmgr: 1 or more, or 0 for the default 20", r.SacctmgrFrom)
	}
	if strings.IndexFunc(r.Sacctmgr, unicode.IsControl) >= 0 {
		add("reconcile.sacctmgr", "has a control character; give the command line that runs sacctmgr, e.g. \"sacctmgr\"")
	}
	switch r.ReadAssociations {
	case ReadAssociationsAuto, ReadAssociationsREST:
	case ReadAssociationsDatabase:
		if c.SlurmDB.DSN == "" {
			add("reconcile.readAssociations", "%q needs slurmdb.dsn (GPUBRIDGE_SLURMDB_DSN), a read-only DSN for slurmdbd's database; or use \"auto\" or \"rest\"", r.ReadAssociations)
		}
	default:
		add("reconcile.readAssociations", "%q is not one of auto, database, rest", r.ReadAssociations)
	}
}

// validate checks the ingest job's pass intervals: 0 (off) or at least a
// minute.
func (i Ingest) validate(add func(field, format string, a ...any)) {
	for field, d := range map[string]time.Duration{"ingest.changesEvery": i.ChangesEvery.Duration, "ingest.verifyEvery": i.VerifyEvery.Duration} {
		if d != 0 && d < time.Minute {
			add(field, "is %s; must be 0 (off) or at least 1m, such as 1h", d)
		}
	}
}

// validate checks the names the FOCUS export prints.
func (ch Chargeback) validate(add func(field, format string, a ...any)) {
	for field, v := range map[string]string{
		"chargeback.providerName": ch.ProviderName, "chargeback.publisherName": ch.PublisherName,
		"chargeback.invoiceIssuerName": ch.InvoiceIssuerName,
	} {
		if msg := checkDisplayName(v); msg != "" {
			add(field, "%q %s", v, msg)
		}
	}
}

// RequireSlurmRest checks what a command that talks to slurmrestd needs beyond Validate.
func (c Config) RequireSlurmRest() error {
	var errs ValidationError
	for i, v := range c.Views() {
		if v.SlurmRest.JWTKeyFile == "" && v.SlurmRest.Token == "" && v.SlurmRest.TokenFile == "" {
			field := "slurmrest.jwtKeyFile"
			if c.Several() {
				field = fmt.Sprintf("clusters[%d].slurmrest.jwtKeyFile", i)
			}
			errs = append(errs, FieldError{field, "no JWT key file or token is configured; set GPUBRIDGE_SLURMREST_JWT_KEY (or `source .testbed/env` for the testbed)"})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// RequireDatabase checks that gpubridge's own database is configured.
func (c Config) RequireDatabase() error {
	if c.Database.DSN == "" {
		return ValidationError{{"database.dsn", "gpubridge's database is not configured; set GPUBRIDGE_DB_DSN (or `source .testbed/env` for the testbed)"}}
	}
	return nil
}

// RequireSlurmDB checks that slurmdbd's database is configured.
func (c Config) RequireSlurmDB() error {
	if c.SlurmDB.DSN == "" {
		return ValidationError{{"slurmdb.dsn", "slurmdbd's database is not configured; set GPUBRIDGE_SLURMDB_DSN to a read-only DSN for slurm_acct_db"}}
	}
	return nil
}

func (b Bookings) validate(add func(field, format string, a ...any)) {
	if p := b.ReservationPrefix; p == "" || !validName(strings.ReplaceAll(p, ".", "_")) {
		add("bookings.reservationPrefix", "%q must be letters, digits, '-', '_' or '.' (default gpubridge-; set GPUBRIDGE_BOOKINGS_PREFIX)", p)
	}
	if sfx := b.ReservationQOSSuffix; sfx == "" || len(sfx) > 16 || !validName(strings.ReplaceAll(sfx, ".", "_")) {
		add("bookings.reservationQOSSuffix", "%q must be 1 to 16 letters, digits, '-', '_' or '.' (default -resv)", sfx)
	}
	if b.LeadTime.Duration < 0 {
		add("bookings.leadTime", "must not be negative; use e.g. 24h (at least the pool's longest job time limit)")
	}
	if f := b.Cancellation.FreeBefore.Duration; f < 0 || f%time.Second != 0 {
		add("bookings.cancellation.freeBefore", "%s: must be 0 or a positive whole number of seconds, such as 24h (the notice that makes a cancellation free)", f)
	}
	if b.UnbookablePercent < 0 || b.UnbookablePercent > 100 {
		add("bookings.unbookablePercent", "%d is not a percentage from 0 to 100", b.UnbookablePercent)
	}
	for _, c := range slices.Sorted(maps.Keys(b.NodeClasses)) {
		if !validName(strings.ReplaceAll(c, ".", "_")) {
			add("bookings.nodeClasses", "class name %q: letters, digits, '-', '_' or '.'", c)
		}
		if len(b.NodeClasses[c]) == 0 {
			add("bookings.nodeClasses."+c, "lists no nodes; give the node names of the class")
		}
		for _, n := range b.NodeClasses[c] {
			if !validName(strings.ReplaceAll(n, ".", "_")) {
				add("bookings.nodeClasses."+c, "%q is not a node name", n)
			}
		}
	}
	p := b.DefaultPolicy
	for _, t := range slices.Sorted(maps.Keys(p.MaxGPUs)) {
		if p.MaxGPUs[t] < 0 {
			add("bookings.defaultPolicy.maxGPUs."+t, "%d is negative; use 0 to forbid booking %s", p.MaxGPUs[t], t)
		}
	}
	for field, v := range map[string]time.Duration{"maxWindow": p.MaxWindow.Duration, "minLead": p.MinLead.Duration, "maxHorizon": p.MaxHorizon.Duration} {
		if v < 0 {
			add("bookings.defaultPolicy."+field, "must not be negative")
		}
	}
	if p.MaxWindow.Duration > 0 && p.MaxHorizon.Duration > 0 && p.MaxWindow.Duration > p.MaxHorizon.Duration {
		add("bookings.defaultPolicy.maxWindow", "is longer than maxHorizon: no booking could use it")
	}
}

func (a API) validate(add func(field, format string, a ...any)) {
	if d := a.RefreshInterval.Duration; d < time.Second || d > time.Hour {
		add("api.refreshInterval", "%s is outside 1s..1h (default 15s)", d)
	}
	if a.AuthFailuresPerMinute < 1 || a.AuthFailuresPerMinute > 10_000 {
		add("api.authFailuresPerMinute", "%d is outside 1..10000 (default 10)", a.AuthFailuresPerMinute)
	}
	if a.AuthFailureBurst < 1 || a.AuthFailureBurst > 10_000 {
		add("api.authFailureBurst", "%d is outside 1..10000 (default 20)", a.AuthFailureBurst)
	}
	for _, f := range []struct {
		name string
		v    int
		def  int
	}{{"api.tokenRequestsPerSecond", a.TokenRequestsPerSecond, 20}, {"api.tokenRequestBurst", a.TokenRequestBurst, 40},
		{"api.addressRequestsPerSecond", a.AddressRequestsPerSecond, 100}, {"api.addressRequestBurst", a.AddressRequestBurst, 200}} {
		if f.v < 1 || f.v > 100_000 {
			add(f.name, "%d is outside 1..100000 (default %d)", f.v, f.def)
		}
	}
}

func (s Server) validate(add func(field, format string, a ...any)) {
	if host, port, err := net.SplitHostPort(s.Listen); err != nil || port == "" || strings.ContainsAny(host, " /") {
		add("server.listen", "%q is not a host:port address such as 127.0.0.1:9180", s.Listen)
	}
	if host, port, err := net.SplitHostPort(s.MetricsListen); err != nil || port == "" || strings.ContainsAny(host, " /") {
		add("server.metricsListen", "%q is not a host:port address such as 127.0.0.1:9181", s.MetricsListen)
	} else if s.MetricsListen == s.Listen && port != "0" {
		add("server.metricsListen", "%q is server.listen too: /metrics names every tenant and must not be on the tenant API's listener; use another port, such as 127.0.0.1:9181", s.MetricsListen)
	}
	if (s.TLSCertFile == "") != (s.TLSKeyFile == "") {
		add("server.tlsCertFile", "tlsCertFile and tlsKeyFile go together; set both (HTTPS) or neither")
	}
	for field, d := range map[string]Duration{
		"server.readTimeout": s.ReadTimeout, "server.readHeaderTimeout": s.ReadHeaderTimeout,
		"server.writeTimeout": s.WriteTimeout, "server.idleTimeout": s.IdleTimeout,
		"server.shutdownTimeout": s.ShutdownTimeout,
	} {
		if d.Duration <= 0 {
			add(field, "must be a positive duration such as 10s")
		}
	}
	if s.ReadHeaderTimeout.Duration > s.ReadTimeout.Duration && s.ReadTimeout.Duration > 0 {
		add("server.readHeaderTimeout", "%s is longer than readTimeout (%s), which bounds the headers too", s.ReadHeaderTimeout, s.ReadTimeout)
	}
	if s.MaxHeaderBytes < 1<<10 || s.MaxHeaderBytes > 16<<20 {
		add("server.maxHeaderBytes", "%d is outside 1024..16777216 (default 65536)", s.MaxHeaderBytes)
	}
	if s.MaxBodyBytes < 1<<10 || s.MaxBodyBytes > 1<<30 {
		add("server.maxBodyBytes", "%d is outside 1024..1073741824 (default 1048576)", s.MaxBodyBytes)
	}
}

// checkDisplayName says what is wrong with a name finance reads (empty:
// nothing; an empty name is allowed and means the default).
func checkDisplayName(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > MaxNameLen:
		return fmt.Sprintf("is %d bytes; at most %d", len(s), MaxNameLen)
	case !utf8.ValidString(s):
		return "is not UTF-8 text"
	case strings.TrimSpace(s) != s:
		return "has leading or trailing spaces; remove them"
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "holds a control character (tab, newline, ...); use plain text"
	}
	return ""
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
