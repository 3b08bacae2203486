package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/internal/testbin"
	"github.com/promptkit/prompts/memstore"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it keeps the spans it is
// sent, with the service name of their resource.
type otlpReceiver struct {
	url      string
	mu       sync.Mutex
	requests int
	spans    []*tracepb.Span
	services []string
	headers  []string // each export's X-Collector-Key
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.Error(w, "not an OTLP trace export", http.StatusNotFound)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.requests++
		rc.headers = append(rc.headers, r.Header.Get("X-Collector-Key"))
		for _, rs := range req.GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					rc.services = append(rc.services, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				rc.spans = append(rc.spans, ss.GetSpans()...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out) //nolint:errcheck
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

func (rc *otlpReceiver) received() (requests int, spans []*tracepb.Span, services []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests, append([]*tracepb.Span(nil), rc.spans...), append([]string(nil), rc.services...)
}

// attr is the value of a span's attribute key, as text ("" when absent).
func attr(sp *tracepb.Span, key string) string {
	for _, a := range sp.GetAttributes() {
		if a.GetKey() == key {
			return valueText(a.GetValue())
		}
	}
	return ""
}

func valueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, ",")
	}
	return v.String()
}

// everyText is every text of a span: its name, its attributes' keys and
// values, its events' names and attributes, its status.
func everyText(sp *tracepb.Span) string {
	var b strings.Builder
	b.WriteString(sp.GetName())
	for _, a := range sp.GetAttributes() {
		b.WriteString(" " + a.GetKey() + "=" + valueText(a.GetValue()))
	}
	for _, e := range sp.GetEvents() {
		b.WriteString(" event " + e.GetName())
		for _, a := range e.GetAttributes() {
			b.WriteString(" " + a.GetKey() + "=" + valueText(a.GetValue()))
		}
	}
	b.WriteString(" status " + sp.GetStatus().GetMessage())
	return b.String()
}

