// Package api is gpubridge's tenant self-service over HTTP: the JSON API
// under /api/v1/ (described by openapi.yaml, which a test holds to the
// handlers), the portal at / and the per-tenant Prometheus gauges.
//
// Every request carries a bearer token (cmd/gpubridge/api/token) of one tenant,
// scope read or book, or an admin token, or a person's Slurm JWT (person.go:
// HS256 with the site's key, exp and iat checked, the user in sun; the
// person reads and books for the tenants whose users or admins name them,
// read afresh at most a second old). The portal (page.go, portal.go)
// signs a browser in with either and keeps only a server-side session
// (session.go: a random id in an HttpOnly, SameSite=Strict cookie, a
// CSRF token in every form that changes something); its pages are
// server-rendered, work without JavaScript and carry a CSP without
// unsafe-inline (static/portal.js refreshes the calendar's free counts).
// A tenant's admins (its admins list, signed in with a Slurm JWT) manage
// its tokens of scope read or book (tokens.go, through the CLI's token
// use cases, the TokenCases port).
// Authentication is the first
// step: no token, a malformed, unknown (deleted) or expired one is 401;
// failures are counted per reason and rate-limited per source address
// (429 while the address's bucket is empty). Isolation comes next: a
// tenant in the path or in a tenant=/account= query that is not the
// token's is 404, with the same body as a tenant that does not exist; a
// booking of another tenant is 404 like a missing one; lists hold the
// token's tenant only. The scope is checked last: a token without the
// needed scope gets 403 on its own tenant's objects only. Every change is
// made by the booking use cases the CLI runs (cmd/gpubridge/app's
// BookingCases, reached through the Bookings port) with the token as the
// actor, so the audit log names it; a handler parses its JSON at its edge
// into the request the CLI builds of its key=value arguments (the body's
// fields are the CLI's keys, read by the domain's parser), so refusals
// carry the CLI's messages.
//
// What changes by the second (bookings) is read live; the rest comes
// from a Snapshot that Live takes once per cycle (default 15 s) and on
// demand when a request finds it older: the tenants, one bulk read of
// every job (JobCache, which the burst planner reads too), the burst plan
// and stored refusals, the cluster's inventory (InventoryCache, shared
// with the read-only booking routes), the bookings in force, the
// current period's usage and the ingest watermark. A part that fails
// keeps its last reading and says so. The metrics (Metrics) are exported
// from the snapshot at scrape time without reading anything.
//
// The package reaches everything through small interfaces defined here
// (TokenStore, TenantLister, BurstPlanner, UsageReader, Bookings, and for
// the portal JWTKey, SessionStore, TokenCases); only
// the wiring (cmd/gpubridge/wire/apisetup, for cmd/gpubridge's serve)
// plugs the use cases of cmd/gpubridge/app (BookingCases, UsageCases) and
// the stores into them. It imports the domain packages for their types
// (tenant, burst, reserve, meter, export) and never a store, an adapter,
// a feature's service, the slurmrest client or the wiring
// (internal/archtest's FrontEnds rule).
package api
