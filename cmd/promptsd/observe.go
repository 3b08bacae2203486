package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
)

// requestInfo is what the layers of one request tell the access log, and
// when the request started (the store's watch judges a failure by it). It
// travels in the request's context.
type requestInfo struct {
	start time.Time
	key   string // the API key's name, once authenticated
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// namedKeys is the server's Authenticator: keys, whose answer for a key
// it accepted never changes (a *httpapi.Keys: Add refuses a secret given
// twice, and nothing removes a key), that tells the access log the name of
// the key it accepted, and that remembers, for each connection, the last
// key it accepted on it (see connAuth): a client sends the same key with
// every request of a connection, and hashing it again for each would be a
// tenth of what the server adds to a read.
type namedKeys struct{ keys httpapi.Authenticator }

func (k namedKeys) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	conn, _ := ctx.Value(connAuthKey{}).(*connAuth)
	var a httpapi.Access
	if last := conn.lastKey(); last != nil && sameSecret(last.key, key) {
		a = last.access
		if a.ProjectIDs != nil {
			a.ProjectIDs = slices.Clone(a.ProjectIDs) // as the Keys hands it out: the caller's own
		}
	} else {
		var err error
		if a, err = k.keys.Authenticate(ctx, key); err != nil {
			return a, err // a key refused is never remembered
		}
		if conn != nil {
			kept := a
			kept.ProjectIDs = slices.Clone(a.ProjectIDs) // the caller's a is its own
			conn.last.Store(&accepted{key: key, access: kept})
		}
	}
	if info := infoFrom(ctx); info != nil {
		info.key = a.Name
	}
	return a, nil
}

// connAuth is what a connection remembers of the last key accepted on it:
// the key and its access. It is the connection's, and goes with it; the
// key is already in the connection's memory (net/http's buffers), and
// nothing else can read it.
type connAuth struct{ last atomic.Pointer[accepted] }

type accepted struct {
	key    string
	access httpapi.Access
}

type connAuthKey struct{}

// lastKey is the last key accepted on the connection, or nil; c may be
// nil (a request that came by no connection of the server's).
func (c *connAuth) lastKey() *accepted {
	if c == nil {
		return nil
	}
	return c.last.Load()
}

// withConnAuth is the server's ConnContext: every connection remembers its
// last key.
func withConnAuth(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connAuthKey{}, new(connAuth))
}

// sameSecret reports whether a and b are equal, in a time that depends
// on their lengths only: a proxy may send the requests of many clients on
// one connection, and none may learn another's key by timing.
func sameSecret(a, b string) bool {
	return subtle.ConstantTimeCompare(unsafe.Slice(unsafe.StringData(a), len(a)), unsafe.Slice(unsafe.StringData(b), len(b))) == 1
}

// recorder remembers a response's status and size.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// observed returns next with, for every request, a deadline on its
// context (timeout after it started: every call to the store ends by
// then), a request id (the client's X-Request-Id when it is a valid one,
// else a new ULID, sent back in X-Request-Id), the request metrics, and
// an access log line.
func observed(next http.Handler, alog *accessLog, m *metrics, timeout time.Duration) http.Handler {
	var (
		ids   requestIDs
		clock startClock
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One allocation for what the layers tell, the writer, the
		// context, the request with that context, and the request id,
		// its text and its header value.
		all := &struct {
			info   requestInfo
			rec    recorder
			ctx    requestContext
			req    http.Request
			id     [1]string
			idText [ulid.EncodedSize]byte
		}{info: requestInfo{start: clock.now()}, rec: recorder{ResponseWriter: w}}
		info, rec := &all.info, &all.rec
		seq := m.started.Add(1)
		id := firstValue(r.Header["X-Request-Id"]) // the canonical key: no canonicalizing per request
		if !validRequestID(id) {
			id = ids.next(&all.idText, info.start, seq)
		}
		all.id[0] = id
		w.Header()["X-Request-Id"] = all.id[:]
		defer m.finished.Add(1)
		deadline := info.start.Add(timeout)
		if isStream(r) {
			// A stream of events lasts until the client leaves or the
			// server stops, never cut by the request timeout.
			deadline = info.start.Add(100 * 365 * 24 * time.Hour)
		}
		ctx := &all.ctx
		ctx.init(r.Context(), info, deadline)
		defer ctx.release()
		// WithContext's shallow copy, copied into the allocation: the
		// copy it makes does not escape, and is not a second allocation.
		all.req = *r.WithContext(ctx)
		r = &all.req
		next.ServeHTTP(rec, r)

		took := time.Since(info.start)
		if rec.status == 0 {
			rec.status = http.StatusOK // nothing written: net/http sends 200
		}
		method := methodIndex(r.Method)
		route := m.observe(r.Pattern, method, rec.status, took)
		alog.write(info.start, methods[method], route, rec.status, rec.bytes, took, id, info.key)
	})
}

