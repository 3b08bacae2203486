package otelprompts_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
	"github.com/promptkit/prompts/otelprompts"
)

// An application reads its prompt, and puts the prompt's attributes on its
// own span of the model call.
func Example() {
	ctx := context.Background()
	store, projectID := exampleStore(ctx) // or a client of the server

	// The application's tracer (here one that records its spans).
	rec := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("app")

	a, err := store.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
	if err != nil {
		log.Fatal(err)
	}
	_, span := tracer.Start(ctx, "chat gpt-4o", trace.WithAttributes(otelprompts.Attributes(a)...))
	// ... render a.ActiveVersion, call the model ...
	span.End()

	for _, kv := range rec.Ended()[0].Attributes() {
		if kv.Key == otelprompts.PromptName || kv.Key == otelprompts.PromptVersion || kv.Key == otelprompts.Environment {
			fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
		}
	}
	// Output:
	// gen_ai.prompt.name=support/greeting
	// gen_ai.prompt.version=2
	// prompts.environment=production
}

// exampleStore holds the prompt support/greeting, its version 2 active in
// production.
func exampleStore(ctx context.Context) (prompts.Store, string) {
	s := memstore.New()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "Support"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting"})
	if err != nil {
		log.Fatal(err)
	}
	for _, content := range []string{"Hello {{name}}.", "Hello {{name}}, how can I help?"} {
		if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: []prompts.Environment{prompts.Production}}); err != nil {
			log.Fatal(err)
		}
	}
	return s, proj.ID
}
