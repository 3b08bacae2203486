package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/promptkit/prompts/httpapi"
)

// BenchmarkServerReadTraced is BenchmarkServerRead with tracing on: the
// request's span and the store's, every one sampled, batched to an
// exporter that discards them (the export's own cost, the encoding and
// the sending, is on the batcher's goroutine: the load harness's -traced
// measures it with the rest).
// The sub-benchmark sampled-1pct keeps one trace in a hundred
// (OTEL_TRACES_SAMPLER=parentbased_traceidratio, ARG 0.01): the cost of
// the spans that are not recorded.
func BenchmarkServerReadTraced(b *testing.B) {
	b.Run("always", func(b *testing.B) { benchmarkServerReadTraced(b, sdktrace.AlwaysSample()) })
	b.Run("sampled-1pct", func(b *testing.B) {
		benchmarkServerReadTraced(b, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)))
	})
}

func benchmarkServerReadTraced(b *testing.B, sampler sdktrace.Sampler) {
	store, id := benchServerStore(b)
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "bench", Role: httpapi.RoleAdmin, Secret: benchKey}); err != nil {
		b.Fatal(err)
	}
	logs := newLogWriter(io.Discard, logFlushEvery)
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sampler))
	defer tp.Shutdown(context.Background()) //nolint:errcheck
	tr := &tracing{tp: tp, tracer: tp.Tracer("bench"), prop: propagation.TraceContext{}}
	m := newMetrics()
	f := newFront(m, true)
	api := httpapi.New(tr.store(store), httpapi.WithAuthenticator(namedKeys{keys: keys}), httpapi.WithLogger(logger),
		httpapi.WithErrorObserver(func(*http.Request, error) {}))
	f.open(api, nil, func(context.Context) (string, error) { return "memory", nil })
	benchServe(b, notInlined(tr.handler(f), newAccessLog(logs, slog.LevelInfo, true), m, defaultRequestTimeout), id)
}