// isStream reports whether r asks for a stream of events.
func isStream(r *http.Request) bool {
	for _, a := range r.Header["Accept"] {
		if strings.Contains(a, "event-stream") { // the rare case, read fully
			return httpapi.IsEventStream(r)
		}
	}
	return false
}

// startClock tells the time requests start at with one read of the
// monotonic clock, where time.Now reads two clocks: it reads the wall
// clock once every clockSync, and each time it tells is that reading
// plus the monotonic time since. The times it tells are as monotonic as
// time.Now's; a step of the wall clock (a slew shows at once) reaches
// their wall-clock part, which the access log writes, within clockSync.
type startClock struct {
	base atomic.Pointer[time.Time]
}

// clockSync is how often startClock reads the wall clock.
const clockSync = 100 * time.Millisecond

func (c *startClock) now() time.Time {
	if b := c.base.Load(); b != nil {
		if d := time.Since(*b); d >= 0 && d < clockSync {
			return b.Add(d)
		}
	}
	t := time.Now()
	c.base.Store(&t)
	return t
}

// requestIDs makes the request ids of the requests that bring none: ULIDs
// whose random part is a random number drawn once for the process
// followed by the request's number (the server counts the requests it
// starts), so that making one takes no lock. Its text is made from parts:
// the time's, written once a millisecond, the random number's, written
// once, and the request number's.
type requestIDs struct {
	once   sync.Once
	prefix [4]byte
	fixed  [6]byte                // the text of the prefix's first 30 bits
	ms     atomic.Pointer[msText] // the text of the last millisecond
}

// msText is the text of a ULID's time: its first 10 characters.
type msText struct {
	ms   uint64
	text [10]byte
}

// crockford is ULID's alphabet: Crockford's base 32.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// next returns the id of request number seq, started at now, written in
// text, whose bytes must not change after: the string is text's memory
// (the request's own allocation holds it, and no second one is made).
// Two requests of different numbers have different ids.
func (g *requestIDs) next(text *[ulid.EncodedSize]byte, now time.Time, seq uint64) string {
	g.once.Do(func() {
		_, _ = rand.Read(g.prefix[:])
		var id ulid.ULID
		copy(id[6:10], g.prefix[:])
		var t [ulid.EncodedSize]byte
		_ = id.MarshalTextTo(t[:])
		copy(g.fixed[:], t[10:16])
	})
	ms := ulid.Timestamp(now)
	m := g.ms.Load()
	if m == nil || m.ms != ms {
		m = &msText{ms: ms}
		var id ulid.ULID
		_ = id.SetTime(ms) // cannot fail: a time.Time's milliseconds fit
		var t [ulid.EncodedSize]byte
		_ = id.MarshalTextTo(t[:])
		copy(m.text[:], t[:10])
		g.ms.Store(m)
	}
	copy(text[:10], m.text[:])
	copy(text[10:16], g.fixed[:])
	// The last 10 characters: the prefix's last 2 bits, then the
	// number's last 48.
	v := uint64(g.prefix[3]&3)<<48 | seq&(1<<48-1)
	for i := ulid.EncodedSize - 1; i >= 16; i-- {
		text[i] = crockford[v&31]
		v >>= 5
	}
	return unsafe.String(&text[0], len(text))
}

