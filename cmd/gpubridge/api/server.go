package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/gpubridge/gpubridge/accounting/meter"
	"github.com/gpubridge/gpubridge/bridge/reserve"
	"github.com/gpubridge/gpubridge/cmd/gpubridge/api/token"
)

// TokenStore finds tokens by hash and records their use
// (cmd/gpubridge/api/tokenstore).
type TokenStore interface {
	Lookup(ctx context.Context, h token.Hash) (token.Token, error)
	Touch(ctx context.Context, id int64, at time.Time) error
}

// ErrTokenNotFound is what TokenStore.Lookup's "no such token" must match
// (errors.Is); Options.NotFound says which error that is.
var ErrTokenNotFound = errors.New("no such token")

// Bookings are the booking use cases that the CLI runs too
// (cmd/gpubridge/app.BookingCases, on a bridge/reserve.Service): the
// booking routes call nothing else.
type Bookings interface {
	BookingReader
	Get(ctx context.Context, id int64) (reserve.Booking, error)
	Add(ctx context.Context, actor string, r reserve.Request) (reserve.Booking, error)
	Modify(ctx context.Context, actor string, id int64, c reserve.Change) (before, after reserve.Booking, err error)
	Cancel(ctx context.Context, actor string, id int64) (reserve.Booking, error)
	FindSlots(ctx context.Context, q reserve.SlotQuery) ([]reserve.Slot, error)
	Policy(ctx context.Context, tenant string) (reserve.Policy, error)
}

// Options are what the API serves from.
type Options struct {
	Tokens TokenStore
	// TokenNotFound is the error Tokens.Lookup returns for an unknown hash
	// (tokenstore.ErrNotFound).
	TokenNotFound error
	Live          *Live
	Usage         UsageReader
	// Bookings makes changes (admission reads the cluster afresh);
	// BookingReads serves the read-only booking routes (it may read the
	// cluster through an InventoryCache). Either may be nil: the booking
	// routes then answer 503.
	Bookings     Bookings
	BookingReads Bookings
	// ReservationName names a booking's Slurm reservation.
	ReservationName func(id int64) string
	Metrics         *Metrics
	Logger          *slog.Logger
	Now             func() time.Time
	// AuthFailures per minute and AuthBurst bound failed
	// authentications per source address; past them a token from it that
	// did not authenticate lately is refused with 429 until the bucket
	// refills (one that did still works: a valid token never pays for
	// another's failures behind the same address).
	AuthFailures float64
	AuthBurst    int
	// TokenRate (requests per second) and TokenBurst bound one token's
	// requests, AddressRate and AddressBurst one source address's: past
	// them 429 (defaults 20/40 and 100/200).
	// Loopback addresses have no request rate of their own: behind a
	// proxy on the same host every client would share one.
	TokenRate    float64
	TokenBurst   int
	AddressRate  float64
	AddressBurst int
	// UsageTTL is how long a period's priced usage of one tenant is
	// reused (default Live's interval).
	UsageTTL time.Duration
	// SecureCookies marks the status page's cookie Secure (TLS).
	SecureCookies bool
	// JWTKey reads the key of the Slurm JWTs people sign in with (nil:
	// only API tokens); Members lists the tenants with their users and
	// admins (a person's tenants).
	JWTKey  JWTKey
	Members TenantLister
	// JWKS reads the JWKS file whose RSA keys verify RS256 Slurm JWTs
	// (nil: none; jwks.go).
	JWKS JWKSFile
	// OIDC is the site's OpenID Connect provider (nil: none; oidc.go).
	OIDC *OIDC
	// Sessions keeps the portal's sessions (default MemorySessions of
	// 10,000).
	Sessions SessionStore
	// Pricing is the rate card's booked price in force (nil or a nil
	// Coster: the portal shows no price); CancelFreeBefore the notice
	// that makes a cancellation free (config bookings.cancellation).
	Pricing          func(ctx context.Context) (reserve.Coster, error)
	CancelFreeBefore time.Duration
	// TokenCases manage a tenant's tokens for its admins (nil: the
	// token routes answer 503).
	TokenCases TokenCases
	// MemberCases add and remove a tenant's members for its admins (nil:
	// the members routes answer 503; members.go).
	MemberCases MemberCases
	// Health are the node health use cases (health_routes.go) and Exports
	// the chargeback export (exports.go); nil: their routes answer 503.
	Health  HealthCases
	Exports Exports
}

