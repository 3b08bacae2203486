package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/promptkit/prompts"
)

// Prefix is the path under which the HTTP interface lives, which the client
// adds to the base URL given to New.
const Prefix = "/v1/integration"

// DefaultUserAgent is the User-Agent of a client's requests unless
// WithUserAgent says otherwise.
const DefaultUserAgent = "promptkit-prompts-client/1"

// Client is a prompts.Store (and a prompts.ActiveReader and
// prompts.EventLog) over the HTTP
// interface of a server (cmd/promptsd, or httpapi in an application). Make
// one with New; it is safe for concurrent use, and one per server is
// enough: it reuses its connections.
type Client struct {
	base      string // the base URL and Prefix, without a trailing slash
	key       string
	hc        *http.Client
	retry     RetryPolicy
	log       *slog.Logger
	userAgent string
	fresh     *freshness
	memo      *memo
	sinks     sinks // of the feeds running (see Client.wrote)
	maxAnswer int64 // the most of a JSON answer read (WithMaxAnswerSize)
	prop      propagation.TextMapPropagator
}

var (
	_ prompts.Store    = (*Client)(nil)
	_ prompts.EventLog = (*Client)(nil)
)

// An Option configures a Client (New).
type Option func(*Client)

// WithHTTPClient makes the client send its requests with hc, whose
// Transport, proxies and TLS settings it then uses. hc should have no
// Timeout: it would cut the event stream (Feed); bound calls with their
// context, and each attempt with RetryPolicy.AttemptTimeout. A nil hc
// keeps the default, a client of its own that keeps up to 64 idle
// connections to the server.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithRetry sets how the client retries a call that failed for want of
// the server (see RetryPolicy); the zero fields keep their defaults.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithLogger makes the client log its retries and the state of its feed
// (at Debug, Info and Warn); by default it logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithUserAgent sets the User-Agent of the client's requests (default
// DefaultUserAgent).
func WithUserAgent(ua string) Option {
	return func(c *Client) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// WithPropagator sets how the client puts the trace of a call's context
// in its requests' headers (OpenTelemetry's propagation), so that the
// server's spans join the caller's trace. The default is W3C Trace
// Context (propagation.TraceContext: traceparent and tracestate), from the
// span in the context: a context without one adds no header and costs
// next to nothing. The client reads no global state: an application that
// set its propagator with otel.SetTextMapPropagator passes
// otel.GetTextMapPropagator() here; an empty composite propagator
// (propagation.NewCompositeTextMapPropagator()) sends nothing. A nil p
// keeps the default.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *Client) {
		if p != nil {
			c.prop = p
		}
	}
}

// RetryPolicy says how a call is retried when the server cannot answer
// it: a 503 (the server's store is unavailable, or it is shutting down),
// a 502 or 504 from a proxy in front of it, a 408 or 429, an attempt that
// timed out, or a connection that could not be made or was lost. The
// waits grow exponentially from MinBackoff to MaxBackoff, each a random
// value between half and all of its bound (jitter, so that many clients
// do not retry in step); a Retry-After header makes the wait at least what
// it says. Every wait and attempt is within the call's context: a wait
// that would end past its deadline is not begun, and the call fails at
// once with the last error.
//
// Every call may be retried but CreateProject: reads, PUT and DELETE do
// the same however often they are repeated; PATCH sets values, so a
// repeat changes nothing more; and every POST that creates (CreatePrompt,
// CreateVersion, Rollback) carries an Idempotency-Key, so that a repeat
// of a write the server did (whose answer was lost) does nothing new and
// answers as the first did. CreateProject's POST takes no key: it is
// retried only when its connection could not be made.
//
// A refused connection is retried as any other failure: a server that
// restarts refuses connections for a moment, and a write made then goes
// through once it is back. But a read asked with FailFast
// (prompts.ActiveQuery), as a cache (package cache) asks while it holds an
// answer to give (the last value it knows while its feed is lost, or its
// fallback snapshot's), is tried once: the cache answers at once, marked
// stale, rather than after the waits of the retries.
type RetryPolicy struct {
	// MaxAttempts is how many times a call is tried at most, the first
	// included: 0 means 4; 1 turns retries off.
	MaxAttempts int
	// MinBackoff bounds the first wait (0 means 100 ms), MaxBackoff every
	// wait (0 means 5 s) but those that Retry-After asks for.
	MinBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds each attempt, the reading of the answer
	// included (0 means 30 s; below 0, only the call's context bounds
	// it). An attempt that takes longer is abandoned and retried.
	AttemptTimeout time.Duration
}

