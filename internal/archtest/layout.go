package archtest

// Gpubridge is the layout of this module: its floors, and one entry per
// package, pure or not, with the packages that may import it. DESIGN.md's
// rule in code: imports run from the roof (cmd/gpubridge: the CLI, the use
// cases, the daemon, the HTTP front end, the configuration and the wiring)
// down through the features (bridge above accounting and gres) to the
// ground (internal), never back up; within a floor, from the edge
// (adapters) to the core (pure domain logic), and across the feature
// folders only where an entry says why.
//
// A new package needs an entry here (the test fails without one), and a
// renamed one its entry renamed. docs/architecture.md shows these rules.
var Gpubridge = Layout{
	Module:     "github.com/gpubridge/gpubridge",
	Domains:    []string{"bridge", "accounting", "gres"},
	Floors:     [][]string{{"cmd", "test"}, {"bridge"}, {"accounting", "gres"}, {"internal"}},
	RequireDoc: true,
	Forbidden: []string{
		"net/http",
		"database/sql",
		"os/exec",
		"github.com/jmoiron/sqlx",
		"github.com/go-sql-driver/mysql",
		"github.com/NVIDIA/go-nvml",
	},
	// The tenant API calls the use cases of cmd/gpubridge/app (the ones the
	// CLI runs), which the wiring passes to its ports; it never reaches a
	// feature's service, store or adapter itself.
	FrontEnds: map[string]FrontEnd{
		"cmd/gpubridge/api": {
			Forbidden: []string{
				"cmd/gpubridge/app", "cmd/gpubridge/wire/...", "cmd/gpubridge/clients/...", "cmd/gpubridge/api/tokenstore/...", "cmd/gpubridge/api/sessionstore",
				"bridge/*/store", "bridge/*/store/...", "bridge/*/slurmadapter", "bridge/tenantstore/...", "bridge/tenantadmin/...",
				"bridge/burst/slurmjobs", "bridge/burst/spend", "bridge/health/credit/ledgeradapter",
				"accounting/ledger/...", "accounting/billing", "accounting/ratecard", "accounting/ingest", "accounting/jobs",
				"internal/slurmrest/...", "internal/sacctmgr", "internal/sqldb",
			},
			Names: []string{"Service"},
		},
	},
	Packages: map[string]Rule{
		// cmd/gpubridge: the roof.
		"cmd/gpubridge":                               {},                                                                                                      // the CLI: parses, calls one use case, prints; imported by nobody
		"cmd/gpubridge/app":                           {Importers: []string{"cmd/gpubridge"}},                                                                  // the use cases that the CLI, the daemon and the API share
		"cmd/gpubridge/config":                        {Pure: true, Importers: []string{"cmd/..."}},                                                            // the configuration: only the roof reads it
		"cmd/gpubridge/clients":                       {Importers: []string{"cmd/..."}},                                                                        // the connections of a configuration
		"cmd/gpubridge/clients/clientstest":           {TestOnly: true},                                                                                        // fakes of what clients connect to
		"cmd/gpubridge/daemon":                        {Importers: []string{"cmd/gpubridge", "cmd/gpubridge/app"}},                                             // the daemon's lifecycle
		"cmd/gpubridge/api":                           {Importers: []string{"cmd/gpubridge", "cmd/gpubridge/app", "cmd/gpubridge/wire/...", "test/bench/..."}}, // the tenant API's HTTP front end
		"cmd/gpubridge/api/token":                     {Pure: true, Importers: []string{"cmd/...", "test/bench/..."}},
		"cmd/gpubridge/api/tokenstore":                {Importers: []string{"cmd/...", "test/bench/..."}},
		"cmd/gpubridge/api/tokenstore/tokenstoretest": {TestOnly: true},                                            // the token stores' conformance suite
		"cmd/gpubridge/api/sessionstore":              {Importers: []string{"cmd/gpubridge/wire"}},                 // the portal's sessions in the database
		"cmd/gpubridge/wire":                          {Importers: []string{"cmd/gpubridge", "cmd/gpubridge/app"}}, // one wiring function per feature, from the configuration and the cluster handle

		// bridge/: the features between tenants and Slurm.
		"bridge/tenant":                      {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "bridge/reconcile/...", "bridge/tenantadmin/...", "bridge/tenantstore/...", "bridge/burst/..."}},
		"bridge/tenantadmin":                 {Pure: true, Importers: []string{"cmd/...", "bridge/tenantadmin/view"}}, // the tenant use cases; I/O through its ports
		"bridge/tenantadmin/view":            {Pure: true, Importers: []string{"cmd/..."}},                            // the tenant views (plan printer, descriptions, tables, messages)
		"bridge/tenantstore":                 {Importers: []string{"cmd/...", "test/bench/..."}},
		"bridge/tenantstore/tenantstoretest": {TestOnly: true}, // the store conformance suite
		"bridge/reconcile":                   {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "bridge/reconcile/...", "bridge/tenantadmin/..."}},
		"bridge/reconcile/metrics":           {Importers: []string{"cmd/..."}},
		"bridge/reconcile/slurmadapter":      {Importers: []string{"cmd/...", "test/bench/..."}},
		"bridge/reconcile/reconciletest":     {TestOnly: true}, // fakes for tests
		"bridge/burst":                       {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "bridge/burst/..."}},
		"bridge/burst/metrics":               {Importers: []string{"cmd/..."}},
		"bridge/burst/slurmjobs":             {Importers: []string{"cmd/...", "test/bench/..."}},
		"bridge/burst/spend":                 {Importers: []string{"cmd/..."}},
		"bridge/burst/store":                 {Importers: []string{"cmd/..."}},
		"bridge/slurmconf":                   {Pure: true, Importers: []string{"cmd/...", "bridge/slurmconf/..."}},
		"bridge/slurmconf/slurmadapter":      {Importers: []string{"cmd/..."}},
		"bridge/reserve":                     {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "bridge/reserve/...", "bridge/tenant", "bridge/tenantstore/...", "bridge/health/credit/ledgeradapter"}},
		"bridge/reserve/reservetest":         {Pure: true, TestOnly: true},
		"bridge/reserve/slurmadapter":        {Importers: []string{"cmd/..."}},
		"bridge/reserve/metrics":             {Importers: []string{"cmd/..."}},
		"bridge/reserve/store":               {Importers: []string{"cmd/...", "test/bench/..."}},
		"bridge/reserve/view":                {Pure: true, Importers: []string{"cmd/..."}}, // the booking views (tables, timeline, audit lines)
		"bridge/reserve/store/storetest":     {TestOnly: true},
		"bridge/health":                      {Pure: true, Importers: []string{"cmd/...", "bridge/health/..."}},
		"bridge/health/check":                {Pure: true, Importers: []string{"cmd/...", "bridge/health/..."}},
		"bridge/health/credit":               {Pure: true, Importers: []string{"cmd/...", "bridge/health/credit/..."}},
		"bridge/health/credit/ledgeradapter": {Importers: []string{"cmd/..."}}, // the credit job's ports over the books
		"bridge/health/credit/metrics":       {Importers: []string{"cmd/..."}}, // the credit job's collectors
		"bridge/health/healthtest":           {Pure: true, TestOnly: true},     // the fake Slurm of the health tests
		"bridge/health/metrics":              {Importers: []string{"cmd/..."}},
		"bridge/health/slurmadapter":         {Importers: []string{"cmd/..."}},
		"bridge/health/store":                {Importers: []string{"cmd/..."}},

		// accounting/: usage, ledger and money.
		"accounting/meter": {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "accounting/...", "bridge/burst/spend", "bridge/health/credit/ledgeradapter", "bridge/reserve"},
			Why: "bridge/burst/spend prices a tenant's on-demand spend from the ledger; the health credits' ledger adapter reads charged runs; bridge/reserve reduces bookings to the booked windows their charge needs"},
		"accounting/pricing": {Pure: true, Importers: []string{"cmd/...", "test/bench/...", "accounting/...", "bridge/burst/...", "bridge/health/credit/ledgeradapter"},
			Why: "the burst controller prices a tenant's on-demand spend and its estimates with the rate card's prices; the health credits price a lost run or booking as it was charged"},
		"accounting/ledger": {Importers: []string{"cmd/...", "test/bench/cmd/ingestprof", "accounting/...", "bridge/burst/spend", "bridge/health/credit/ledgeradapter"},
			Why: "the burst controller reads a tenant's on-demand usage from the ledger; the health credits read charged runs and write credit lines"},
		"accounting/ratecard": {Importers: []string{"cmd/...", "accounting/...", "bridge/burst/spend"},
			Why: "the burst controller reads the on-demand rates from the stored rate card"},
		"accounting/billing": {Importers: []string{"cmd/...", "accounting/jobs", "bridge/health/credit/ledgeradapter"},
			Why: "the health credits' ledger adapter reads the rate cards, tenant labels and run end states the books keep"},
		"accounting/ledger/ledgertest": {TestOnly: true}, // the store conformance suite and fixtures
		"accounting/ingest":            {Importers: []string{"cmd/...", "test/bench/cmd/ingestprof", "accounting/jobs", "accounting/billing"}},
		"accounting/jobs":              {Importers: []string{"cmd/..."}},
		"accounting/export":            {Importers: []string{"cmd/...", "accounting/billing"}},            // writes files (internal/atomicfile)
		"accounting/export/focuscheck": {Pure: true, Importers: []string{"accounting/export/exporttest"}}, // FOCUS 1.2's rules as checks
		"accounting/export/exporttest": {Pure: true, TestOnly: true},                                      // focuscheck over gpubridge's exports
		"accounting/internal/acctest":  {TestOnly: true},                                                  // shared integration-test setup

		// gres/: GPUs and MIG on a node.
		"gres/inventory":  {Pure: true, Importers: []string{"cmd/...", "gres/..."}},
		"gres/mig":        {Pure: true, Importers: []string{"cmd/...", "gres/conf", "gres/device"}},
		"gres/conf":       {Pure: true, Importers: []string{"cmd/...", "gres/slurmcheck"}},
		"gres/device":     {Importers: []string{"cmd/..."}},
		"gres/slurmcheck": {Importers: []string{"cmd/..."}},

		// internal/: the ground every floor stands on.
		"internal/slurmrest":               {Importers: []string{"cmd/...", "test/...", "bridge/...", "accounting/ingest", "accounting/billing", "gres/slurmcheck"}}, // the one slurmrestd client
		"internal/sacctmgr":                {Importers: []string{"cmd/...", "test/...", "bridge/reconcile/slurmadapter"}},                                            // sacctmgr for bulk writes (os/exec)
		"internal/slurmrest/slurmresttest": {TestOnly: true},                                                                                                         // testbed clients for integration tests
		"internal/slurmstr":                {Pure: true, Importers: []string{"*"}},
		"internal/money":                   {Pure: true, Importers: []string{"*"}},
		"internal/interval":                {Pure: true, Importers: []string{"*"}}, // the one half-open interval of seconds and its set
		"internal/problem":                 {Pure: true, Importers: []string{"*"}}, // the one list of input problems
		"internal/kv":                      {Pure: true, Importers: []string{"*"}},
		"internal/table":                   {Pure: true, Importers: []string{"*"}},       // the CLI's tables: the feature packages lay out their views
		"internal/dbsetup":                 {Pure: true, Importers: []string{"cmd/..."}}, // init-db's SQL (pure: no driver)
		"internal/atomicfile":              {Importers: []string{"cmd/...", "bridge/reconcile/slurmadapter", "accounting/export"}},
		"internal/sqldb":                   {Importers: []string{"*"}},
		"internal/lease":                   {Importers: []string{"cmd/...", "test/...", "internal/sqldb", "internal/writerlock", "accounting/ledger", "accounting/ingest"}},
		"internal/lease/leasetest":         {TestOnly: true},
		"internal/writerlock":              {Importers: []string{"cmd/..."}}, // the one-writer lock
		"internal/testbed":                 {TestOnly: true},                 // the testbed's addresses, for tests
		"internal/golden":                  {TestOnly: true},                 // the golden-file helper
		"internal/archtest":                {},                               // this test

		// test/: benchmarks, fault injection and install checks.
		"test/install":              {}, // the package's install test
		"test/contrib":              {}, // the checks of contrib/grafana and contrib/prometheus
		"test/docs":                 {}, // the documentation's examples, run
		"test/bench/burstbench":     {},
		"test/bench/tenantbench":    {},
		"test/bench/bookingbench":   {},
		"test/bench/apibench":       {},
		"test/bench/portalbench":    {},
		"test/bench/cmd/synthjobs":  {},
		"test/bench/cmd/ingestprof": {},
		"test/bench/synth":          {TestOnly: true, Importers: []string{"test/bench/...", "accounting/internal/acctest"}},
		"test/fault":                {TestOnly: true, Importers: []string{"accounting/internal/acctest", "cmd/gpubridge"}}, // the fault suite's toolbox
		"test/fault/proxy":          {Importers: []string{"test/fault/..."}},
		"test/fault/cmd/faultproxy": {},
	},
}