// Server is the tenant API and status page.
type Server struct {
	o Options
	// failures counts failed authentications per address; perToken and
	// perAddr bound the requests of a token and of an address.
	failures *keyed
	// recent holds the tokens that authenticated lately; blockedLookups
	// bounds, for all addresses past their failure limit together, the
	// lookups of tokens not among them (the store is never hammered
	// through such addresses, and a valid token still gets through).
	recent         *ttlCache[token.Hash, struct{}]
	blockedLookups *rate.Limiter
	perToken       *keyed
	perAddr        *keyed
	usage          *ttlCache[usageKey, usageView]
	pageCache      *pageCaches
	tokens         *ttlCache[token.Hash, token.Token]
	// reads caches the read-only booking routes' answers by their parsed
	// request; writes counts the booking changes made through this server
	// (part of the key, so that a change is seen at once here).
	reads  *answers
	writes atomic.Int64
	// heavy bounds the answers computed at once (availability, slots,
	// booking lists); unknown the refreshes for tenants not found.
	heavy   chan struct{}
	unknown *unknownTenants
	touched sync.Map // token id -> time.Time of the last recorded use
	// memberCache holds the tenants' members by user; keys the JWT key.
	memberCache *ttlCache[struct{}, map[string][]Membership]
	keys        keyCache
	jwksKeys    jwksCache
	oidc        *oidcClient
	mux         *http.ServeMux
	handler     http.Handler // mux, timed (timing.go)
	streams     streams      // the open event streams (events.go)
}

// recentTTL is how long a token that authenticated passes an address's
// failure limit without spending the lookups of blocked addresses.
const recentTTL = 24 * time.Hour

// unknownTTL is how long a tenant that a fresh snapshot did not hold is
// answered 404 without looking again.
const unknownTTL = 10 * time.Second

// tokenTTL is how long a token found stays valid without a new lookup: a
// deleted token is refused within it.
const tokenTTL = time.Second

// readTTL bounds the age of a cached availability, slot search or booking
// list (changes through this server are seen at once).
const readTTL = 5 * time.Second

// New makes the server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.AuthFailures <= 0 {
		o.AuthFailures = 10
	}
	if o.AuthBurst <= 0 {
		o.AuthBurst = 20
	}
	if o.UsageTTL <= 0 {
		o.UsageTTL = DefaultInterval
		if o.Live != nil {
			o.UsageTTL = o.Live.interval()
		}
	}
	o.TokenRate, o.TokenBurst = cmpOr(o.TokenRate, 20), cmpOr(o.TokenBurst, 40)
	o.AddressRate, o.AddressBurst = cmpOr(o.AddressRate, 100), cmpOr(o.AddressBurst, 200)
	s := &Server{o: o, failures: newKeyed(rate.Limit(o.AuthFailures/60), o.AuthBurst), blockedLookups: rate.NewLimiter(50, 100),
		perToken: newKeyed(rate.Limit(o.TokenRate), o.TokenBurst), perAddr: newKeyed(rate.Limit(o.AddressRate), o.AddressBurst),
		heavy: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)), unknown: newUnknownTenants(unknownTTL)}
	s.recent = newTTLCache[token.Hash, struct{}](recentTTL, s.now)
	s.usage = newTTLCache[usageKey, usageView](o.UsageTTL, s.now).refreshAhead()
	s.pageCache = newPageCaches(o.UsageTTL, s.now) // portal_pages.go
	s.tokens = newTTLCache[token.Hash, token.Token](tokenTTL, s.now)
	s.reads = newAnswers(readTTL, cacheBytes, s.now)
	s.memberCache = newTTLCache[struct{}, map[string][]Membership](membersTTL, s.now)
	if s.o.Sessions == nil {
		m := NewMemorySessions(10_000)
		m.Now = s.now
		s.o.Sessions = m
	}
	if o.OIDC != nil {
		s.oidc = &oidcClient{cfg: *o.OIDC}
	}
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		s.mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
	s.pageRoutes(s.mux)
	s.oidcRoutes(s.mux)
	s.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.o.Metrics.observe("unknown", r.Method, http.StatusNotFound, 0)
		writeError(w, http.StatusNotFound, errNotFound)
	})
	s.handler = timed(s.mux)
	return s
}

func cmpOr[T int | float64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) now() time.Time {
	if s.o.Now != nil {
		return s.o.Now().UTC()
	}
	return time.Now().UTC()
}

