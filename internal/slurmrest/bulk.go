package slurmrest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Bulk writes. slurmdbd's REST handlers process a request's objects one
// by one (an existence read and an add or modify per object, as measured
// on Slurm 26.05: 0.2 to 1.6 ms each) and commit once at the end; a
// request whose commit sends slurmctld a small update costs about 43 ms
// more, and those commits are serialized by slurmdbd, so sending objects
// in parallel requests does not make that part faster. So every write
// here sends as few requests as the API allows: one per kind of object
// for creates and modifies. Deletes of accounts and QOS have no bulk
// endpoint (DELETE account/{name} and qos/{name} take one name each;
// DELETE qos/ answers 404); they are pipelined on PipelineDepth
// connections, accounts after their associations are removed in bulk. docs/scale.md has the
// figures.
//
// A bulk request is all or nothing: slurmrestd stops at the first object
// Slurm refuses and does not commit, so nothing of the request is written.
// Its error (*BulkError) stays short whatever the batch size, and so does
// a pipeline's (*PipelineError).

// PipelineDepth is how many requests a pipelined write keeps in flight
// (8: deleting 1,000 accounts without associations took 5.6 s on the
// testbed; slurmdbd serializes what costs most, the commits' updates to
// slurmctld, so more would not help).
const PipelineDepth = 8

// Limits of a BulkError's text.
const (
	bulkShownErrors = 3   // Slurm errors quoted
	bulkShownNames  = 5   // object names listed
	bulkErrText     = 300 // bytes of one quoted error
)

// BulkError is a bulk request that Slurm refused: nothing of it was
// written. Its message names the operation, how many objects the request
// had, the first Slurm errors with their count, and the objects they
// mention, and stays a few hundred bytes however large the batch.
// errors.Is and errors.As see the *SlurmError (ErrNotFound, ...).
type BulkError struct {
	// Op is what was being done: "set associations".
	Op string
	// Objects is how many objects the request had.
	Objects int
	// Failed names the objects Slurm's errors mention (may be empty).
	Failed []string
	// Err is the request's error (a *SlurmError).
	Err error
	// NErrors counts the entries of Slurm's errors[].
	NErrors int
}

func (e *BulkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d object(s) in one request): %d Slurm error(s)", e.Op, e.Objects, e.NErrors)
	quoted := quoteErrors([]error{e.Err}, true)
	writeQuoted(&b, quoted, e.NErrors)
	if len(e.Failed) > 0 {
		fmt.Fprintf(&b, " [concerning %s]", listNames(e.Failed, bulkShownNames))
	}
	b.WriteString("; nothing of this request was written")
	return b.String()
}

// Unwrap gives errors.Is and errors.As the request's error.
func (e *BulkError) Unwrap() error { return e.Err }

// Refused reports whether Slurm refused the request for what it holds
// (an error in Slurm's errors[], other than slurmdbd being unreachable or
// the token refused): sending fewer objects may succeed.
func (e *BulkError) Refused() bool {
	var se *SlurmError
	if !errors.As(e.Err, &se) || len(se.Errors) == 0 || errors.Is(se, ErrUnauthorized) {
		return false
	}
	return !se.HasNumber(errnoDBConnection) && se.HTTPStatus != http.StatusServiceUnavailable
}

// Concerning names the objects Slurm's errors mention.
func (e *BulkError) Concerning() []string { return e.Failed }

// PipelineError is a write of objects one request each (deletes of
// accounts and QOS) of which some failed: Failed were not written, the
// others were. Its message stays short however many failed.
type PipelineError struct {
	// Op is what was being done: "delete accounts".
	Op string
	// Objects is how many objects (requests) there were.
	Objects int
	// Failed names the objects whose requests failed, in order.
	Failed []string
	// Errs are their errors (at most the first bulkKeptErrors).
	Errs []error
}