func (p RetryPolicy) attempts() int {
	if p.MaxAttempts <= 0 {
		return 4
	}
	return p.MaxAttempts
}

func (p RetryPolicy) minBackoff() time.Duration {
	if p.MinBackoff <= 0 {
		return 100 * time.Millisecond
	}
	return p.MinBackoff
}

func (p RetryPolicy) maxBackoff() time.Duration {
	if p.MaxBackoff <= 0 {
		return 5 * time.Second
	}
	return max(p.MaxBackoff, p.minBackoff())
}

func (p RetryPolicy) attemptTimeout() time.Duration {
	switch {
	case p.AttemptTimeout == 0:
		return 30 * time.Second
	case p.AttemptTimeout < 0:
		return 0
	}
	return p.AttemptTimeout
}

// backoff returns the wait before retry n (1 for the first): a random
// value between half and all of min·2^(n-1), at most max.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.minBackoff()
	for i := 1; i < n && d < p.maxBackoff(); i++ {
		d *= 2
	}
	d = min(d, p.maxBackoff())
	return d/2 + rand.N(d/2+1)
}

// New returns a client of the interface mounted at baseURL (an absolute
// http or https URL, such as "https://prompts.internal" or
// "http://localhost:8080/prompts"; the client adds Prefix), that sends
// apiKey in every request's X-API-Key header. It does no I/O.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	switch {
	case baseURL == "":
		return nil, errors.New("client: the base URL is required")
	case err != nil:
		return nil, fmt.Errorf("client: the base URL %q is not a URL: %w", baseURL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("client: the base URL %q must be an absolute http or https URL", baseURL)
	case u.Host == "" || u.Opaque != "":
		return nil, fmt.Errorf("client: the base URL %q must name a host", baseURL)
	case u.User != nil:
		return nil, fmt.Errorf("client: the base URL must not hold user information: the API key authenticates")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("client: the base URL %q must have no query or fragment", baseURL)
	}
	switch {
	case apiKey == "":
		return nil, errors.New("client: the API key is required")
	case strings.TrimFunc(apiKey, func(r rune) bool { return r > ' ' && r < 0x7f }) != "":
		return nil, errors.New("client: the API key must be printable ASCII without spaces")
	}
	c := &Client{
		base:      strings.TrimSuffix(u.String(), "/") + Prefix,
		key:       apiKey,
		log:       slog.New(slog.DiscardHandler),
		userAgent: DefaultUserAgent,
		fresh:     newFreshness(DefaultFreshWindow),
		memo:      newMemo(),
		maxAnswer: DefaultMaxAnswerSize,
		prop:      propagation.TraceContext{},
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.hc == nil {
		c.hc = defaultHTTPClient()
	}
	c.hc = sameOrigin(c.hc)
	return c, nil
}

// defaultHTTPClient is a client of its own (never http.DefaultClient, which
// anything in the process may change), with http.DefaultTransport's
// settings and more idle connections kept per host: a client talks to one
// server, often from many goroutines at once.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 100
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// retryMode says which failures a request may be retried after.
type retryMode uint8

const (
	retryAll    retryMode = iota // any failure for want of the server
	retryUnsent                  // only a connection that could not be made
)

