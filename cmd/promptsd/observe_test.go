package main

import (
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
	"unsafe"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"
)

// BenchmarkObserved is what the server adds to every request as it runs
// by default (the deadline, the request id, the metrics, and the access
// log through the buffered writer), against the same mux alone
// (BenchmarkMux).
func BenchmarkObserved(b *testing.B) {
	logs := newLogWriter(io.Discard, logFlushEvery)
	defer logs.Close()
	benchmarkRoute(b, func(h http.Handler) http.Handler {
		return observed(h, newAccessLog(logs, slog.LevelInfo, true), newMetrics(), time.Minute)
	})
}

func BenchmarkMux(b *testing.B) {
	benchmarkRoute(b, func(h http.Handler) http.Handler { return h })
}

func benchmarkRoute(b *testing.B, wrap func(http.Handler) http.Handler) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/integration/prompts/{prompt_id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	h := wrap(mux)
	req := httptest.NewRequest("GET", "/v1/integration/prompts/01M84AFWE3EEWVYPN20F1894FC", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

// A duration is counted in the first bucket whose bound is at least it
// (Prometheus's "le"), the count is every observation, the sum theirs,
// in one series per route and method.
func TestDurations(t *testing.T) {
	is := is.New(t)
	m := newMetrics()
	for _, took := range []time.Duration{0, 500 * time.Microsecond, 500*time.Microsecond + 1, time.Millisecond, 30 * time.Second, 31 * time.Second} {
		m.observe("GET /r", methodIndex(http.MethodGet), http.StatusOK, took)
	}
	families, err := m.reg.Gather()
	is.NoErr(err)
	var out *dto.Metric
	for _, f := range families {
		if f.GetName() == "prompts_http_request_duration_seconds" {
			is.Equal(len(f.GetMetric()), 1)
			out = f.GetMetric()[0]
		}
	}
	is.True(out != nil)
	h := out.GetHistogram()
	is.Equal(h.GetSampleCount(), uint64(6))
	is.True(math.Abs(h.GetSampleSum()-(61*time.Second+2*time.Millisecond+1).Seconds()) < 1e-9)
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	is.Equal(len(got), len(durationBuckets))
	is.Equal(got[0.0005], uint64(2)) // 0 and 500µs: a bound holds its own value
	is.Equal(got[0.001], uint64(4))
	is.Equal(got[10], uint64(4))
	is.Equal(got[30], uint64(5)) // 31 s is above every bound: in the count only
	labels := map[string]string{}
	for _, l := range out.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	is.Equal(labels, map[string]string{"route": "/r", "method": "GET"})
}

// What the server adds to a request is one allocation: the request's
// state, its context, its copy of the request with that context, its id.
func TestObservedAllocatesOnce(t *testing.T) {
	is := is.New(t)
	logs := newLogWriter(io.Discard, logFlushEvery)
	defer logs.Close()
	var seen *http.Request
	h := notInlined(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		r.Pattern = "GET /x"
		w.WriteHeader(http.StatusNoContent)
	}), newAccessLog(logs, slog.LevelInfo, true), newMetrics(), time.Minute)
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	w := &discardWriter{header: http.Header{"X-Request-Id": nil}}
	h.ServeHTTP(w, req) // the route's metrics, made once
	allocs := testing.AllocsPerRun(100, func() {
		clear(w.header)
		h.ServeHTTP(w, req)
	})
	is.Equal(allocs, 1.0)
	_, ok := seen.Context().Deadline()
	is.True(ok)                              // the handler's request has the deadline
	is.True(req.Context() != seen.Context()) // on a copy of the request
}

// What the server keeps of a request, its one allocation, is at most 512
// bytes: a larger object is allocated with a malloc header, in a size
// class that costs more to allocate and to scan.
func TestRequestStateSize(t *testing.T) {
	if n := unsafe.Sizeof(requestState{}); n > 512 {
		t.Errorf("requestState is %d bytes, want at most 512", n)
	}
}

// The start clock tells the time as time.Now does, to within the time
// between the reads, monotonic included.
func TestStartClock(t *testing.T) {
	is := is.New(t)
	var c startClock
	prev := c.now()
	for i := range 2000 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		is.True(!got.Before(prev)) // monotonic
		// The wall clock, as read at most clockSync ago plus the monotonic
		// time since: between the two readings around it, give or take
		// what the wall clock moved against the monotonic one.
		is.True(got.Round(0).Sub(before.Round(0)) > -20*time.Millisecond) // a stale base is up to clockSync off
		is.True(after.Round(0).Sub(got.Round(0)) > -20*time.Millisecond)
		is.True(got.Sub(before) >= 0 && after.Sub(got) >= 0) // the monotonic reading, exactly ordered
		prev = got
		if i%500 == 0 {
			// Real time: what is tested is the wall clock against the
			// monotonic one, which a synctest bubble does not have apart.
			time.Sleep(clockSync * 3 / 4)
		}
	}
}

// Patterns of one route ("" and "/" are both "unmatched") count in one
// series: a scrape never meets the same series twice.
func TestRoutesSharingALabel(t *testing.T) {
	is := is.New(t)
	m := newMetrics()
	m.observe("", methodIndex(http.MethodGet), http.StatusNotFound, time.Millisecond)
	m.observe("/", methodIndex(http.MethodGet), http.StatusUnauthorized, time.Millisecond)
	m.observe("/", methodIndex(http.MethodGet), http.StatusUnauthorized, time.Millisecond)
	families, err := m.reg.Gather()
	is.NoErr(err) // no series collected twice
	for _, f := range families {
		if f.GetName() != "prompts_http_request_duration_seconds" {
			continue
		}
		is.Equal(len(f.GetMetric()), 1)
		is.Equal(f.GetMetric()[0].GetHistogram().GetSampleCount(), uint64(3))
	}
}