// route is one API route: what the OpenAPI file describes.
type route struct {
	Method string
	Path   string // the OpenAPI path: /api/v1/tenants/{tenant}
	// Scope is the scope the route needs. When ObjectFirst is set, the
	// handler checks it (req.need) after finding the object, so that
	// another tenant's object is 404 whatever the token's scope.
	Scope       token.Scope
	ObjectFirst bool
	// Params are the query parameters the route takes (tenant= and
	// account= are taken by every route: isolation checks them); any
	// other is refused with 400.
	Params []string
	Handle func(*req) (int, any, error)
}

// req is one authenticated request.
type req struct {
	w      http.ResponseWriter
	r      *http.Request
	tok    token.Token
	tenant string // the tenant the path names (empty on routes without one)
	snap   *Snapshot
}

// need refuses the request unless its token has scope.
func (q *req) need(scope token.Scope) error {
	if !q.tok.Scope.Allows(scope) {
		return errForbidden
	}
	return nil
}

// API errors with fixed answers.
var (
	errNotFound     = errors.New("not found")
	errForbidden    = errors.New("the token's scope does not allow this")
	errUnauthorized = errors.New("a valid token is required (Authorization: Bearer gpb_...)")
	errRateLimited  = errors.New("too many failed authentications from this address; wait and try again")
	errTooMany      = errors.New("too many requests from this token or address; wait and try again")
	errUnavailable  = errors.New("not available now; try again")
)

// httpError carries a status and a body for the client.
type httpError struct {
	code int
	body errorBody
}

func (e *httpError) Error() string { return e.body.Error }

type errorBody struct {
	Error    string           `json:"error"`
	Problems reserve.Problems `json:"problems,omitempty"`
	Refusal  *reserve.Refusal `json:"refusal,omitempty"`
}

func badRequest(ps reserve.Problems) error {
	return &httpError{http.StatusBadRequest, errorBody{Error: ps.Error(), Problems: ps}}
}

// clientIP is the request's source address (never a header a client sets).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// authenticate finds the request's token (the Authorization header): an
// API token, or a person's Slurm JWT (authenticatePerson). It counts failures per source address: past
// their limit a failure is answered 429 (Retry-After), not 401, but a
// valid token from that address still works, so one bad client behind a
// login node or a NAT does not lock out the others: one that
// authenticated lately always, any other within the lookups that all
// blocked addresses share (50 a second). (Tokens hold 256 random bits:
// the limit is not what stops guessing; it bounds the store's work.)
func (s *Server) authenticate(r *http.Request) (token.Token, int, error) {
	ip := clientIP(r)
	raw := ""
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, rest, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return s.failed(ip, "malformed")
		}
		raw = strings.TrimSpace(rest)
	}
	if raw == "" {
		s.o.Metrics.authFailures.WithLabelValues("missing").Inc()
		return token.Token{}, http.StatusUnauthorized, errUnauthorized
	}
	if looksLikeJWT(raw) {
		if s.failures.blocked(ip, s.now()) && !s.blockedLookups.AllowN(s.now(), 1) {
			s.o.Metrics.rateLimited.Inc()
			return token.Token{}, http.StatusTooManyRequests, errRateLimited
		}
		return s.authenticatePerson(r.Context(), ip, raw)
	}
	h, err := token.HashOf(raw)
	if err != nil {
		return s.failed(ip, "malformed")
	}
	if s.failures.blocked(ip, s.now()) && !s.isRecent(h) && !s.blockedLookups.AllowN(s.now(), 1) {
		s.o.Metrics.rateLimited.Inc()
		return token.Token{}, http.StatusTooManyRequests, errRateLimited
	}
	t, err := s.tokens.get(h, func() (token.Token, time.Duration, error) {
		t, err := s.o.Tokens.Lookup(r.Context(), h)
		return t, 0, err
	})
	switch {
	case err != nil && (errors.Is(err, s.o.TokenNotFound) || errors.Is(err, ErrTokenNotFound)):
		return s.failed(ip, "unknown")
	case err != nil:
		s.o.Logger.Warn("token lookup failed", "err", err)
		return token.Token{}, http.StatusServiceUnavailable, errUnavailable
	case t.Expired(s.now()):
		return s.failed(ip, "expired")
	}
	_, _ = s.recent.get(h, func() (struct{}, time.Duration, error) { return struct{}{}, 0, nil })
	s.touch(t)
	t.Hash = h
	return t, 0, nil
}

// isRecent says whether the token of hash h authenticated lately.
func (s *Server) isRecent(h token.Hash) bool {
	_, err := s.recent.get(h, func() (struct{}, time.Duration, error) { return struct{}{}, 0, errNotFound })
	return err == nil
}

