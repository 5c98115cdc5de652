package slurmrest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Supported data_parser versions, preferred first.
const (
	V44 = "v0.0.44"
	V43 = "v0.0.43"
)

// Supported lists the data_parser versions this client speaks, preferred first.
var Supported = []string{V44, V43}

// Options configure a Client. URL and one of JWTKeyFile or Token are required.
type Options struct {
	// URL of slurmrestd, e.g. http://127.0.0.1:6820.
	URL string
	// APIVersion pins the data_parser version (v0.0.44 or v0.0.43); empty
	// negotiates, preferring v0.0.44.
	APIVersion string
	// JWTKeyFile is Slurm's HS256 key (AuthAltParameters=jwt_key=...). When
	// set, the client mints its own short-lived tokens.
	JWTKeyFile string
	// Token is a ready JWT, used when JWTKeyFile is empty. Never logged.
	Token string
	// User is the Slurm user of minted tokens (the sun claim); default root.
	// With a given Token it is sent as X-SLURM-USER-NAME only by As.
	User string
	// Cluster is the Slurm cluster name for slurmdb writes; empty takes the
	// cluster slurmrestd reports at New. When both are known and differ,
	// New fails (ErrInvalid) rather than write to the wrong cluster.
	Cluster string
	// Timeout bounds each HTTP request, body included; default 10s.
	Timeout time.Duration
	// BulkChunk is the most objects one bulk write request carries
	// (users, associations, accounts, QOS); default DefaultBulkChunk. A
	// larger write is several requests, each well within Timeout.
	BulkChunk int
	// ReadTimeout bounds each wait for more of an answer's body once its
	// headers arrived (a server that stalls mid-body fails then, not at
	// Timeout); default the smaller of Timeout and 30s. The wait for the
	// first byte is bounded by Timeout alone: slurmrestd builds a whole
	// answer before it sends any of it.
	ReadTimeout time.Duration
	// MaxBodyBytes bounds the size of one answer, so that memory stays
	// bounded whatever the server sends; default 256 MiB. A larger answer
	// fails with ErrTooLarge (ask for less: a smaller window, a filter).
	MaxBodyBytes int64
	// NoClockCorrection mints tokens from the local clock only. By default,
	// when slurmctld or slurmdbd refuses a minted token (Slurm checks exp
	// without any skew), the client reads slurmctld's time (GET diag) and,
	// if the clocks differ, mints by slurmctld's clock from then on and
	// retries the request once.
	NoClockCorrection bool
	// TokenLifetime of minted tokens; default 10m. Tokens are renewed when
	// less than a third of it is left.
	TokenLifetime time.Duration
	// Retries is how many times a failed read (GET) is retried, with
	// jittered exponential backoff; default 2, negative for none. Writes are
	// never retried.
	Retries int
	// RetryBackoff is the first backoff; default 200ms, doubled each retry.
	RetryBackoff time.Duration
	// Logger receives debug-level request logs (never a token); default
	// discards.
	Logger *slog.Logger
	// HTTPClient to use; default a fresh client with keep-alive.
	HTTPClient *http.Client
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Stats counts the HTTP requests a client (and every Client.As view of it)
// has sent: Reads are GETs, Writes everything else. Retries count as
// requests; the version negotiation at New counts as reads.
type Stats struct {
	Reads  int64
	Writes int64
}

// Client is a slurmrestd client bound to one data_parser version. It is safe
// for concurrent use.
type Client struct {
	*shared
	user string // "" = the configured user
}

type shared struct {
	opts Options
	base *url.URL
	http *http.Client
	log  *slog.Logger
	auth *authenticator

	// negotiating is held while the API version is negotiated, so that
	// concurrent first requests negotiate once; a caller waiting behind a
	// slow negotiation gives up with its context.
	negotiating chan struct{}
	stateMu     sync.Mutex
	negotiated  bool   // version (and cluster) come from the server
	version     string // the negotiated (or pinned, or being tried) version
	cluster     string // the configured cluster, then the one served

	reads, writes atomic.Int64
	rngMu         sync.Mutex
	rng           *rand.Rand

	clockMu    sync.Mutex
	clockProbe time.Time // when slurmctld's clock was last read
}

// DefaultMaxBodyBytes is Options.MaxBodyBytes's default.
const DefaultMaxBodyBytes = 256 << 20

// New builds a client and negotiates the API version with the server
// (one or two GET pings; more only when neither version is offered): Open
// and Negotiate, for the callers that want to know at once.
func New(ctx context.Context, o Options) (*Client, error) {
	c, err := Open(o)
	if err != nil {
		return nil, err
	}
	if err := c.Negotiate(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Open builds a client without connecting: it checks the options and
// reads the JWT key. The API version is negotiated by the first request
// (Negotiate), and again by the next one after a request found no server
// (slurmrestd restarted, maybe upgraded), so that a client made while
// slurmrestd is down works once it is back.
func Open(o Options) (*Client, error) {
	if o.URL == "" {
		return nil, fmt.Errorf("slurmrest: %w: no slurmrestd URL", ErrInvalid)
	}
	u, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("slurmrest: %w: %q is not an http(s) URL", ErrInvalid, o.URL)
	}
	if o.APIVersion != "" && o.APIVersion != V44 && o.APIVersion != V43 {
		return nil, fmt.Errorf("slurmrest: %w: API version %q; gpubridge speaks %s", ErrUnsupportedVersion, o.APIVersion, strings.Join(Supported, " or "))
	}
	if o.User == "" {
		o.User = "root"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = min(o.Timeout, 30*time.Second)
	}
	if o.BulkChunk <= 0 {
		o.BulkChunk = DefaultBulkChunk
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = 10 * time.Minute
	}
	if o.Retries == 0 {
		o.Retries = 2
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 200 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	auth, err := newAuthenticator(o)
	if err != nil {
		return nil, err
	}
	s := &shared{
		opts:        o,
		base:        u,
		http:        hc,
		log:         o.Logger.With("component", "slurmrest"),
		auth:        auth,
		negotiating: make(chan struct{}, 1),
		version:     o.APIVersion,
		cluster:     o.Cluster,
		rng:         rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15)),
	}
	return &Client{shared: s}, nil
}

// As returns a view of the client whose calls are made on behalf of user
// (a token minted with sun=user; with a given token, X-SLURM-USER-NAME).
// The caller names the user explicitly; never pass a name taken from
// request input without authorising it first. Stats are shared.
func (c *Client) As(user string) *Client { return &Client{shared: c.shared, user: user} }

// User is the Slurm user this view's calls are made as.
func (c *Client) User() string {
	if c.user != "" {
		return c.user
	}
	return c.opts.User
}

// APIVersion is the negotiated (or pinned) data_parser version; "" while
// none is negotiated.
func (c *Client) APIVersion() string {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.version
}

// URL is slurmrestd's base URL.
func (c *Client) URL() string { return c.base.String() }

// Cluster is the cluster name used for slurmdb writes: the configured
// one, else the one slurmrestd serves once a request negotiated (see
// ClusterName).
func (c *Client) Cluster() string {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.cluster
}

// ClusterName is the cluster name used for slurmdb writes, negotiating
// first when no request did yet.
func (c *Client) ClusterName(ctx context.Context) (string, error) {
	if err := c.Negotiate(ctx); err != nil {
		return "", err
	}
	return c.Cluster(), nil
}

// Stats returns the requests sent so far by this client and its As views.
func (c *Client) Stats() Stats { return Stats{Reads: c.reads.Load(), Writes: c.writes.Load()} }

// versionSlot stands for the API version in a path until do sends it.
const versionSlot = "{v}"

// slurmPath and dbPath build /slurm/{v}/... and /slurmdb/{v}/... paths;
// do puts the negotiated version in (negotiating first if need be).
func (c *Client) slurmPath(p string, a ...any) string {
	return "/slurm/" + versionSlot + "/" + fmt.Sprintf(p, a...)
}
func (c *Client) dbPath(p string, a ...any) string {
	return "/slurmdb/" + versionSlot + "/" + fmt.Sprintf(p, a...)
}

// envelope is what every slurmrestd response carries besides its payload.
type envelope struct {
	Meta     *wireMeta     `json:"meta,omitempty"`
	Errors   []wireError   `json:"errors"`
	Warnings []wireWarning `json:"warnings"`
}

type wireError struct {
	Description string `json:"description"`
	Number      int    `json:"error_number"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

type wireWarning struct {
	Description string `json:"description"`
	Source      string `json:"source"`
}

type wireMeta struct {
	Plugin struct {
		Type              string `json:"type"`
		Name              string `json:"name"`
		DataParser        string `json:"data_parser"`
		AccountingStorage string `json:"accounting_storage"`
	} `json:"plugin"`
	Client struct {
		Source string `json:"source"`
		User   string `json:"user"`
		Group  string `json:"group"`
	} `json:"client"`
	Slurm struct {
		Version struct {
			Major string `json:"major"`
			Micro string `json:"micro"`
			Minor string `json:"minor"`
		} `json:"version"`
		Release string `json:"release"`
		Cluster string `json:"cluster"`
	} `json:"slurm"`
}

// maxErrBody bounds how much of a non-JSON body goes into an error.
const maxErrBody = 256

// do sends a request, retrying reads, and decodes a successful response
// into out (nil to discard it). path is escaped (segments built with
// url.PathEscape); query may be nil; body, when not nil, is JSON-encoded.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	path, err := c.versioned(ctx, path)
	if err != nil {
		return err
	}
	err = c.send(ctx, method, path, query, body, out)
	if err != nil && noServer(ctx, err) {
		c.forget() // the next request negotiates again
	}
	return err
}

// versioned puts the negotiated API version in a path built by slurmPath
// or dbPath, negotiating first when no request did yet; other paths are
// returned as they are.
func (c *Client) versioned(ctx context.Context, path string) (string, error) {
	for _, root := range []string{"/slurm/", "/slurmdb/"} {
		if p, ok := strings.CutPrefix(path, root+versionSlot+"/"); ok {
			if err := c.Negotiate(ctx); err != nil {
				return "", err
			}
			return root + c.APIVersion() + "/" + p, nil
		}
	}
	return path, nil
}

// send is do for a path with its version: the request, its retries (reads
// only) and the one retry after a clock correction.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		payload = b
	}
	attempts := 1
	if method == http.MethodGet {
		attempts += c.opts.Retries
	}
	var err error
	resynced := false
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if werr := c.sleep(ctx, i); werr != nil {
				return fmt.Errorf("slurmrestd at %s: %s %s: %w (while retrying after: %v)", c.base, method, path, werr, err)
			}
		}
		var retry bool
		retry, err = c.once(ctx, method, path, query, payload, out, i+1)
		if err != nil && !resynced && c.clockSuspect(path, err) {
			// A refused token did nothing in Slurm, so one more try is
			// safe for writes too; it does not use up a read retry.
			resynced = true
			if c.resyncClock(ctx) {
				i--
				continue
			}
		}
		if err == nil || !retry {
			return err
		}
	}
	return err
}

// sleep waits before retry n (1-based): an exponential backoff d, jittered
// to a random time in [d/2, d].
func (c *Client) sleep(ctx context.Context, n int) error {
	d := c.opts.RetryBackoff << (n - 1)
	c.rngMu.Lock()
	j := time.Duration(c.rng.Int64N(int64(d)/2 + 1))
	c.rngMu.Unlock()
	t := time.NewTimer(d/2 + j)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// once makes one attempt; retry says whether a read may try again.
func (c *Client) once(ctx context.Context, method, path string, query url.Values, payload []byte, out any, attempt int) (retry bool, err error) {
	if err = ctx.Err(); err != nil {
		return false, err
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	var rdr io.Reader
	if payload != nil {
		rdr = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, u.String(), rdr)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if err := c.auth.apply(req, c.user); err != nil {
		return false, err
	}
	if method == http.MethodGet {
		c.reads.Add(1)
	} else {
		c.writes.Add(1)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.log.Debug("request failed", "method", method, "path", path, "attempt", attempt, "duration", time.Since(start), "error", redactURLError(err))
		return true, c.transportError(ctx, method, path, err)
	}
	defer resp.Body.Close()
	raw, rerr := c.readBody(resp, cancel)
	c.log.Debug("request", "method", method, "path", path, "status", resp.StatusCode, "bytes", len(raw), "attempt", attempt, "duration", time.Since(start))
	if errors.Is(rerr, ErrTooLarge) {
		return false, fmt.Errorf("slurmrestd at %s: %s %s: %w", c.base, method, path, rerr)
	}
	if errors.Is(rerr, errStalled) {
		return true, fmt.Errorf("slurmrestd at %s: %s %s: %w", c.base, method, path, rerr)
	}
	if rerr != nil {
		return true, c.transportError(ctx, method, path, fmt.Errorf("reading response body (HTTP %d): %w", resp.StatusCode, rerr))
	}
	return decodeResponse(method, path, resp.StatusCode, raw, out)
}

// errStalled marks a body read that waited longer than ReadTimeout.
var errStalled = errors.New("stalled")

// readBody reads at most MaxBodyBytes of the body, failing when the server
// sends nothing for ReadTimeout (cancel ends the request then).
func (c *Client) readBody(resp *http.Response, cancel context.CancelFunc) ([]byte, error) {
	limit := c.opts.MaxBodyBytes
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: the answer is %d bytes, more than the %d this client accepts (slurmrest.maxBodyBytes)", ErrTooLarge, resp.ContentLength, limit)
	}
	var r io.Reader = io.LimitReader(resp.Body, limit+1)
	var stalled atomic.Bool
	if c.opts.ReadTimeout < c.opts.Timeout { // else the request's timeout comes first
		watch := time.AfterFunc(c.opts.ReadTimeout, func() {
			stalled.Store(true)
			cancel()
		})
		defer watch.Stop()
		r = &watchedReader{r: r, t: watch, d: c.opts.ReadTimeout}
	}
	raw, err := io.ReadAll(r)
	if stalled.Load() {
		return raw, fmt.Errorf("%w: no bytes of the answer for %s after %d bytes (HTTP %d)", errStalled, c.opts.ReadTimeout, len(raw), resp.StatusCode)
	}
	if err == nil && int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: the answer is larger than the %d bytes this client accepts (slurmrest.maxBodyBytes)", ErrTooLarge, limit)
	}
	return raw, err
}

// watchedReader pushes the stall timer back after every read that got bytes.
type watchedReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.t.Reset(w.d)
	}
	return n, err
}

// decodeResponse turns a status and body into out or an error.
func decodeResponse(method, path string, status int, raw []byte, out any) (retry bool, err error) {
	if status == http.StatusNotModified {
		// slurmdbd answers a write that changes nothing (an account that
		// exists, a QOS set to what it is) with 304 and an empty body.
		return false, nil
	}
	var env envelope
	jerr := json.Unmarshal(raw, &env)
	if jerr == nil {
		if err := checkDataParser(method, path, env.Meta); err != nil {
			return false, err
		}
	}
	serr := &SlurmError{Method: method, Path: path, HTTPStatus: status}
	for _, e := range env.Errors {
		serr.Errors = append(serr.Errors, ErrorDetail{Number: e.Number, Text: e.Error, Source: e.Source, Description: e.Description})
	}
	if jerr != nil {
		serr.Body = shorten(raw)
		if status >= 200 && status < 300 {
			// A 2xx with an undecodable body: truncated or not slurmrestd.
			return true, fmt.Errorf("%s %s: HTTP %d with a body that is not slurmrestd JSON (%v): %w", method, path, status, jerr, serr)
		}
		return retryable(status, true), serr
	}
	if status < 200 || status >= 300 || len(serr.Errors) > 0 {
		return retryable(status, len(serr.Errors) == 0), serr
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return false, fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return false, nil
}

// checkDataParser refuses an answer whose meta names another data_parser
// than the one in the request's path: its fields may mean something else
// (a proxy in between, a server restarted with other plugins).
func checkDataParser(method, path string, m *wireMeta) error {
	if m == nil || m.Plugin.DataParser == "" {
		return nil
	}
	v := versionInPath.FindStringSubmatch(path)
	if v == nil {
		return nil
	}
	got := strings.TrimPrefix(m.Plugin.DataParser, "data_parser/")
	if got == v[1] {
		return nil
	}
	return fmt.Errorf("%s %s: slurmrestd answered with data_parser %s, not the %s that was asked for; nothing of the answer was used: %w",
		method, path, got, v[1], ErrUnsupportedVersion)
}

// retryable: statuses worth another read. A 5xx that carries Slurm's own
// errors[] is Slurm's answer, not a transient failure, except 503.
func retryable(status int, noSlurmErrors bool) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return status >= 500 && noSlurmErrors
}

func shorten(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > maxErrBody {
		s = s[:maxErrBody] + "..."
	}
	return s
}

// transportError explains a failed exchange, naming the server.
func (c *Client) transportError(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("slurmrestd at %s: %s %s: %w", c.base, method, path, ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("slurmrestd at %s: %s %s: no complete answer within %s: %w", c.base, method, path, c.opts.Timeout, err)
	}
	return fmt.Errorf("slurmrestd at %s: %s %s: %w", c.base, method, path, redactURLError(err))
}

// redactURLError drops the query string from a *url.Error (queries carry
// no secrets today, but keep logs short and safe).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery = ""
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}
