package archtest

// Gpubridge is the layout of this module: one entry per package, pure or
// not, with the packages that may import it. DESIGN.md's rule in code:
// imports run from the edge (cmd, adapters) to the core (pure domain
// logic), never back, and across the top-level folders (bridge,
// accounting, gres) only where an entry says why.
//
// A new package needs an entry here (the test fails without one), and a
// renamed one its entry renamed.
var Gpubridge = Layout{
	Module:     "github.com/gpubridge/gpubridge",
	Domains:    []string{"bridge", "accounting", "gres"},
	RequireDoc: true,
	Forbidden: []string{
		"net/http",
		"database/sql",
		"os/exec",
		"github.com/jmoiron/sqlx",
		"github.com/go-sql-driver/mysql",
		"github.com/NVIDIA/go-nvml",
	},
	Packages: map[string]Rule{
		"cmd/gpubridge": {}, // the binary: imports the rest, imported by nobody

		// bridge/: everything between tenants and Slurm.
		"bridge/slurmrest": {Importers: []string{
			"cmd/gpubridge", "internal/app", "bridge/reconcile/slurmadapter", "bridge/burst/slurmjobs", "bridge/slurmconf/slurmadapter", "bridge/reserve/slurmadapter",
			"bridge/health/slurmadapter", "bridge/health/setup", "bridge/reserve/setup", "bridge/api/setup", "bridge/slurmrest/slurmresttest", "test/...", "accounting/ingest", "accounting/billing", "gres/slurmcheck", "internal/clients",
		}, Why: "the one slurmrestd client: accounting/ingest reads job records through it (its REST source), accounting/billing the end states of runs for node health credits, gres/slurmcheck reads the nodes' GRES, internal/clients builds it from the configuration"},
		"bridge/slurmrest/slurmresttest":     {}, // testbed clients for integration tests
		"bridge/tenant":                      {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/reconcile/...", "bridge/tenantadmin/...", "bridge/tenantstore/...", "bridge/burst/...", "bridge/api", "bridge/health/setup", "test/bench/...", "bridge/api/setup"}},
		"bridge/tenantadmin":                 {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/tenantadmin/view"}}, // the tenant use cases; I/O through its ports
		"bridge/tenantadmin/view":            {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app"}},                            // the tenant views (plan printer, descriptions, tables, messages)
		"bridge/tenantstore":                 {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/tenantstore/tenantstoretest", "bridge/burst/service", "bridge/health/setup", "test/bench/...", "bridge/reserve/setup", "bridge/api/setup"}},
		"bridge/tenantstore/tenantstoretest": {}, // the store conformance suite, for tests
		"bridge/reconcile":                   {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/reconcile/...", "bridge/tenantadmin/...", "test/bench/..."}},
		"bridge/reconcile/metrics":           {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"bridge/reconcile/slurmadapter":      {Importers: []string{"cmd/gpubridge", "internal/app", "test/bench/..."}},
		"bridge/reconcile/reconciletest":     {},                                                                                     // fakes for tests
		"bridge/sacctmgr":                    {Importers: []string{"bridge/reconcile/slurmadapter", "internal/clients", "test/..."}}, // sacctmgr for bulk writes (os/exec)
		"bridge/burst":                       {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/burst/...", "bridge/api", "test/bench/...", "bridge/api/setup"}},
		"bridge/burst/metrics":               {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"bridge/burst/slurmjobs":             {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/burst/service", "test/bench/...", "bridge/api/setup"}},
		"bridge/burst/spend":                 {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/burst/service"}},
		"bridge/burst/store":                 {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/burst/service"}},
		"bridge/burst/service":               {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/api/setup"}},
		"bridge/slurmconf":                   {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/slurmconf/..."}},
		"bridge/slurmconf/slurmadapter":      {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"bridge/reserve":                     {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/reserve/...", "bridge/tenant", "bridge/tenantstore/...", "bridge/api", "test/bench/...", "bridge/api/setup"}},
		// The tenant API: an HTTP adapter over the use cases' ports; its
		// tokens (pure) and their store.
		"bridge/api": {Importers: []string{"cmd/gpubridge", "internal/app", "test/bench/...", "bridge/api/setup"},
			Why: "it shows the tenants (bridge/tenant), burst plan (bridge/burst), bookings (bridge/reserve) and priced usage (accounting/meter, accounting/export) through ports; cmd/gpubridge wires them"},
		"bridge/api/setup": {Importers: []string{"cmd/gpubridge", "internal/app"},
			Why: "the tenant API of a configuration: its ports on the stores and services, the usage books and the ledger's ingest watermark (accounting) included"},
		"bridge/api/token":                     {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/api/...", "test/bench/..."}},
		"bridge/api/tokenstore":                {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/api/tokenstore/...", "test/bench/...", "bridge/api/setup"}},
		"bridge/api/tokenstore/tokenstoretest": {},                                                  // the token stores' conformance suite; tests import it
		"bridge/reserve/reservetest":           {Pure: true, Importers: []string{"test/bench/..."}}, // and tests
		"bridge/reserve/slurmadapter":          {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/reserve/setup", "bridge/api/setup"}},
		"bridge/reserve/metrics":               {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/reserve/setup"}},
		"bridge/reserve/store":                 {Importers: []string{"cmd/gpubridge", "internal/app", "test/bench/...", "bridge/reserve/setup"}},
		"bridge/reserve/setup":                 {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/api/setup"}}, // the booking use cases of a configuration
		"bridge/reserve/view":                  {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app"}},         // the booking views (tables, timeline, audit lines)
		"bridge/reserve/store/storetest":       {Importers: []string{"test/bench/..."}},                                    // and tests
		"bridge/health":                        {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/health/...", "accounting/billing"}, Why: "accounting/billing reads the health events behind node health credits"},
		"bridge/health/check":                  {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "bridge/health/..."}},
		"bridge/health/credit":                 {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "accounting/billing", "bridge/health/credit/..."}, Why: "accounting/billing implements the credit job's ports over the ledger (charged runs, credit lines)"},
		"bridge/health/credit/metrics":         {Importers: []string{"cmd/gpubridge", "internal/app"}}, // the credit job's collectors
		"bridge/health/healthtest":             {Pure: true},                                           // the fake Slurm of the health tests
		"bridge/health/metrics":                {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"bridge/health/slurmadapter":           {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/health/setup"}},
		"bridge/health/store":                  {Importers: []string{"cmd/gpubridge", "internal/app", "bridge/health/setup"}},
		"bridge/health/setup":                  {Importers: []string{"cmd/gpubridge", "internal/app"}}, // the health service of a configuration

		// accounting/: usage, ledger and money.
		"accounting/meter": {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "accounting/...", "test/bench/...", "bridge/burst/spend", "bridge/api", "bridge/api/setup"},
			Why: "bridge/burst/spend prices a tenant's on-demand spend from the ledger; the tenant API (and its wiring, api/setup) shows usage periods"},
		"accounting/pricing": {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "accounting/...", "bridge/burst/spend", "bridge/burst/service"},
			Why: "the burst controller prices a tenant's on-demand spend with the rate card (spend) and assembles it (service)"},
		"accounting/ledger": {Importers: []string{"cmd/gpubridge", "internal/app", "accounting/...", "bridge/burst/spend", "bridge/burst/service", "bridge/api/setup", "test/bench/cmd/ingestprof"},
			Why: "the burst controller reads a tenant's on-demand usage from the ledger (spend) and opens it (service); the tenant API's wiring reads the ingest watermark (api/setup)"},
		"accounting/ratecard": {Importers: []string{"cmd/gpubridge", "internal/app", "accounting/...", "bridge/burst/spend", "bridge/burst/service"},
			Why: "the burst controller reads the on-demand rates from the stored rate card"},
		"accounting/billing":           {Importers: []string{"cmd/gpubridge", "internal/app", "accounting/jobs"}},
		"accounting/ledger/ledgertest": {}, // the store conformance suite, for tests
		"accounting/ingest":            {Importers: []string{"cmd/gpubridge", "internal/app", "accounting/jobs", "accounting/billing", "test/bench/cmd/ingestprof"}},
		"accounting/jobs":              {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"accounting/export": {Importers: []string{"cmd/gpubridge", "internal/app", "accounting/billing", "bridge/api", "bridge/api/setup"},
			Why: "the tenant API (and its wiring, api/setup) shows a tenant's priced usage (export.Summary, as show usage does)"}, // writes files (internal/atomicfile)
		"accounting/export/focuscheck": {Pure: true, Importers: []string{"accounting/export/exporttest"}}, // FOCUS 1.2's rules as checks; and tests
		"accounting/export/exporttest": {Pure: true},                                                      // focuscheck over gpubridge's exports, for tests
		"accounting/internal/acctest":  {},                                                                // shared integration-test setup

		// gres/: GPUs and MIG on a node.
		"gres/inventory":  {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "gres/..."}},
		"gres/mig":        {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "gres/conf", "gres/device"}},
		"gres/conf":       {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "gres/slurmcheck"}},
		"gres/device":     {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"gres/slurmcheck": {Importers: []string{"cmd/gpubridge", "internal/app"}},

		// internal/: shared infrastructure.
		"internal/slurmstr":            {Pure: true, Importers: []string{"*"}},
		"internal/money":               {Pure: true, Importers: []string{"*"}},
		"internal/problem":             {Pure: true, Importers: []string{"*"}}, // the one list of input problems
		"internal/config":              {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app", "internal/daemon", "internal/clients", "accounting/billing", "bridge/burst/service", "bridge/health/setup", "bridge/reserve/setup", "bridge/api/setup"}},
		"internal/kv":                  {Pure: true, Importers: []string{"*"}},
		"internal/dbsetup":             {Pure: true, Importers: []string{"cmd/gpubridge", "internal/app"}}, // init-db's SQL (pure: no driver)
		"internal/table":               {Pure: true, Importers: []string{"*"}},                             // the CLI's tables: the feature packages lay out their views
		"internal/atomicfile":          {Importers: []string{"cmd/gpubridge", "internal/app", "internal/daemon", "bridge/reconcile/slurmadapter", "accounting/export"}},
		"internal/sqldb":               {Importers: []string{"cmd/gpubridge", "internal/app", "internal/daemon", "internal/clients", "internal/clients/clientstest", "accounting/ledger", "accounting/ratecard", "accounting/internal/acctest", "bridge/tenantstore/...", "bridge/burst/store", "bridge/reserve/store/...", "bridge/health/store", "bridge/api/tokenstore", "test/..."}},
		"internal/app":                 {Importers: []string{"cmd/gpubridge"}}, // the application layer: builds every use case from the configuration
		"internal/daemon":              {Importers: []string{"cmd/gpubridge", "internal/app"}},
		"internal/writerlock":          {Importers: []string{"cmd/gpubridge", "internal/app"}},                                             // the one-writer lock; and tests
		"internal/clients":             {Importers: []string{"cmd/gpubridge", "internal/app", "internal/daemon", "bridge/api/setup"}},      // the clients of a configuration, for the CLI and the daemon
		"internal/clients/clientstest": {},                                                                                                 // fakes of what a clients.Set connects to; tests import it
		"internal/testbed":             {Importers: []string{"accounting/internal/acctest", "bridge/slurmrest/slurmresttest", "test/..."}}, // and tests
		"internal/archtest":            {},                                                                                                 // this test
		"internal/golden":              {},                                                                                                 // the golden-file helper; tests import it

		// test/: benchmarks and their tools.
		"test/install":              {}, // the package's install test
		"test/contrib":              {}, // the checks of contrib/grafana and contrib/prometheus
		"test/bench/burstbench":     {},
		"test/bench/tenantbench":    {},
		"test/bench/bookingbench":   {},
		"test/bench/apibench":       {},
		"test/bench/cmd/synthjobs":  {},
		"test/bench/cmd/ingestprof": {},
		"test/bench/synth":          {Importers: []string{"test/bench/...", "accounting/internal/acctest"}},
		"test/fault":                {Importers: []string{"accounting/internal/acctest"}}, // the fault suite's toolbox; and tests
		"test/fault/proxy":          {Importers: []string{"test/fault/..."}},
		"test/fault/cmd/faultproxy": {},
	},
}
