package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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
