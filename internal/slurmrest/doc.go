// Package slurmrest is gpubridge's typed client for slurmrestd: the only
// place that speaks Slurm's REST API.
//
// It owns:
//   - version negotiation: data_parser v0.0.44 (preferred) or v0.0.43,
//     chosen by the first request from what the server offers (again after
//     a request found no server; Open connects to nothing, New negotiates at
//     once), or pinned by Options.APIVersion; ErrUnsupportedVersion lists
//     what the server offers;
//   - authentication: HS256 JWTs minted from Slurm's jwt key (claims sun, iat,
//     exp; refreshed well before exp), or a given token; Client.As makes calls
//     on behalf of a named user. Tokens are never logged;
//   - errors: Slurm's errors[] array becomes *SlurmError (errors.As), with
//     the sentinels ErrNotFound, ErrUnauthorized, ErrNoClusterAssociation and
//     ErrInvalid (checked with errors.Is);
//   - transport policy: a timeout per HTTP request, jittered retries with
//     backoff for reads (GET) only, never for writes, and Stats counting the
//     reads and writes sent.
//
// The types here (Node, Job, QOS, TRES, Limit, ...) are gpubridge's own
// domain-shaped views, not a dump of Slurm's OpenAPI schema; the wire
// structs that mirror the schema are unexported (wire.go).
//
// List calls fetch all objects in one request; create/modify calls take
// slices so that callers batch their writes.
//
// This package may import net/http and the domain packages; it must not
// import cmd/, the ledger or any other adapter. Slurm's strings (TRES, GRES,
// hostlists) are read by internal/slurmstr. Importers: cmd/gpubridge, the
// adapters bridge/reconcile/slurmadapter and bridge/burst/slurmjobs,
// accounting/ingest (its REST source), gres/slurmcheck and test/bench.
package slurmrest