// TestServerTraces runs the server with OTEL_EXPORTER_OTLP_ENDPOINT at a
// receiver: a span per request, named by its route, in the caller's
// trace when it sends a traceparent, a span per store call under it, all
// exported by the time the server has stopped, and no prompt content nor
// variable value on any.
func TestServerTraces(t *testing.T) {
	is := is.New(t)
	rc := newOTLPReceiver(t)
	s := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url, "OTEL_SERVICE_NAME=prompts-test",
		"OTEL_EXPORTER_OTLP_HEADERS=x-collector-key=k-123"})
	is.True(strings.Contains(s.out.String(), "tracing on"))

	const secretContent, secretValue = "CONTENT-d1f0c2a7", "VALUE-8e41b9f3"
	var projects []project
	s.call(t, "GET", "/projects", "", &projects)
	var p prompt
	resp := s.call(t, "POST", "/prompts", `{"project_id":"`+projects[0].ID+`","key":"support/greeting","name":"Greeting"}`, &p)
	is.Equal(resp.StatusCode, 200)
	resp = s.call(t, "POST", "/prompts/"+p.ID+"/versions", `{"content":"`+secretContent+` {{name}}","environments":["production"]}`, nil)
	is.Equal(resp.StatusCode, 200)
	resp = s.call(t, "POST", "/prompts/"+p.ID+"/render", `{"environment":"production","variables":{"name":"`+secretValue+`"}}`, nil)
	is.Equal(resp.StatusCode, 200)

	// A read in the caller's trace.
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequest("GET", s.base+"/prompts/"+p.ID+"?environment=production", nil)
	is.NoErr(err)
	req.Header.Set("X-API-Key", s.key)
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	io.Copy(io.Discard, res.Body) //nolint:errcheck
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	is.NoErr(s.stop(t)) // the spans are flushed at the stop

	_, spans, services := rc.received()
	is.True(len(services) > 0)
	rc.mu.Lock()
	for _, h := range rc.headers {
		is.Equal(h, "k-123") // OTEL_EXPORTER_OTLP_HEADERS
	}
	rc.mu.Unlock()
	for _, name := range services {
		is.Equal(name, "prompts-test") // OTEL_SERVICE_NAME
	}
	byName := map[string][]*tracepb.Span{}
	for _, sp := range spans {
		byName[sp.GetName()] = append(byName[sp.GetName()], sp)
		text := everyText(sp)
		if strings.Contains(text, secretContent) || strings.Contains(text, secretValue) {
			t.Fatalf("span %q holds a prompt's content or a variable's value: %s", sp.GetName(), text)
		}
	}
	for _, name := range []string{
		"GET /v1/integration/projects",
		"POST /v1/integration/prompts",
		"POST /v1/integration/prompts/{prompt_id}/versions",
		"POST /v1/integration/prompts/{prompt_id}/render",
		"GET /v1/integration/prompts/{prompt_id}",
		"Store.CreatePrompt",
		"Store.CreateVersion",
		"Store.ReadActive",
	} {
		if len(byName[name]) == 0 {
			var names []string
			for n := range byName {
				names = append(names, n)
			}
			t.Fatalf("no span %q among %q", name, names)
		}
	}

	// The read: a server span in the caller's trace, child of its span,
	// with the route, the status and the request id; the store's read
	// under it, with the ids and the environment.
	read := byName["GET /v1/integration/prompts/{prompt_id}"]
	is.Equal(len(read), 1)
	sp := read[0]
	is.Equal(hex.EncodeToString(sp.GetTraceId()), traceID)
	is.Equal(hex.EncodeToString(sp.GetParentSpanId()), parentID)
	is.Equal(sp.GetKind(), tracepb.Span_SPAN_KIND_SERVER)
	is.Equal(attr(sp, "http.route"), "/v1/integration/prompts/{prompt_id}")
	is.Equal(attr(sp, "http.response.status_code"), "200")
	is.Equal(attr(sp, "http.request.method"), "GET")
	is.True(attr(sp, "prompts.request_id") != "")
	is.Equal(attr(sp, "prompts.api_key.name"), "default")
	var under *tracepb.Span
	for _, st := range byName["Store.ReadActive"] {
		if string(st.GetParentSpanId()) == string(sp.GetSpanId()) {
			under = st
		}
	}
	is.True(under != nil) // the store's read is a child of the request's span
	is.Equal(hex.EncodeToString(under.GetTraceId()), traceID)
	is.Equal(attr(under, "prompts.prompt.id"), p.ID)
	is.Equal(attr(under, "prompts.environment"), "production")
	is.Equal(attr(under, "prompts.version.number"), "1")

	// Without a traceparent, a request's span starts a trace of its own.
	is.Equal(len(byName["POST /v1/integration/prompts"]), 1)
	is.Equal(len(byName["POST /v1/integration/prompts"][0].GetParentSpanId()), 0)
}

