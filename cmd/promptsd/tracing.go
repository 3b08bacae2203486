package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/tracestore"
)

// OpenTelemetry. The server traces only when OTEL_EXPORTER_OTLP_ENDPOINT
// or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is
// not true): then every request has a span named by its route (a child of
// the caller's span when the request has a W3C traceparent), and every
// call of the store a span under it (package internal/tracestore),
// exported over OTLP. Without them there is no SDK, no exporter and no
// layer in the handler chain: the server is the same as one built
// without tracing.
//
// The exporter reads the standard variables itself (the endpoint, the
// headers, the timeout, the compression, the certificates), and the SDK
// the service's name (OTEL_SERVICE_NAME, promptsd by default, and
// OTEL_RESOURCE_ATTRIBUTES) and the sampler (OTEL_TRACES_SAMPLER and its
// argument; by default every trace the caller did not mark unsampled).
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, or OTEL_EXPORTER_OTLP_PROTOCOL,
// chooses the exporter: grpc, or http/protobuf (the default) or
// http/json.
//
// The request spans are the server's own thin layer rather than
// otelhttp's: the route (r.Pattern) is known only once the API has
// routed the request, after otelhttp would have named its span, and the
// access log and the metrics read it from the request this layer is given,
// which the layer must set; and the layer adds nothing but the span (no
// metrics of its own, no wrapper of the body).

// tracing is the server's tracing, or nil when it is off.
type tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// newTracing returns the server's tracing as the environment (getenv, the
// process's: the exporter reads it too) asks, or nil when it asks none.
func newTracing(ctx context.Context, getenv func(string) string, logger *slog.Logger) (*tracing, error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		logger.Info("tracing off: OTEL_SDK_DISABLED is true")
		return nil, nil
	}
	name, protocol := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		name, protocol = "OTEL_EXPORTER_OTLP_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch strings.TrimSpace(protocol) {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "", "http/protobuf", "http/json":
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, fmt.Errorf("%s: %q is not a protocol promptsd exports with (grpc, http/protobuf, http/json)", name, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	// The service's name: promptsd, unless OTEL_SERVICE_NAME (or
	// OTEL_RESOURCE_ATTRIBUTES) says otherwise; later detectors win.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("promptsd")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: what could be read is kept.
		logger.Warn("tracing: the resource", "err", err)
	}
	// The SDK's own errors (an export that failed) go to the log. (The
	// handler is global: the command's, not a library's.)
	otel.SetErrorHandler(otelErrors{logger})
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)) // the sampler from OTEL_TRACES_SAMPLER
	if protocol == "" {
		protocol = "http/protobuf"
	}
	logger.Info("tracing on: spans exported over OTLP", "protocol", protocol) // never the endpoint's headers
	return &tracing{
		tp:     tp,
		tracer: tp.Tracer("github.com/promptkit/prompts/cmd/promptsd"),
		prop:   propagation.TraceContext{},
	}, nil
}

// handler returns next with a span for every request; next itself when
// tracing is off.
func (t *tracing) handler(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := methods[methodIndex(r.Method)]
		if method == "other" {
			method = "_OTHER" // as the semantic conventions name it
		}
		ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := t.tracer.Start(ctx, method, serverKind...)
		defer span.End()
		traced := r.WithContext(ctx)
		next.ServeHTTP(w, traced)
		// The route is set by whichever layer routed the request, on the
		// request it was given: the access log and the metrics read it
		// from r.
		r.Pattern = traced.Pattern
		if !span.IsRecording() {
			return // the sampler dropped it: no attribute to pay for
		}
		route := routeOf(r.Pattern)
		attrs := make([]attribute.KeyValue, 0, 5)
		attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method))
		if route != "unmatched" {
			span.SetName(method + " " + route)
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		if rec, ok := w.(*recorder); ok {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
		}
		if id := firstValue(w.Header()["X-Request-Id"]); id != "" {
			attrs = append(attrs, attribute.String("prompts.request_id", id))
		}
		if info := infoFrom(r.Context()); info != nil && info.key != "" {
			attrs = append(attrs, attribute.String("prompts.api_key.name", info.key)) // its name, never the secret
		}
		span.SetAttributes(attrs...)
	})
}

// serverKind is the option of every request's span, made once.
var serverKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// store returns s with a span for every call; s itself when tracing is
// off.
func (t *tracing) store(s prompts.Store) prompts.Store {
	if t == nil {
		return s
	}
	return tracestore.New(s, t.tp)
}

// shutdown exports the spans not yet exported, for up to 5 seconds.
func (t *tracing) shutdown(logger *slog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		logger.Warn("tracing: the last spans were not all exported", "err", err)
	}
}

// otelErrors logs the SDK's errors (an export that failed) through slog.
type otelErrors struct{ logger *slog.Logger }

func (e otelErrors) Handle(err error) { e.logger.Warn("tracing", "err", err) }