// failed counts a failed authentication from ip: 401, or 429 once ip is
// past its limit.
func (s *Server) failed(ip, reason string) (token.Token, int, error) {
	s.o.Metrics.authFailures.WithLabelValues(reason).Inc()
	if !s.failures.allow(ip, s.now()) {
		s.o.Metrics.rateLimited.Inc()
		return token.Token{}, http.StatusTooManyRequests, errRateLimited
	}
	return token.Token{}, http.StatusUnauthorized, errUnauthorized
}

// touchEvery bounds how often a token's last use is written.
const touchEvery = time.Minute

// touch records the token's use, at most once per touchEvery per token and
// outside the request (a slow write never delays an answer).
func (s *Server) touch(t token.Token) {
	if t.Person != "" {
		return // a person's JWT is not a stored token
	}
	now := s.now()
	if now.Sub(t.LastUsedAt) < touchEvery {
		return
	}
	if v, ok := s.touched.Load(t.ID); ok && now.Sub(v.(time.Time)) < touchEvery {
		return
	}
	s.touched.Store(t.ID, now)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.o.Tokens.Touch(ctx, t.ID, now); err != nil {
			s.o.Logger.Warn("record a token's use", "token", t.Key(), "err", err)
		}
	}()
}

// wrap authenticates, isolates (a tenant that is not the token's is 404),
// checks the scope and answers JSON.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		code := s.serve(w, r, rt)
		s.o.Metrics.observe(rt.Path, r.Method, code, time.Since(start))
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt route) int {
	if ip := clientIP(r); !isLoopback(ip) && !s.perAddr.allow(ip, s.now()) {
		return s.tooMany(w)
	}
	tok, code, err := s.authenticate(r)
	if err != nil {
		if code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gpubridge"`)
		}
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "60")
		}
		writeError(w, code, err)
		return code
	}
	if !s.perToken.allow(rateKey(tok), s.now()) {
		return s.tooMany(w)
	}
	q := &req{w: w, r: r, tok: actingFor(tok, r), tenant: r.PathValue("tenant")}
	var arrived time.Time
	if s.o.Live != nil {
		arrived = s.o.Live.now()
	}
	if code := s.isolate(w, r, rt, q); code != 0 {
		return code
	}
	if err := checkParams(r, rt.Params); err != nil {
		return s.writeErr(w, q, err)
	}
	if s.o.Live != nil {
		snap, err := s.o.Live.Get(r.Context())
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, errUnavailable)
			return http.StatusServiceUnavailable
		}
		q.snap = snap
	}
	if q.tenant != "" && !s.findTenant(q, arrived) {
		writeError(w, http.StatusNotFound, errNotFound)
		return http.StatusNotFound
	}
	if !rt.ObjectFirst {
		if err := q.need(rt.Scope); err != nil {
			writeError(w, http.StatusForbidden, err)
			return http.StatusForbidden
		}
	}
	code, body, err := rt.Handle(q)
	if err != nil {
		return s.writeErr(w, q, err)
	}
	return s.answer(w, q, code, body)
}

// rateKey is what a token's request rate is kept under: its id, or a
// person's user name.
func rateKey(t token.Token) string {
	if t.Person != "" {
		return "user " + t.Person
	}
	return strconv.FormatInt(t.ID, 10)
}

// actingFor picks the tenant a person's request acts for: the path's
// tenant, else the tenant= or account= query's, when the person belongs
// to it (else the person's first tenant, which isolation then holds to).
func actingFor(t token.Token, r *http.Request) token.Token {
	name := r.PathValue("tenant")
	for _, k := range []string{"tenant", "account"} {
		if name == "" {
			name = r.URL.Query().Get(k)
		}
	}
	return forTenant(t, name)
}

// tooMany answers a request past its token's or address's rate.
func (s *Server) tooMany(w http.ResponseWriter) int {
	s.o.Metrics.rateLimited.Inc()
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusTooManyRequests, errTooMany)
	return http.StatusTooManyRequests
}

// isolate answers 404 (and returns it) when the path or the query names a
// tenant that is not the token's, exactly like one that does not exist;
// it sets q.tenant to the tenant the request is about.
func (s *Server) isolate(w http.ResponseWriter, r *http.Request, rt route, q *req) int {
	own := q.tok.Tenant
	if strings.Contains(rt.Path, "{tenant}") {
		if q.tok.Scope != token.Admin && q.tenant != own {
			writeError(w, http.StatusNotFound, errNotFound)
			return http.StatusNotFound
		}
		own = q.tenant
	}
	for _, k := range []string{"tenant", "account"} {
		if vs, ok := r.URL.Query()[k]; ok && (own != "" || q.tok.Scope != token.Admin) {
			for _, v := range vs {
				if v != own {
					writeError(w, http.StatusNotFound, errNotFound)
					return http.StatusNotFound
				}
			}
		}
	}
	return 0
}

