package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/matryer/is"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/client"
	"github.com/promptkit/prompts/httpapi"
	"github.com/promptkit/prompts/memstore"
)

// headerServer is the interface, remembering the traceparent and
// tracestate of every request.
func headerServer(t *testing.T) (url string, seen func() [][2]string) {
	keys := httpapi.NewKeys()
	if err := keys.Add(httpapi.Key{Name: "admin", Role: httpapi.RoleAdmin, Secret: adminKey}); err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(memstore.New(), httpapi.WithAuthenticator(keys))
	var (
		mu  sync.Mutex
		got [][2]string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, [2]string{r.Header.Get("Traceparent"), r.Header.Get("Tracestate")})
		mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() [][2]string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}

func spanContext(t *testing.T) trace.SpanContext {
	tid, err := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex("00f067aa0ba902b7")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := trace.ParseTraceState("vendor=v1")
	if err != nil {
		t.Fatal(err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
}

// A call sends the trace of its context as W3C traceparent and tracestate,
// and nothing without one.
func TestClientSendsTraceparent(t *testing.T) {
	is := is.New(t)
	url, seen := headerServer(t)
	cl, err := client.New(url, adminKey)
	is.NoErr(err)

	_, err = cl.CreateProject(context.Background(), prompts.NewProject{Name: "P"})
	is.NoErr(err)
	is.Equal(seen(), [][2]string{{"", ""}}) // no span: no header

	ctx := trace.ContextWithSpanContext(context.Background(), spanContext(t))
	_, _, err = cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(seen(), [][2]string{{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=v1"}})
}

// WithPropagator replaces the default: an empty one sends nothing.
func TestClientWithPropagator(t *testing.T) {
	is := is.New(t)
	url, seen := headerServer(t)
	cl, err := client.New(url, adminKey, client.WithPropagator(propagation.NewCompositeTextMapPropagator()))
	is.NoErr(err)
	ctx := trace.ContextWithSpanContext(context.Background(), spanContext(t))
	_, _, err = cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(seen(), [][2]string{{"", ""}})

	cl, err = client.New(url, adminKey, client.WithPropagator(nil)) // the default
	is.NoErr(err)
	_, _, err = cl.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(seen()[0][0], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
}
