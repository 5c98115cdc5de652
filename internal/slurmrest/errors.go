package slurmrest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrNotFound: HTTP 404, or one of Slurm's "does not exist" error numbers.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: HTTP 401/403 (bad, expired or missing token; not permitted).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnsupportedVersion: the server offers neither v0.0.44 nor v0.0.43
	// (or not the pinned version).
	ErrUnsupportedVersion = errors.New("unsupported slurmrestd data_parser version")
	// ErrNoClusterAssociation: a user association was written under an
	// account that has no association on the cluster; Slurm silently creates
	// nothing in that case.
	ErrNoClusterAssociation = errors.New("account has no cluster association")
	// ErrInvalid: the request was rejected by the client before sending
	// (negative count, empty name, ...). Nothing was written.
	ErrInvalid = errors.New("invalid request")
	// ErrTooLarge: the answer would be larger than the client accepts
	// (Options.MaxBodyBytes), or slurmdbd refused to build it (error 7006
	// "Query result exceeds size limit"). Ask for less.
	ErrTooLarge = errors.New("answer too large")
	// ErrQueryTooWide: slurmdbd refused a time window wider than its
	// MaxQueryTimeRange (error 7007 "Too wide of a date range in query").
	ErrQueryTooWide = errors.New("query time range too wide")
)

// ErrorDetail is one entry of Slurm's errors[] array.
type ErrorDetail struct {
	Number      int    // error_number, e.g. 2017 (ESLURM_INVALID_JOB_ID)
	Text        string // error, e.g. "Invalid job id specified"
	Source      string // source, e.g. "slurm_get_job"
	Description string // description, free text
}

func (d ErrorDetail) String() string {
	var parts []string
	if d.Text != "" {
		parts = append(parts, d.Text)
	}
	if d.Description != "" && d.Description != d.Text {
		parts = append(parts, d.Description)
	}
	s := strings.Join(parts, ": ")
	if d.Number != 0 {
		s = fmt.Sprintf("%s (error %d)", s, d.Number)
	}
	if d.Source != "" {
		s += " [" + d.Source + "]"
	}
	return s
}

// SlurmError is a failed slurmrestd request: a non-2xx status, or a 2xx
// response whose errors[] is not empty. Use errors.As to read it.
type SlurmError struct {
	Method     string
	Path       string // request path without the query, e.g. /slurm/v0.0.44/job/17
	HTTPStatus int
	Errors     []ErrorDetail
	// Body is a short prefix of a body that was not Slurm JSON (a proxy's
	// HTML page, a truncated response); empty otherwise.
	Body string
}

func (e *SlurmError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slurmrestd %s %s: HTTP %d", e.Method, e.Path, e.HTTPStatus)
	if t := http.StatusText(e.HTTPStatus); t != "" {
		fmt.Fprintf(&b, " %s", t)
	}
	for i, d := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(d.String())
	}
	if len(e.Errors) == 0 && e.Body != "" {
		fmt.Fprintf(&b, ": %q", e.Body)
	}
	return b.String()
}

// Slurm error numbers this package interprets, as measured on Slurm 26.05
// (both data_parser versions answer alike).
const (
	// errnoAuth: SLURM_PROTOCOL_AUTHENTICATION_ERROR, "Protocol
	// authentication error", HTTP 511: slurmctld rejected the token
	// (expired, bad signature). slurmdbd calls with such a token fail
	// instead with 7000 "Unable to connect to database", HTTP 502.
	errnoAuth = 1007
	// errnoInvalidJobID: "Invalid job id specified", HTTP 404, from GET,
	// POST and DELETE /job/{id}.
	errnoInvalidJobID = 2017
	// errnoInvalidResv: "Requested reservation is invalid", HTTP 422, from
	// DELETE /reservation/{name} of a missing reservation.
	errnoInvalidResv = 2053
	// errnoDBConnection: ESLURM_DB_CONNECTION, "Unable to connect to
	// database", HTTP 502, from /slurmdb/ calls when slurmdbd refused the
	// token (or is unreachable).
	errnoDBConnection = 7000
	// errnoResultTooLarge: ESLURM_RESULT_TOO_LARGE, "Query result exceeds
	// size limit".
	errnoResultTooLarge = 7006
	// errnoQueryTooWide: ESLURM_DB_QUERY_TOO_WIDE, "Too wide of a date
	// range in query": slurmdbd's MaxQueryTimeRange.
	errnoQueryTooWide = 7007
)

// notFoundNumbers are Slurm error numbers that mean "no such object".
// Other endpoints report a missing object as an empty list (slurmdb
// users, accounts, QOS) or even as error 0 "No error" (GET
// /reservation/{name}, /node/{name}); the client maps those itself.
var notFoundNumbers = map[int]bool{
	errnoInvalidJobID: true,
	errnoInvalidResv:  true,
}

// Is makes errors.Is(err, ErrNotFound), ErrUnauthorized, ErrTooLarge and
// ErrQueryTooWide work on a *SlurmError.
func (e *SlurmError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		if e.HTTPStatus == http.StatusNotFound {
			return true
		}
		for _, d := range e.Errors {
			if notFoundNumbers[d.Number] {
				return true
			}
		}
	case ErrUnauthorized:
		switch e.HTTPStatus {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNetworkAuthenticationRequired:
			return true
		}
		return e.HasNumber(errnoAuth)
	case ErrTooLarge:
		return e.HasNumber(errnoResultTooLarge)
	case ErrQueryTooWide:
		return e.HasNumber(errnoQueryTooWide)
	}
	return false
}

// HasNumber reports whether Slurm returned the given error number.
func (e *SlurmError) HasNumber(n int) bool {
	for _, d := range e.Errors {
		if d.Number == n {
			return true
		}
	}
	return false
}
