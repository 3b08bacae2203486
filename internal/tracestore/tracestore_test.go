package tracestore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/tracestore"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/storetest"
)

func newTraced(t *testing.T, next prompts.Store) (*tracestore.Store, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) }) //nolint:errcheck
	return tracestore.New(next, tp), rec
}

// The wrapper is a Store: the whole conformance suite holds over it, its
// event log included (found through Unwrap).
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock prompts.Clock) prompts.Store {
		s, _ := newTraced(t, memstore.New(memstore.WithClock(clock)))
		return s
	})
}

// Nothing is lost by wrapping: the event log and the webhooks of the
// store under it are found, and its reads are fresh past the wrapper.
func TestAbilitiesPassThrough(t *testing.T) {
	is := is.New(t)
	under := memstore.New()
	s, _ := newTraced(t, under)
	log, ok := prompts.EventLogOf(s)
	is.True(ok)
	is.Equal(log, prompts.EventLog(under))
	hooks, ok := prompts.WebhookStoreOf(s)
	is.True(ok)
	is.Equal(hooks, prompts.WebhookStore(under))
	is.Equal(s.Unwrap(), prompts.Store(under))
	var _ prompts.ActiveReader = s
}

// Each call is one span, named by the method, with the ids and the
// environment, never the content nor the metadata; a failure of the
// client's (not found) is an attribute, not an error status.
func TestSpans(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, rec := newTraced(t, memstore.New())
	const secret = "SECRET-4b2e"
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "N"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: secret + " {{x}}", Metadata: `{"m":"` + secret + `"}`,
		Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	a, stale, err := s.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "k", Environment: prompts.Production, Shared: true})
	is.NoErr(err)
	is.True(!stale)
	is.Equal(a.ActiveVersion.VersionNumber, 1)
	_, err = s.GetVersion(ctx, p.ID, 9)
	is.True(prompts.ErrorCode(err) == prompts.CodeNotFound)

	spans := rec.Ended()
	var names []string
	for _, sp := range spans {
		names = append(names, sp.Name())
		for _, kv := range sp.Attributes() {
			is.True(!strings.Contains(kv.Value.String(), secret)) // never the content or metadata
		}
		is.Equal(len(sp.Events()), 0)
	}
	is.Equal(names, []string{"Store.CreateProject", "Store.CreatePrompt", "Store.CreateVersion", "Store.ReadActive", "Store.GetVersion"})
	has := func(i int, kv attribute.KeyValue) bool {
		for _, a := range spans[i].Attributes() {
			if a == kv {
				return true
			}
		}
		return false
	}
	is.True(has(3, tracestore.ProjectID.String(proj.ID)))
	is.True(has(3, tracestore.PromptKey.String("k")))
	is.True(has(3, tracestore.Environment.String("production")))
	is.True(has(3, tracestore.PromptID.String(p.ID)))
	is.True(has(3, tracestore.VersionNumber.Int(1)))
	is.True(has(3, tracestore.Stale.Bool(false)))
	is.True(has(4, tracestore.ErrorType.String("not_found")))
	is.Equal(spans[4].Status().Code.String(), "Unset") // the client's error, not the store's
}

// A store's failure of its own is an error status, with its code only.
func TestUnavailableIsAnError(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, rec := newTraced(t, memstore.New())
	_, err := s.GetPrompt(ctx, prompts.NewID(time.Now()))
	is.True(err != nil)
	sp := rec.Ended()[0]
	is.Equal(sp.Status().Code.String(), "Error")
	is.Equal(sp.Status().Description, string(prompts.ErrorCode(err)))
}