// request is one call of the interface.
type request struct {
	method string
	path   string // escaped, after Prefix, from its leading slash
	query  string // encoded, without '?'
	body   []byte // replayed as is by every attempt
	header http.Header
	mode   retryMode
	once   bool // tried once: the caller has an answer of its own (prompts.ActiveQuery.FailFast)
}

// response is the answer to a request, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends r, retrying as the policy says, and returns its answer when
// it succeeded (a status below 400), else the error its answer means.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	attempts := c.retry.attempts()
	if r.once {
		attempts = 1 // the caller holds an answer: it gives it rather than wait
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, prompts.ContextDone(err)
		}
		res, retryable, err := c.attempt(ctx, r)
		if err == nil {
			return res, nil
		}
		if !retryable || attempt >= attempts {
			return nil, err
		}
		wait := c.retry.backoff(attempt)
		if res != nil {
			wait = max(wait, retryAfter(res.header))
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return nil, err // the wait would outlast the call
		}
		c.log.DebugContext(ctx, "client: retrying", "method", r.method, "path", r.path, "attempt", attempt+1, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, prompts.ContextDone(ctx.Err())
		case <-t.C:
		}
	}
}

// attempt sends r once. It returns the answer when it succeeded; else the
// error, with the answer when there was one, and whether a retry may
// succeed.
func (c *Client) attempt(ctx context.Context, r request) (res *response, retryable bool, err error) {
	actx := ctx
	if d := c.retry.attemptTimeout(); d > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	req, err := c.newRequest(actx, r)
	if err != nil {
		return nil, false, prompts.Internal(err)
	}
	hr, err := c.hc.Do(req)
	if err != nil {
		if rerr := refusedRedirect(err); rerr != nil {
			return nil, false, rerr
		}
		return nil, r.mode == retryAll || isDialError(err), c.transportError(ctx, err)
	}
	body, err := readAnswer(hr, c.maxAnswer)
	hr.Body.Close()
	if errors.Is(err, ErrTooLarge) {
		return nil, false, err
	}
	if err != nil {
		// The answer was cut: the request may have been done.
		return nil, r.mode == retryAll, c.transportError(ctx, err)
	}
	res = &response{status: hr.StatusCode, header: hr.Header, body: body}
	if hr.StatusCode < 400 {
		return res, false, nil
	}
	perr := problemError(res)
	return res, r.mode == retryAll && retryableStatus(hr.StatusCode), perr
}

// newRequest makes the HTTP request of r.
func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	u := c.base + r.path
	if r.query != "" {
		u += "?" + r.query
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header["X-Api-Key"] = []string{c.key}
	req.Header["User-Agent"] = []string{c.userAgent}
	if req.Header.Get("Accept") == "" {
		req.Header["Accept"] = []string{"application/json"}
	}
	if r.body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	c.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, nil
}

// transportError is the error of a request that got no (whole) answer:
// the context's when it ended, else unavailable.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return prompts.ContextDone(ctx.Err())
	}
	msg := "the server cannot be reached"
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "the server did not answer in time"
	}
	return &prompts.Error{Code: prompts.CodeUnavailable, Message: msg, Err: err}
}

// isDialError reports whether err says that no connection could be
// made: the request was not sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// retryableStatus reports whether an answer with this status says that
// the server could not do the request now, so that a retry may succeed.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout,
		http.StatusRequestTimeout, http.StatusTooManyRequests:
		return true
	}
	return false
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date): 0
// when there is none.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// beginPrompt is the preamble of every method on one prompt: the input's
// rules first (invalid, its Validate's result), then the context, then
// an id that cannot name a prompt, not found without a request, as every
// Store answers it.
func beginPrompt(ctx context.Context, invalid error, promptID string) error {
	if invalid != nil {
		return invalid
	}
	if err := ctx.Err(); err != nil {
		return prompts.ContextDone(err)
	}
	if !prompts.ValidID(promptID) {
		return prompts.NotFound("prompt")
	}
	return nil
}
