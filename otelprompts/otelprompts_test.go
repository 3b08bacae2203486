package otelprompts_test

import (
	"testing"

	"github.com/matryer/is"
	"go.opentelemetry.io/otel/attribute"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/otelprompts"
)

func TestAttributes(t *testing.T) {
	is := is.New(t)
	a := prompts.ActivePrompt{
		Prompt:        prompts.Prompt{ID: "01M8F8FXP2MAFXYSNVFM121XSM", ProjectID: "01M8F8FXP2MAFXYSNVFM121XSN", Key: "support/greeting", Name: "Greeting"},
		Environment:   prompts.Staging,
		ActiveVersion: &prompts.PromptVersion{VersionNumber: 7, Content: "SECRET {{name}}", Metadata: `{"m":"SECRET"}`},
	}
	is.Equal(otelprompts.Attributes(a), []attribute.KeyValue{
		attribute.String("gen_ai.prompt.name", "support/greeting"),
		attribute.String("gen_ai.prompt.version", "7"),
		attribute.String("prompts.environment", "staging"),
		attribute.String("prompts.project.id", "01M8F8FXP2MAFXYSNVFM121XSN"),
		attribute.String("prompts.prompt.id", "01M8F8FXP2MAFXYSNVFM121XSM"),
	}) // the content and metadata nowhere

	a.ActiveVersion = nil // nothing active: no version
	is.Equal(otelprompts.Attributes(a)[1], attribute.String("prompts.environment", "staging"))
}
