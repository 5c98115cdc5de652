// Package config holds gpubridge's one versioned configuration struct.
//
// Precedence is defaults < file < environment (GPUBRIDGE_*) < flags; the
// command layer applies flags last. Validate reports every problem at once,
// each with its field path, so an admin fixes a file in one pass.
//
// This package does no network or database I/O; it must not import
// net/http, database/sql or any adapter package. Importers: cmd/gpubridge
// and internal/daemon.
package config