// checkParams refuses query parameters the route does not take, and any
// taken more than once.
func checkParams(r *http.Request, known []string) error {
	var ps reserve.Problems
	q := r.URL.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		switch {
		case k == "tenant" || k == "account":
		case !slices.Contains(known, k):
			msg := "unknown parameter; this route takes none"
			if len(known) > 0 {
				msg = "unknown parameter; this route takes " + strings.Join(known, ", ")
			}
			ps = append(ps, reserve.Problem{Field: k, Msg: msg})
		case len(q[k]) > 1:
			ps = append(ps, reserve.Problem{Field: k, Msg: "given more than once; give it once"})
		}
	}
	if len(ps) > 0 {
		return badRequest(ps)
	}
	return nil
}

// findTenant finds q.tenant in q.snap. A tenant added since the
// snapshot's reads began is looked for in a new snapshot (concurrent
// requests share one read), but only when it can be new: an admin token,
// a person (whose tenants were just read from the tenant list), or a
// tenant token made after the snapshot began (a token made before it
// whose tenant the snapshot lacks outlived its tenant); and a name not
// found is not looked for again within unknownTTL.
func (s *Server) findTenant(q *req, arrived time.Time) bool {
	if _, ok := q.snap.Tenant(q.tenant); ok {
		return true
	}
	if s.o.Live == nil || !q.snap.begun.Before(arrived) {
		return false
	}
	if q.tok.Scope != token.Admin && q.tok.Person == "" && !q.tok.CreatedAt.After(q.snap.begun) {
		return false
	}
	if !s.unknown.mayRefresh(q.tenant, s.now()) {
		return false
	}
	snap, err := s.o.Live.RefreshNew(q.r.Context())
	if err != nil {
		return false
	}
	q.snap = snap
	if _, ok := snap.Tenant(q.tenant); ok {
		return true
	}
	s.unknown.missed(q.tenant, s.now())
	return false
}

// answer writes body as JSON (a rawJSON as it is), refusing one bigger
// than maxAnswerBytes with 400 (to a tenant's token).
func (s *Server) answer(w http.ResponseWriter, q *req, code int, body any) int {
	if _, done := body.(written); done { // the handler answered (a download)
		return code
	}
	b, ok := body.(rawJSON)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return s.writeErr(w, q, err)
		}
	}
	if len(b) > maxAnswerBytes && q.tok.Scope != token.Admin { // an admin's lists grow with the site only
		return s.writeErr(w, q, tooBig(len(b)))
	}
	writeBytes(w, code, b)
	return code
}

// rawJSON is an answer already encoded (from the read cache).
type rawJSON []byte

// tooBig refuses an answer of n bytes.
func tooBig(n int) error {
	return badRequest(reserve.Problems{{Field: "query", Msg: fmt.Sprintf("the answer would be %d bytes, over the limit of %d; ask for less (a shorter from..to, a longer step, fewer types)", n, maxAnswerBytes)}})
}

// writeErr answers an error from a handler. A refusal shown to a tenant's
// token is redacted like its availability: the names of foreign
// reservations and maintenance reasons are the site's.
func (s *Server) writeErr(w http.ResponseWriter, q *req, err error) int {
	r := q.r
	var he *httpError
	var ps reserve.Problems
	var ref *reserve.Refusal
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		writeJSON(w, he.code, he.body)
		return he.code
	case errors.Is(err, errNotFound), errors.Is(err, reserve.ErrNotFound):
		writeError(w, http.StatusNotFound, errNotFound)
		return http.StatusNotFound
	case errors.Is(err, errForbidden):
		writeError(w, http.StatusForbidden, errForbidden)
		return http.StatusForbidden
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, errors.New("request body too large"))
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &ref):
		if q.tok.Scope != token.Admin {
			ref = redactRefusal(ref)
		}
		writeJSON(w, http.StatusConflict, errorBody{Error: ref.Error(), Refusal: ref})
		return http.StatusConflict
	case errors.Is(err, reserve.ErrChanged) && errors.As(err, &ps):
		// Another request changed the booking since this one read it.
		writeJSON(w, http.StatusConflict, errorBody{Error: ps.Error(), Problems: ps})
		return http.StatusConflict
	case errors.As(err, &ps):
		writeJSON(w, http.StatusBadRequest, errorBody{Error: ps.Error(), Problems: ps})
		return http.StatusBadRequest
	}
	s.o.Logger.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusServiceUnavailable, errUnavailable)
	return http.StatusServiceUnavailable
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, errorBody{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	writeBytes(w, code, b)
}

