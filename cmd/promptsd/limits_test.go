package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/matryer/is"
)

// Unknown keys count within a window of 10 s per address; 20 block the
// address for a minute, and the block ends.
func TestKeyFailures(t *testing.T) {
	is := is.New(t)
	now := time.Unix(1_000_000, 0)
	k := newKeyFailures()
	k.now = func() time.Time { return now }
	for range unknownKeyLimit - 1 {
		k.failed("10.0.0.1")
	}
	is.Equal(k.blocked("10.0.0.1"), time.Duration(0)) // 19: not yet
	now = now.Add(unknownKeyWindow + time.Second)
	k.failed("10.0.0.1")
	is.Equal(k.blocked("10.0.0.1"), time.Duration(0)) // a new window: 1
	for range unknownKeyLimit - 1 {
		k.failed("10.0.0.1")
	}
	is.Equal(k.blocked("10.0.0.1"), unknownKeyBlock)  // 20 within the window
	is.Equal(k.blocked("10.0.0.2"), time.Duration(0)) // another address is not
	now = now.Add(unknownKeyBlock - time.Second)
	is.Equal(k.blocked("10.0.0.1"), time.Second)
	now = now.Add(time.Second)
	is.Equal(k.blocked("10.0.0.1"), time.Duration(0)) // a minute later
}

// Behind a trusted proxy, the client is the last address of
// X-Forwarded-For; else the connection's, whatever the header says.
func TestClientAddr(t *testing.T) {
	is := is.New(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.1:5555"
	r.Header.Add("X-Forwarded-For", "203.0.113.9")
	r.Header.Add("X-Forwarded-For", "198.51.100.7, 198.51.100.8")
	is.Equal(clientAddr(r, false), "192.0.2.1")
	is.Equal(clientAddr(r, true), "198.51.100.8")
	r.Header.Del("X-Forwarded-For")
	is.Equal(clientAddr(r, true), "192.0.2.1")
}

// Accept: text/event-stream lifts the request's deadline on the events
// route only.
func TestStreamDeadlineOnItsRouteOnly(t *testing.T) {
	is := is.New(t)
	var left time.Duration
	h := observed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dl, ok := r.Context().Deadline()
		is.True(ok)
		left = time.Until(dl)
	}), newAccessLog(io.Discard, slog.LevelInfo, true), newMetrics(), time.Minute)
	for _, c := range []struct {
		method, path string
		lifted       bool
	}{
		{"GET", "/v1/integration/events", true},
		{"GET", "/v1/integration/projects", false},
		{"GET", "/v1/integration/events/x", false},
		{"POST", "/v1/integration/events", false},
		{"GET", "/livez", false},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set("Accept", "text/event-stream")
		h.ServeHTTP(httptest.NewRecorder(), r)
		is.Equal(left > time.Hour, c.lifted) // c.path
	}
}
