package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/promptkit/prompts/httpapi"
)

// requestInfo is what the layers of one request tell the access log, and
// when the request started (the store's watch judges a failure by it). It
// travels in the request's context, which holds it (requestContext).
type requestInfo struct {
	start time.Time
	key   string        // the API key's name, once authenticated
	req   *http.Request // the request as it came (its client's address)
}

// requestState is what the server keeps of one request, in the one
// allocation it makes for it: the request's context (with its
// requestInfo), the writer, the request with that context, and the
// request id, its text and its header value. It is at most 512 bytes
// (TestRequestStateSize): a larger object is allocated with a malloc
// header, in a size class whose allocation and scanning cost more, which
// was a tenth of what the server adds to a read (BENCHMARKS.md). That is
// why the requestInfo is the context's own rather than a field beside it
// with a pointer to it.
type requestState struct {
	ctx    requestContext
	rec    recorder
	req    http.Request
	id     [1]string
	idText [ulid.EncodedSize]byte
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
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
		// One allocation for all of the request's state.
		all := &requestState{rec: recorder{ResponseWriter: w}}
		ctx, rec, info := &all.ctx, &all.rec, &all.ctx.info
		info.start, info.req = clock.now(), r
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
		ctx.init(r.Context(), deadline)
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

// isStream reports whether r asks for the stream of events: GET
// /v1/integration/events with Accept: text/event-stream, or the stream of
// an MCP session (GET /mcp). On any other
// route the header changes nothing, the request's deadline included.
func isStream(r *http.Request) bool {
	if isMCPStream(r) {
		return true
	}
	if r.URL.Path != "/v1/integration/events" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	for _, a := range r.Header["Accept"] {
		if strings.Contains(a, "event-stream") { // the rare case, read fully
			return httpapi.IsEventStream(r)
		}
	}
	return false
}

// firstValue is the first of a header's values, or "", as Header.Get
// answers it.
func firstValue(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}
