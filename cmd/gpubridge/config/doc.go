// Package config holds gpubridge's one versioned configuration struct.
//
// Precedence is defaults < file < environment (GPUBRIDGE_*) < flags; the
// command layer applies flags last. Read (Load, then Validate) reports
// every problem at once, each with its field path, so an admin fixes a
// file in one pass: keys are case-sensitive, a key that is not one of its
// place's is named with the key meant (`server.listne: unknown key (did
// you mean listen?)`, internal/kv's matcher), a value of the wrong type
// and an invalid value are named at their field.
//
// This package does no network or database I/O; it must not import
// net/http, database/sql or any adapter package. Importers: cmd/gpubridge,
// cmd/gpubridge/daemon, cmd/gpubridge/clients and the features' setup packages
// (accounting/billing, bridge/burst/service, bridge/health/setup).
package config