// TestServerWithoutTracingVariables: without the endpoint variables, or
// with OTEL_SDK_DISABLED=true, nothing is traced: no layer in the
// handler chain, no wrapper of the store, nothing sent.
func TestServerWithoutTracingVariables(t *testing.T) {
	is := is.New(t)
	logger := slog.New(slog.DiscardHandler)
	env := func(kv ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == name {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, getenv := range []func(string) string{
		env(),
		env("OTEL_SERVICE_NAME", "x", "OTEL_TRACES_SAMPLER", "always_on"), // no endpoint
		env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1", "OTEL_SDK_DISABLED", "true"),
	} {
		tr, err := newTracing(context.Background(), getenv, logger)
		is.NoErr(err)
		is.True(tr == nil)
		h := http.NewServeMux()
		is.Equal(tr.handler(h), http.Handler(h)) // the chain as it is
		st := memstore.New()
		is.Equal(tr.store(st), st)
		tr.shutdown(logger) // nothing to flush
	}
	tr, err := newTracing(context.Background(), env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1/v1/traces"), logger)
	is.NoErr(err)
	is.True(tr != nil) // the signal's own variable is enough
	tr.shutdown(logger)

	// A process told to stay off sends nothing.
	rc := newOTLPReceiver(t)
	s := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.url, "OTEL_SDK_DISABLED=true"})
	s.call(t, "GET", "/projects", "", nil)
	is.NoErr(s.stop(t))
	requests, _, _ := rc.received()
	is.Equal(requests, 0)
	is.True(!strings.Contains(s.out.String(), "tracing on"))
}

// TestServerRefusesAnUnknownOTLPProtocol: a protocol the server cannot
// export with stops the start, naming the variable.
func TestServerRefusesAnUnknownOTLPProtocol(t *testing.T) {
	is := is.New(t)
	cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-data=")
	cmd.Env = append(os.Environ(), serverVar+"=1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL=carrier-pigeon")
	out, err := cmd.CombinedOutput()
	is.True(err != nil) // the start stops
	// slog quotes the error: its quotes come escaped.
	is.True(strings.Contains(string(out), `OTEL_EXPORTER_OTLP_PROTOCOL: \"carrier-pigeon\" is not a protocol`))
	is.True(!strings.Contains(string(out), "listening")) // before the port is taken
}

// The request's route reaches the access log (and the metrics) through
// the tracing layer, whether the sampler keeps the span or drops it; a
// kept span is named by it.
func TestTracingKeepsTheRouteForTheLog(t *testing.T) {
	for _, sampler := range []sdktrace.Sampler{sdktrace.AlwaysSample(), sdktrace.NeverSample()} {
		t.Run(sampler.Description(), func(t *testing.T) {
			is := is.New(t)
			store, id := benchServerStore(t)
			keys := httpapi.NewKeys()
			is.NoErr(keys.Add(httpapi.Key{Name: "reader", Role: httpapi.RoleRead, Secret: benchKey}))
			var out testbin.Buffer
			logs := newLogWriter(&out, logFlushEvery)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sampler))
			tr := &tracing{tp: tp, tracer: tp.Tracer("test"), prop: propagation.TraceContext{}}
			m := newMetrics()
			f := newFront(m, false)
			f.open(httpapi.New(tr.store(store), httpapi.WithAuthenticator(namedKeys{keys: keys})), nil,
				func(context.Context) (string, error) { return "memory", nil })
			h := observed(tr.handler(f), newAccessLog(logs, slog.LevelInfo, true), m, defaultRequestTimeout)
			req := httptest.NewRequest("GET", "/v1/integration/prompts/"+id+"?environment=production", nil)
			req.Header.Set("X-API-Key", benchKey)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			is.Equal(w.Code, 200)
			logs.Close() // flushes the line
			// The route, not "unmatched".
			is.True(strings.Contains(out.String(), `route=/v1/integration/prompts/{prompt_id}`))
			spans := rec.Ended()
			if sampler == sdktrace.NeverSample() {
				is.Equal(len(spans), 0)
				return
			}
			is.Equal(len(spans), 2) // the store's read, then the request
			is.Equal(spans[0].Name(), "Store.ReadActive")
			is.Equal(spans[1].Name(), "GET /v1/integration/prompts/{prompt_id}")
			is.Equal(spans[0].Parent().SpanID(), spans[1].SpanContext().SpanID())
			is.True(slices.Contains(spans[1].Attributes(), attribute.String("prompts.api_key.name", "reader")))
		})
	}
}

// grpcReceiver is an OTLP/gRPC trace receiver keeping the spans' names.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				g.names = append(g.names, sp.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over gRPC.
func TestServerTracesOverGRPC(t *testing.T) {
	is := is.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	g := &grpcReceiver{}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, g)
	go gs.Serve(ln) //nolint:errcheck
	t.Cleanup(gs.Stop)

	s := start(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + ln.Addr().String(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"})
	s.call(t, "GET", "/projects", "", nil)
	is.NoErr(s.stop(t))
	g.mu.Lock()
	defer g.mu.Unlock()
	is.True(slices.Contains(g.names, "GET /v1/integration/projects"))
	is.True(slices.Contains(g.names, "Store.ListProjects"))
}