func (e *PipelineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d object(s) not written", e.Op, len(e.Failed), e.Objects)
	writeQuoted(&b, quoteErrors(e.Errs, false), len(e.Failed))
	fmt.Fprintf(&b, " [not written: %s]", listNames(e.Failed, bulkShownNames))
	return b.String()
}

// Unwrap gives errors.Is and errors.As the requests' errors.
func (e *PipelineError) Unwrap() []error { return e.Errs }

// NotWritten names the objects that were not written.
func (e *PipelineError) NotWritten() []string { return e.Failed }

const bulkKeptErrors = 200

// quoteErrors returns the first few distinct error texts, each shortened;
// details are Slurm's errors[] entries (one request) rather than whole
// messages (a pipeline's, which name their object).
func quoteErrors(errs []error, details bool) []string {
	var out []string
	add := func(s string) bool {
		s = clip(s, bulkErrText)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
		return len(out) < bulkShownErrors
	}
	for _, err := range errs {
		var se *SlurmError
		if details && errors.As(err, &se) && len(se.Errors) > 0 {
			for _, d := range se.Errors {
				if !add(fmt.Sprintf("HTTP %d: %s", se.HTTPStatus, d.String())) {
					return out
				}
			}
			continue
		}
		if !add(err.Error()) {
			return out
		}
	}
	return out
}

func writeQuoted(b *strings.Builder, quoted []string, total int) {
	for i, q := range quoted {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(q)
	}
	if n := total - len(quoted); n > 0 && len(quoted) > 0 {
		fmt.Fprintf(b, "; and %d more", n)
	}
}

// bulkError wraps the error of one bulk request for objects (their names,
// as Slurm writes them in its messages). A request the client refused
// before sending (ErrInvalid) and a failure to reach slurmrestd are
// returned as they are, prefixed with op.
func bulkError(op string, names []string, err error) error {
	var se *SlurmError
	if !errors.As(err, &se) {
		return fmt.Errorf("%s (%d object(s)): %w", op, len(names), err)
	}
	return &BulkError{Op: op, Objects: len(names), Err: err, NErrors: max(1, len(se.Errors)), Failed: mentioned(se, names)}
}

// mentioned returns the names that Slurm's error texts mention, in the
// batch's order (at most bulkKeptErrors of them).
func mentioned(se *SlurmError, names []string) []string {
	var texts []string
	for i, d := range se.Errors {
		if i == 20 {
			break // the first errors are the ones quoted
		}
		texts = append(texts, d.Text+" "+d.Description)
	}
	if len(texts) == 0 {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		for _, t := range texts {
			if mentions(t, n) {
				out = append(out, n)
				break
			}
		}
		if len(out) == bulkKeptErrors {
			break
		}
	}
	return out
}

