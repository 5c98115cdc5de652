// Package token is the model of the tenant API's bearer tokens: their
// scopes (read, book, admin), their secret's form and hash, their names
// and expiry.
//
// A token is "gpb_" followed by 43 base64url characters: a 256-bit random
// secret. gpubridge stores only its SHA-256 (Hash), so a database dump
// yields no usable token, and prints the token once, when it is made. A
// string that is not of that form is malformed (ErrMalformed) before any
// lookup.
//
// Scopes nest: book allows what read allows plus bookings' changes; admin
// allows everything, for every tenant (an admin token belongs to no
// tenant).
//
// It owns the use case of making one (Issue: the tenant must exist, the
// secret is made, the hash stored through the Adder port), the reading of
// add token's arguments (Parse) and the show tokens table (Table), so
// that the CLI only parses, calls and prints.
//
// This package is pure: no HTTP, database or adapter.
package token
