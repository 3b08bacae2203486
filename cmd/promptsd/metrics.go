package main

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/promptkit/prompts/cache"
)

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

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	durations   *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
	// The requests started and finished: their difference is the
	// requests in flight, read at each scrape; the number of a request
	// is in its id.
	started, finished atomic.Uint64

	// The handles of the request metrics, by route pattern, resolved
	// once: a map that is replaced, never changed, when a route is new.
	// WithLabelValues hashes the labels and takes a lock at every call;
	// an Observe or Inc on a handle is a few atomic operations.
	mu     sync.Mutex
	routes atomic.Pointer[map[string]*routeMetrics]
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
	duration prometheus.Observer
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
		mm = &methodMetrics{duration: m.durations.WithLabelValues(rm.route, methods[method])}
		if !rm.methods[method].CompareAndSwap(nil, mm) {
			mm = rm.methods[method].Load()
		}
	}
	mm.duration.Observe(took.Seconds())
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
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "prompts_http_request_duration_seconds",
			Help:    "Time from a request's start to the end of its answer, by route pattern and method.",
			Buckets: durationBuckets,
		}, []string{"route", "method"}),
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
	m.reg.MustRegister(m.requests, m.durations, m.storeErrors, inFlight,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// durationBuckets are the upper bounds, in seconds, of the buckets of
// prompts_http_request_duration_seconds: from 500 µs to 30 s.
var durationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

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