// accessLog writes one line a request, in the format of slog's
// TextHandler (time, level, msg=request, then method, route, status,
// bytes, duration, request_id and the key's name), formatted by hand into
// a pooled buffer: the access log is on the path of every request.
type accessLog struct {
	out   io.Writer    // nil: off
	lines *logWriter   // out, when it is one: written without a look at each line's level
	level slog.Leveler // the log's least level: lines are written while it is at most Info
	bufs  sync.Pool
	sec   atomic.Pointer[second] // the last second formatted
}

func newAccessLog(out io.Writer, level slog.Leveler, on bool) *accessLog {
	l := &accessLog{level: level}
	if on {
		l.out = out
		l.lines, _ = out.(*logWriter)
	}
	l.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	return l
}

// write writes the line of a request; route is the route's text as the
// line has it (logText).
func (l *accessLog) write(start time.Time, method, route string, status int, bytes int64, took time.Duration, id, key string) {
	if l.out == nil || l.level.Level() > slog.LevelInfo {
		return
	}
	if l.lines != nil {
		var buf [256]byte // on the stack: the log's buffer takes a copy
		l.lines.writeInfo(l.appendLine(buf[:0], start, method, route, status, bytes, took, id, key))
		return
	}
	bp := l.bufs.Get().(*[]byte)
	b := l.appendLine((*bp)[:0], start, method, route, status, bytes, took, id, key)
	_, _ = l.out.Write(b)
	*bp = b
	l.bufs.Put(bp)
}

// appendLine appends the line of a request to b.
func (l *accessLog) appendLine(b []byte, start time.Time, method, route string, status int, bytes int64, took time.Duration, id, key string) []byte {
	b = append(b, "time="...)
	b = l.appendTime(b, start.Add(took))
	b = append(b, " level=INFO msg=request method="...)
	// method, id and key are safe as they are (a fixed label, a valid
	// request id, a key name), and so is duration's text; the route's
	// was made safe once for all its requests (logText).
	b = append(b, method...)
	b = append(b, " route="...)
	b = append(b, route...)
	b = append(b, " status="...)
	if 100 <= status && status <= 999 { // every status a server sends: three digits
		b = append(b, byte('0'+status/100), byte('0'+status/10%10), byte('0'+status%10))
	} else {
		b = strconv.AppendInt(b, int64(status), 10)
	}
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, " duration="...)
	b = appendDuration(b, took)
	b = append(b, " request_id="...)
	b = append(b, id...)
	if key != "" {
		b = append(b, " key="...)
		b = append(b, key...) // its name; never the secret
	}
	return append(b, '\n')
}

// appendDuration appends d as d.String() writes it, without making the
// string: 1.5ms, 782.1µs, 2.000000001s.
func appendDuration(b []byte, d time.Duration) []byte {
	if d < 0 || d >= time.Minute {
		return append(b, d.String()...) // rare: the general form
	}
	u := uint64(d)
	var unit string
	var digits int // fractional digits of the unit
	switch {
	case u == 0:
		return append(b, "0s"...)
	case u < uint64(time.Microsecond):
		return append(strconv.AppendUint(b, u, 10), "ns"...)
	case u < uint64(time.Millisecond):
		unit, digits = "µs", 3
	case u < uint64(time.Second):
		unit, digits = "ms", 6
	default:
		unit, digits = "s", 9
	}
	var frac [9]byte
	w := len(frac)
	printed := false
	for i := 0; i < digits; i++ {
		digit := u % 10
		printed = printed || digit != 0
		if printed {
			w--
			frac[w] = byte(digit) + '0'
		}
		u /= 10
	}
	b = strconv.AppendUint(b, u, 10)
	if printed {
		b = append(b, '.')
		b = append(b, frac[w:]...)
	}
	return append(b, unit...)
}