// mentions reports whether text names name as a word (not as part of a
// longer name: "acme" is not mentioned by "acme2").
func mentions(text, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !nameByte(text[start-1])) && (end == len(text) || !nameByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// listNames is "a, b, c and 7 more".
func listNames(names []string, n int) string { return joinNames(names, n, ", ") }

// joinNames joins at most n names with sep, then says how many more.
func joinNames(names []string, n int, sep string) string {
	if len(names) <= n {
		return strings.Join(names, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], sep), len(names)-n)
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// pipeline runs do for each of names on at most PipelineDepth requests
// at once. The objects are independent: an object Slurm refuses does not
// stop the others; the *PipelineError names the objects whose requests
// failed. A failure to get Slurm's answer at all (slurmrestd unreachable,
// a timeout, ctx cancelled) stops the pipeline: no more requests are sent
// and that error is returned (what was sent before stays done).
func (c *Client) pipeline(ctx context.Context, op string, names []string, do func(ctx context.Context, name string) error) error {
	type failure struct {
		i   int
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		fails []failure
		fatal error
		done  int
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, PipelineDepth)
	for i, n := range names {
		sem <- struct{}{}
		mu.Lock()
		stop := fatal != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func(i int, n string) {
			defer wg.Done()
			defer func() { <-sem }()
			err := do(ctx, n)
			mu.Lock()
			defer mu.Unlock()
			var se *SlurmError
			switch {
			case err == nil:
				done++
			case errors.As(err, &se):
				fails = append(fails, failure{i, err})
			case fatal == nil:
				fatal = err
				cancel()
			}
		}(i, n)
	}
	wg.Wait()
	if fatal != nil {
		return fmt.Errorf("%s: stopped after %d of %d: %w", op, done, len(names), fatal)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: stopped after %d of %d: %w", op, done, len(names), err)
	}
	if len(fails) == 0 {
		return nil
	}
	slices.SortFunc(fails, func(a, b failure) int { return a.i - b.i })
	pe := &PipelineError{Op: op, Objects: len(names)}
	for _, f := range fails {
		pe.Failed = append(pe.Failed, names[f.i])
		if len(pe.Errs) < bulkKeptErrors {
			pe.Errs = append(pe.Errs, f.err)
		}
	}
	return pe
}

// DefaultBulkChunk is Options.BulkChunk's default: the most objects one
// bulk write request carries. slurmdbd takes 0.2 to 5 ms per object (a
// user about 4.8 ms: 3,000 users in one request took 14.5 s on the
// testbed, past the 10 s timeout under load), so 250 objects take about
// 1.2 s unloaded and stay well within the default timeout on a loaded
// machine; each further request costs about 43 ms (its commit).
const DefaultBulkChunk = 250

// maxResplit bounds how often a request that timed out is split and sent
// again (its objects that Slurm does not hold yet, in halves).
const maxResplit = 2

// timedOut reports whether err is a request that got no complete answer
// within the client's timeout while ctx is still live: Slurm may or may
// not have committed it.
func timedOut(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)
}

// chunked sends items in requests of at most c.opts.BulkChunk objects,
// one after another (send writes one request). A request that gets no
// complete answer in time is not sent again blindly: left reads back which
// of its objects Slurm does not hold as asked (nil left: the timeout is
// returned), those are sent again in halves, at most maxResplit times,
// and the error says how many were not written. A failed request stops
// the write; the error says how many objects earlier requests wrote (each
// write is idempotent: a rerun sends them again harmlessly).
func chunked[T any](ctx context.Context, c *Client, op string, items []T, send func(context.Context, []T) error, left func(context.Context, []T) ([]T, error)) error {
	size := c.opts.BulkChunk
	if size <= 0 {
		size = DefaultBulkChunk
	}
	for start := 0; start < len(items); start += size {
		part := items[start:min(start+size, len(items))]
		if err := sendPart(ctx, part, send, left, 0); err != nil {
			if start > 0 {
				return fmt.Errorf("%s: %d of %d object(s) written in earlier requests, then: %w", op, start, len(items), err)
			}
			return err
		}
	}
	return nil
}

// sendPart sends one request's objects, and after a timeout what Slurm
// does not hold of them (see chunked).
func sendPart[T any](ctx context.Context, part []T, send func(context.Context, []T) error, left func(context.Context, []T) ([]T, error), depth int) error {
	err := send(ctx, part)
	if !timedOut(ctx, err) || left == nil {
		return err
	}
	rest, rerr := left(ctx, part)
	switch {
	case rerr != nil:
		return fmt.Errorf("%w; and reading back what Slurm wrote failed: %v", err, rerr)
	case len(rest) == 0:
		return nil // committed after all
	case depth >= maxResplit:
		return fmt.Errorf("%w; read back: %d of the request's %d object(s) not written", err, len(rest), len(part))
	}
	half := (len(rest) + 1) / 2
	for _, p := range [][]T{rest[:half], rest[half:]} {
		if len(p) == 0 {
			continue
		}
		if err := sendPart(ctx, p, send, left, depth+1); err != nil {
			return err
		}
	}
	return nil
}
