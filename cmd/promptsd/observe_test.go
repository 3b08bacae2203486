package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkObserved is what the access log (off, as in the load
// harness), the request id and the metrics add to a request, against the
// same mux alone (BenchmarkMux).
func BenchmarkObserved(b *testing.B) {
	benchmarkRoute(b, func(h http.Handler) http.Handler { return observed(h, slog.New(slog.DiscardHandler), newMetrics()) })
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