// second is the text of one second as slog writes a time, in two parts
// around the milliseconds.
type second struct {
	unix       int64
	head, zone string // "2006-01-02T15:04:05." and "Z07:00"
}

// appendTime appends t as slog's TextHandler does
// (2006-01-02T15:04:05.000Z07:00), formatting each second once.
func (l *accessLog) appendTime(b []byte, t time.Time) []byte {
	s := l.sec.Load()
	if s == nil || s.unix != t.Unix() {
		text := t.Truncate(time.Second).Format("2006-01-02T15:04:05.000Z07:00")
		s = &second{unix: t.Unix(), head: text[:len("2006-01-02T15:04:05.")], zone: text[len("2006-01-02T15:04:05.000"):]}
		l.sec.Store(s)
	}
	ms := t.Nanosecond() / 1e6
	b = append(b, s.head...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// appendValue appends s as slog's TextHandler writes a value: as it is,
// unless it is empty or holds a space, '"', '=', a control character or
// anything unprintable, which are quoted.
func appendValue(b []byte, s string) []byte {
	if s == "" {
		return append(b, `""`...)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7f || c == '"' || c == '=' {
				return strconv.AppendQuote(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return strconv.AppendQuote(b, s)
		}
		i += size
	}
	return append(b, s...)
}

// routeOf is the path of the route pattern that served a request, such as
// /v1/integration/prompts/{prompt_id}: never the raw path, so that a log
// or a metric has one line per route, not one per prompt. A request that
// no route matched (a 404 of an unknown path) is "unmatched".
func routeOf(pattern string) string {
	if pattern == "" || pattern == "/" {
		return "unmatched"
	}
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// methods are the labels of the methods: those HTTP defines, and
// "other" for any other (the client chooses the method, and a label must
// not take any value a client sends).
var methods = [...]string{"other", http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}

// methodIndex is the index of m's label in methods.
func methodIndex(m string) int {
	for i := 1; i < len(methods); i++ {
		if methods[i] == m {
			return i
		}
	}
	return 0
}

// validRequestID reports whether a client's X-Request-Id may be used as
// it is: 1 to 128 characters, letters, digits and . _ : / + = -. Anything
// else (empty, longer, spaces, quotes, control characters) is replaced,
// so that the log line cannot be forged through it.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("._:/+=-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	storeErrors *prometheus.CounterVec
	// The requests started and finished: their difference is the
	// requests in flight, read at each scrape; the number of a request
	// is in its id.
	started, finished atomic.Uint64

	// The handles of the request metrics, by route pattern, resolved
	// once: a map that is replaced, never changed, when a route is new.
	mu        sync.Mutex
	routes    atomic.Pointer[map[string]*routeMetrics]
	durations []*durations // every route's and method's, for the scrapes; under mu
}

// routeMetrics are the handles of one route's metrics, by method, and
// its text in the access log.
type routeMetrics struct {
	route   string
	logText string // route as the access log writes it (appendValue)
	methods [len(methods)]atomic.Pointer[methodMetrics]
}

// methodMetrics are the handles of one route and method, its counters by
// status made when first needed.
type methodMetrics struct {
	duration *durations
	requests [600]atomic.Pointer[prometheus.Counter]
}

// observe counts a request answered by the route of pattern, and returns
// the route's text in the access log.
func (m *metrics) observe(pattern string, method, status int, took time.Duration) (logText string) {
	rm := (*m.routes.Load())[pattern]
	if rm == nil {
		rm = m.newRoute(pattern)
	}
	mm := rm.methods[method].Load()
	if mm == nil {
		mm = &methodMetrics{duration: &durations{route: rm.route, method: methods[method]}}
		if rm.methods[method].CompareAndSwap(nil, mm) {
			m.mu.Lock()
			m.durations = append(m.durations, mm.duration)
			m.mu.Unlock()
		} else {
			mm = rm.methods[method].Load()
		}
	}
	mm.duration.observe(took)
	if status < 0 || status >= len(mm.requests) {
		m.requests.WithLabelValues(rm.route, methods[method], strconv.Itoa(status)).Inc()
		return rm.logText
	}
	c := mm.requests[status].Load()
	if c == nil {
		counter := m.requests.WithLabelValues(rm.route, methods[method], strconv.Itoa(status))
		mm.requests[status].CompareAndSwap(nil, &counter)
		c = mm.requests[status].Load()
	}
	(*c).Inc()
	return rm.logText
}

// newRoute adds the handles of the route of pattern. Patterns whose
// route is the same ("" and "/" are both "unmatched") share them: a
// metric has one series per route and method.
func (m *metrics) newRoute(pattern string) *routeMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.routes.Load()
	if rm := old[pattern]; rm != nil {
		return rm
	}
	route := routeOf(pattern)
	if len(old) >= 1000 {
		route = routeOf("") // patterns are the server's own and few: never reached
	}
	var rm *routeMetrics
	for _, v := range old {
		if v.route == route {
			rm = v
			break
		}
	}
	if rm == nil {
		rm = &routeMetrics{route: route, logText: string(appendValue(nil, route))}
	}
	if len(old) >= 1000 {
		return rm
	}
	routes := make(map[string]*routeMetrics, len(old)+1)
	for k, v := range old {
		routes[k] = v
	}
	routes[pattern] = rm
	m.routes.Store(&routes)
	return rm
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prompts_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prompts_store_errors_total",
			Help: "Errors of the store's calls, by code: not_found, invalid, conflict… are the clients'; unavailable and internal the store's.",
		}, []string{"code"}),
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "prompts_http_requests_in_flight",
		Help: "HTTP requests being answered now.",
	}, func() float64 {
		finished := m.finished.Load() // first: never more than started
		return float64(m.started.Load() - finished)
	})
	m.routes.Store(&map[string]*routeMetrics{})
	m.reg.MustRegister(m.requests, durationCollector{m}, m.storeErrors, inFlight,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// durationBounds are the upper bounds of the buckets of
// prompts_http_request_duration_seconds.
var durationBounds = [...]time.Duration{500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second}

var durationDesc = prometheus.NewDesc("prompts_http_request_duration_seconds",
	"Time from a request's start to the end of its answer, by route pattern and method.", []string{"route", "method"}, nil)

// durations is the histogram of one route's and method's request
// durations: what a prometheus.Histogram counts, in two atomic additions
// an observation (its bucket, the sum) where the library's takes five, on
// the path of every request. The count is the buckets' total. A scrape
// reads the buckets, then the sum: a request observed while it reads may
// be in one and not yet in the other, for that scrape.
type durations struct {
	route, method string
	buckets       [len(durationBounds) + 1]atomic.Uint64 // the last: above every bound
	sum           atomic.Int64                           // nanoseconds
}

func (d *durations) observe(took time.Duration) {
	i := 0
	for i < len(durationBounds) && took > durationBounds[i] {
		i++
	}
	d.buckets[i].Add(1)
	d.sum.Add(int64(took))
}

// metric returns the histogram as a scrape shows it.
func (d *durations) metric() prometheus.Metric {
	var count uint64
	cumulative := make(map[float64]uint64, len(durationBounds))
	for i := range d.buckets {
		count += d.buckets[i].Load()
		if i < len(durationBounds) {
			cumulative[durationBounds[i].Seconds()] = count
		}
	}
	sum := time.Duration(d.sum.Load()).Seconds()
	return prometheus.MustNewConstHistogram(durationDesc, count, sum, cumulative, d.route, d.method)
}

// durationCollector exports every route's and method's durations.
type durationCollector struct{ m *metrics }

func (dc durationCollector) Describe(ch chan<- *prometheus.Desc) { ch <- durationDesc }

func (dc durationCollector) Collect(ch chan<- prometheus.Metric) {
	dc.m.mu.Lock()
	all := slices.Clone(dc.m.durations)
	dc.m.mu.Unlock()
	for _, d := range all {
		ch <- d.metric()
	}
}

// handler serves the metrics in Prometheus's text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// watchStore adds the store's state (up or not) to the metrics.
func (m *metrics) watchStore(w *storeWatch) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "prompts_store_up",
		Help: "1 once the store is open while its last call (or readiness ping) did not fail as unavailable, else 0.",
	}, func() float64 {
		if w.isDown() {
			return 0
		}
		return 1
	}))
}

