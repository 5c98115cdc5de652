package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	gojson "github.com/goccy/go-json"
)

// JobsPage is one read of slurmctld's jobs by ListJobsSince.
type JobsPage struct {
	// Jobs are the jobs that match the filter; none when Unchanged.
	Jobs []Job
	// LastUpdate is slurmctld's time of its last job change, as it
	// reported it: the since of the next read. Zero when Unchanged.
	LastUpdate time.Time
	// Unchanged says that no job changed since the time asked for:
	// slurmrestd sent no jobs, and the caller's copy of its last read
	// holds.
	Unchanged bool
	// Bytes is the body's size. Fetch is the time spent waiting for
	// slurmrestd (from the request to the response's headers, and in reads
	// of the body: its work and the transfer), Decode the rest of the read
	// (ours: decoding and filtering, done while the body streams in), of
	// the attempt that succeeded.
	Bytes         int
	Fetch, Decode time.Duration
}

// ListJobsSince reads the jobs slurmctld holds that match f, from one
// request (GET /slurm/{v}/jobs/), as ListJobs does, but decodes the body
// once and as it streams in (ListJobs reads it whole, then decodes it
// twice): only the jobs that match f are kept, so memory follows them,
// not the body.
//
// When since is not zero it asks for the jobs only if one changed after
// since (update_time; pass the LastUpdate of the previous read): slurmctld
// then answers with every job when any job changed, and with none when
// none did (Unchanged), so a quiet cluster costs one small read.
//
// Failures are those of every other call: a *SlurmError for Slurm's
// errors[], an HTTP error status or a body that is not slurmrestd JSON,
// retries for reads.
func (c *Client) ListJobsSince(ctx context.Context, f JobFilter, since time.Time) (JobsPage, error) {
	path, err := c.versioned(ctx, c.slurmPath("jobs/"))
	if err != nil {
		return JobsPage{}, fmt.Errorf("list jobs: %w", err)
	}
	var query url.Values
	if !since.IsZero() {
		query = url.Values{"update_time": {strconv.FormatInt(since.Unix(), 10)}}
	}
	attempts := 1 + c.opts.Retries
	resynced := false
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if werr := c.sleep(ctx, i); werr != nil {
				return JobsPage{}, fmt.Errorf("list jobs: slurmrestd at %s: GET %s: %w (while retrying after: %v)", c.base, path, werr, err)
			}
		}
		var page JobsPage
		var retry bool
		page, retry, err = c.jobsOnce(ctx, path, query, f, since, i+1)
		if err == nil {
			return page, nil
		}
		if !resynced && c.clockSuspect(path, err) { // as in do (clock.go)
			resynced = true
			if c.resyncClock(ctx) {
				i--
				continue
			}
		}
		if !retry {
			break
		}
	}
	return JobsPage{}, fmt.Errorf("list jobs: %w", err)
}