func writeBytes(w http.ResponseWriter, code int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte{'\n'})
}

// ttlCache keeps values for a while, one load at a time per key.
type ttlCache[K comparable, V any] struct {
	ttl time.Duration
	now func() time.Time
	max int // entries at most (10,000 unless bounded)
	// ahead: a value in use is loaded again before it expires (get).
	ahead bool
	mu    sync.Mutex
	m     map[K]ttlEntry[V]
	// loading holds the load under way per key: the requests that find
	// the same key missing wait for one load (a cache that expires for
	// 50 sessions at once reads once, not 50 times).
	loading map[K]*ttlLoad[V]
}

type ttlLoad[V any] struct {
	done chan struct{}
	v    V
	err  error
}

type ttlEntry[V any] struct {
	at  time.Time
	v   V
	ttl time.Duration
}

func newTTLCache[K comparable, V any](ttl time.Duration, now func() time.Time) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, now: now, max: 10_000, m: map[K]ttlEntry[V]{}, loading: map[K]*ttlLoad[V]{}}
}

// bounded keeps at most n entries (of large values).
func (c *ttlCache[K, V]) bounded(n int) *ttlCache[K, V] {
	c.max = n
	return c
}

// get returns the cached value of k or loads it; load says how long the
// value may be kept (0: the cache's TTL). Of a cache that refreshes
// ahead, a value past half its time is returned and loaded again in the
// background (one load per key), so that a key in use is replaced before
// it expires and no request waits for it; such a load must not depend on
// the request's context (context.WithoutCancel).
func (c *ttlCache[K, V]) get(k K, load func() (V, time.Duration, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.m[k]
	if age := c.now().Sub(e.at); ok && age < e.ttl {
		if _, busy := c.loading[k]; c.ahead && age >= e.ttl/2 && !busy {
			l := &ttlLoad[V]{done: make(chan struct{}), err: errUnavailable}
			c.loading[k] = l
			go c.fill(k, l, load)
		}
		c.mu.Unlock()
		return e.v, nil
	}
	if l, ok := c.loading[k]; ok {
		c.mu.Unlock()
		<-l.done
		return l.v, l.err
	}
	l := &ttlLoad[V]{done: make(chan struct{}), err: errUnavailable}
	c.loading[k] = l
	c.mu.Unlock()
	c.fill(k, l, load)
	return l.v, l.err
}

// fill runs load for k (its load under way l) and keeps the value.
func (c *ttlCache[K, V]) fill(k K, l *ttlLoad[V], load func() (V, time.Duration, error)) {
	defer func() { // also when load panics: the waiters get errUnavailable
		c.mu.Lock()
		delete(c.loading, k)
		c.mu.Unlock()
		close(l.done)
	}()
	v, ttl, err := load()
	if ttl <= 0 {
		ttl = c.ttl
	}
	c.mu.Lock()
	if err == nil {
		if len(c.m) >= c.max {
			c.dropOld()
		}
		c.m[k] = ttlEntry[V]{at: c.now(), v: v, ttl: ttl}
	}
	c.mu.Unlock()
	l.v, l.err = v, err
}

// refreshAhead makes the cache load a value in use again before it
// expires (see get).
func (c *ttlCache[K, V]) refreshAhead() *ttlCache[K, V] {
	c.ahead = true
	return c
}

// dropOld drops the expired entries, and all when none is (the map
// stays bounded either way).
func (c *ttlCache[K, V]) dropOld() {
	now := c.now()
	maps.DeleteFunc(c.m, func(_ K, e ttlEntry[V]) bool { return now.Sub(e.at) >= e.ttl })
	if len(c.m) >= c.max {
		clear(c.m)
	}
}

// forget drops k's value (a revoked token is refused at once here).
func (c *ttlCache[K, V]) forget(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

type usageKey struct {
	period meter.Period
	tenant string
}

// queryInt reads an integer query value.
func queryInt(r *http.Request, key string, def int) (int, bool) {
	v := r.URL.Query().Get(key)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}
