package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/httpapi"
)

// requestInfo is what the layers of one request tell the access log, and
// when the request started (the store's calls end at start plus the
// request timeout). It travels in the request's context.
type requestInfo struct {
	start time.Time
	key   string // the API key's name, once authenticated
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// namedKeys is an Authenticator that tells the access log the name of the
// key it accepted.
type namedKeys struct{ next httpapi.Authenticator }

func (k namedKeys) Authenticate(ctx context.Context, key string) (httpapi.Access, error) {
	a, err := k.next.Authenticate(ctx, key)
	if err == nil {
		if info := infoFrom(ctx); info != nil {
			info.key = a.Name
		}
	}
	return a, err
}

// accessLogger is the logger of the access log: logger, or one that
// discards when the access log is off.
func accessLogger(logger *slog.Logger, on bool) *slog.Logger {
	if !on {
		return slog.New(slog.DiscardHandler)
	}
	return logger
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

// observed returns next with an access log line and the request metrics
// for every request, and a request id: the client's X-Request-Id when it
// is a valid one, else a new ULID, sent back in X-Request-Id.
func observed(next http.Handler, logger *slog.Logger, m *metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One allocation for both: what the layers tell, and the writer.
		both := &struct {
			requestInfo
			recorder
		}{requestInfo: requestInfo{start: time.Now()}, recorder: recorder{ResponseWriter: w}}
		info, rec := &both.requestInfo, &both.recorder
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = ulid.Make().String()
		}
		w.Header().Set("X-Request-Id", id)
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		next.ServeHTTP(rec, r)

		took := time.Since(info.start)
		if rec.status == 0 {
			rec.status = http.StatusOK // nothing written: net/http sends 200
		}
		route := routeOf(r.Pattern)
		method := methodLabel(r.Method)
		m.requests.WithLabelValues(route, method, m.statusLabel(rec.status)).Inc()
		m.duration.WithLabelValues(route, method).Observe(took.Seconds())
		if !logger.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", method),
			slog.String("route", route),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Duration("duration", took),
			slog.String("request_id", id),
		}
		if info.key != "" {
			attrs = append(attrs, slog.String("key", info.key)) // its name; never the secret
		}
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
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

// methodLabel is the method, or "other" for a method HTTP does not
// define: the client chooses it, and a label must not take any value a
// client sends.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
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
	duration    *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
	inFlight    prometheus.Gauge
	statuses    [600]string // the labels of the statuses, made once
}

// statusLabel is the label of an HTTP status.
func (m *metrics) statusLabel(code int) string {
	if code >= 0 && code < len(m.statuses) {
		return m.statuses[code]
	}
	return strconv.Itoa(code)
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prompts_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "prompts_http_request_duration_seconds",
			Help:    "Time from a request's start to the end of its answer, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prompts_store_errors_total",
			Help: "Errors of the store's calls, by code: not_found, invalid, conflict… are the clients'; unavailable and internal the store's.",
		}, []string{"code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "prompts_http_requests_in_flight",
			Help: "HTTP requests being answered now.",
		}),
	}
	for code := range m.statuses {
		m.statuses[code] = strconv.Itoa(code)
	}
	m.reg.MustRegister(m.requests, m.duration, m.storeErrors, m.inFlight,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
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
	cacheFeed      = prometheus.NewDesc("prompts_cache_feed_connected", "1 while the invalidation feed is connected and the cache answers reads, 0 while reads go to the database.", nil, nil)
)

type cacheCollector struct{ c *cache.Store }

func (cc cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheHits, cacheMisses, cacheEvictions, cacheStale, cacheEntries, cacheBytes, cacheFeed} {
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
	ch <- prometheus.MustNewConstMetric(cacheFeed, prometheus.GaugeValue, connected)
}