// watchCache adds the cache's Stats to the metrics, read at each scrape.
func (m *metrics) watchCache(c *cache.Store) {
	m.reg.MustRegister(cacheCollector{c})
}

var (
	cacheHits      = prometheus.NewDesc("prompts_cache_hits_total", "Reads the cache answered from memory.", nil, nil)
	cacheMisses    = prometheus.NewDesc("prompts_cache_misses_total", "Reads the cache sent to the store.", nil, nil)
	cacheEvictions = prometheus.NewDesc("prompts_cache_evictions_total", "Entries the cache dropped to stay within its budget.", nil, nil)
	cacheStale     = prometheus.NewDesc("prompts_cache_stale_total", "Reads answered with a stale value while the store was unavailable.", nil, nil)
	cacheEntries   = prometheus.NewDesc("prompts_cache_entries", "Entries the cache holds.", nil, nil)
	cacheBytes     = prometheus.NewDesc("prompts_cache_bytes", "The estimated size of the cache's entries, in bytes.", nil, nil)
	cacheLosses    = prometheus.NewDesc("prompts_cache_feed_losses_total", "Times the invalidation feed was lost (reads then go to the database until it is back).", nil, nil)
	cacheRecovered = prometheus.NewDesc("prompts_cache_feed_recoveries_total", "Times the invalidation feed came back (the cache then drops what it held).", nil, nil)
	cacheFeed      = prometheus.NewDesc("prompts_cache_feed_connected", "1 while the invalidation feed is connected and the cache answers reads, 0 while reads go to the database.", nil, nil)
)