// jobsOnce makes one attempt of ListJobsSince; retry says whether another
// may follow.
func (c *Client) jobsOnce(ctx context.Context, path string, query url.Values, f JobFilter, since time.Time, attempt int) (page JobsPage, retry bool, err error) {
	if err = ctx.Err(); err != nil {
		return page, false, err
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return page, false, fmt.Errorf("GET %s: %w", path, err)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page, false, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	if err := c.auth.apply(req, c.user); err != nil {
		return page, false, err
	}
	c.reads.Add(1)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.log.Debug("request failed", "method", http.MethodGet, "path", path, "attempt", attempt, "duration", time.Since(start), "error", redactURLError(err))
		return page, true, c.transportError(ctx, http.MethodGet, path, err)
	}
	defer resp.Body.Close()
	body := &timedReader{r: resp.Body, waited: time.Since(start)}
	logDone := func() {
		c.log.Debug("request", "method", http.MethodGet, "path", path, "status", resp.StatusCode, "bytes", body.n, "attempt", attempt, "duration", time.Since(start))
	}
	if resp.StatusCode/100 != 2 {
		// Error answers are small: read whole, they read as in every call.
		raw, rerr := io.ReadAll(body)
		logDone()
		if rerr != nil {
			return page, true, c.transportError(ctx, http.MethodGet, path, fmt.Errorf("reading response body (HTTP %d): %w", resp.StatusCode, rerr))
		}
		retry, err := mustFail(decodeResponse(http.MethodGet, path, resp.StatusCode, raw, nil))
		return page, retry, err
	}

	r, derr := decodeJobsStream(body, f)
	logDone()
	switch {
	case body.err != nil:
		return page, true, c.transportError(ctx, http.MethodGet, path, fmt.Errorf("reading response body (HTTP %d): %w", resp.StatusCode, body.err))
	case isTypeError(derr):
		return page, false, fmt.Errorf("GET %s: decode response: %w", path, derr)
	case derr != nil:
		// Not slurmrestd JSON: the start of the body says what it is.
		retry, err := decodeResponse(http.MethodGet, path, resp.StatusCode, body.head, nil)
		if err == nil {
			retry, err = true, fmt.Errorf("GET %s: HTTP %d with a body that is not slurmrestd JSON (%v)", path, resp.StatusCode, derr)
		}
		return page, retry, err
	case checkDataParser(http.MethodGet, path, r.Meta) != nil:
		return page, false, checkDataParser(http.MethodGet, path, r.Meta)
	case len(r.Errors) > 0:
		// Slurm's errors[]: the same *SlurmError as every other call.
		raw, err := json.Marshal(envelope{Errors: r.Errors, Warnings: r.Warnings})
		if err != nil {
			return page, false, err
		}
		retry, err := mustFail(decodeResponse(http.MethodGet, path, resp.StatusCode, raw, nil))
		return page, retry, err
	}
	page.Jobs = r.Jobs
	page.LastUpdate = r.LastUpdate.time()
	page.Unchanged = !since.IsZero() && r.seen == 0 && page.LastUpdate.IsZero()
	page.Bytes, page.Fetch = body.n, body.waited
	page.Decode = time.Since(start) - body.waited
	return page, false, nil
}

// mustFail keeps decodeResponse's verdict on an answer known to be a
// failure (it returns no error only for what it takes as success).
func mustFail(retry bool, err error) (bool, error) {
	if err == nil {
		return false, errors.New("unexpected answer from slurmrestd")
	}
	return retry, err
}

func isTypeError(err error) bool {
	var te *gojson.UnmarshalTypeError
	return errors.As(err, &te)
}

// jobsStream is a GET jobs/ body as decoded by decodeJobsStream.
type jobsStream struct {
	Jobs       []Job // those that match the filter
	seen       int   // all the jobs in the body
	Errors     []wireError
	Warnings   []wireWarning
	LastUpdate *wNoVal
	Meta       *wireMeta
}

// decodeJobsStream decodes a GET jobs/ body in one pass as it is read,
// one job at a time, keeping the jobs that match f.
func decodeJobsStream(r io.Reader, f JobFilter) (jobsStream, error) {
	var out jobsStream
	dec := gojson.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return out, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, err
		}
		key, _ := tok.(string)
		switch key {
		case "jobs":
			if err := expectDelim(dec, '['); err != nil {
				return out, err
			}
			for dec.More() {
				var w wJob
				if err := dec.Decode(&w); err != nil {
					return out, err
				}
				out.seen++
				if j := w.job(); f.match(j) {
					out.Jobs = append(out.Jobs, j)
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return out, err
			}
		case "errors":
			err = dec.Decode(&out.Errors)
		case "warnings":
			err = dec.Decode(&out.Warnings)
		case "last_update":
			err = dec.Decode(&out.LastUpdate)
		case "meta":
			err = dec.Decode(&out.Meta)
		default:
			var skip gojson.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return out, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return out, err
	}
	return out, nil
}

func expectDelim(dec *gojson.Decoder, d gojson.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(gojson.Delim); !ok || got != d {
		return fmt.Errorf("expected %q, got %v", d, tok)
	}
	return nil
}

// timedReader reads a body, counting its bytes, the time spent waiting in
// reads (on slurmrestd and the network) and its first read error (other
// than EOF), and keeping its first bytes for error messages.
type timedReader struct {
	r      io.Reader
	n      int
	waited time.Duration
	err    error
	head   []byte
}

func (t *timedReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := t.r.Read(p)
	t.waited += time.Since(start)
	t.n += n
	if len(t.head) < maxErrBody+1 {
		t.head = append(t.head, p[:min(n, maxErrBody+1-len(t.head))]...)
	}
	if err != nil && !errors.Is(err, io.EOF) && t.err == nil {
		t.err = err
	}
	return n, err
}