type cacheCollector struct{ c *cache.Store }

func (cc cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheHits, cacheMisses, cacheEvictions, cacheStale, cacheEntries, cacheBytes, cacheLosses, cacheRecovered, cacheFeed} {
		ch <- d
	}
}

func (cc cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := cc.c.Stats()
	connected := 1.0
	if s.Lost {
		connected = 0
	}
	ch <- prometheus.MustNewConstMetric(cacheHits, prometheus.CounterValue, float64(s.Hits))
	ch <- prometheus.MustNewConstMetric(cacheMisses, prometheus.CounterValue, float64(s.Misses))
	ch <- prometheus.MustNewConstMetric(cacheEvictions, prometheus.CounterValue, float64(s.Evictions))
	ch <- prometheus.MustNewConstMetric(cacheStale, prometheus.CounterValue, float64(s.Stale))
	ch <- prometheus.MustNewConstMetric(cacheEntries, prometheus.GaugeValue, float64(s.Entries))
	ch <- prometheus.MustNewConstMetric(cacheBytes, prometheus.GaugeValue, float64(s.Bytes))
	ch <- prometheus.MustNewConstMetric(cacheLosses, prometheus.CounterValue, float64(s.Losses))
	ch <- prometheus.MustNewConstMetric(cacheRecovered, prometheus.CounterValue, float64(s.Recoveries))
	ch <- prometheus.MustNewConstMetric(cacheFeed, prometheus.GaugeValue, connected)
}

// firstValue is the first of a header's values, or "", as Header.Get
// answers it.
func firstValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}
