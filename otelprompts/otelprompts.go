// Package otelprompts gives an application the OpenTelemetry attributes
// of the prompt it used, for its own span of the model call, so that a
// trace shows which prompt, at which version, in which environment, made
// the call:
//
//	a, err := store.GetActiveByKey(ctx, projectID, "support/greeting", prompts.Production)
//	...
//	ctx, span := tracer.Start(ctx, "chat gpt-4o", trace.WithAttributes(otelprompts.Attributes(a)...))
//	defer span.End()
//
// The attributes are the GenAI semantic conventions' gen_ai.prompt.name
// (the prompt's key, unique in its project) and gen_ai.prompt.version
// (the version's number, as text: "3"), and, in the prompts.* namespace
// the standalone server's spans use too, the environment, the project's
// id and the prompt's id. gen_ai.prompt.name is in OpenTelemetry's GenAI
// registry (development status); gen_ai.prompt.version is not yet, and is
// the name that tools recording a prompt's version use; the registry has
// no name for a prompt's environment or project. None of them holds the
// prompt's content or a variable's value: an application that records
// those (gen_ai.input.messages) decides so itself.
//
// The package reads no global state and makes no span: it only names
// attributes. It depends on OpenTelemetry's attribute package, which the
// root package prompts does not.
package otelprompts

import (
	"strconv"

	"go.opentelemetry.io/otel/attribute"

	"github.com/promptkit/prompts"
)

// The attribute keys.
const (
	// PromptName is the prompt's key (GenAI semantic conventions).
	PromptName = attribute.Key("gen_ai.prompt.name")
	// PromptVersion is the version's number, as text.
	PromptVersion = attribute.Key("gen_ai.prompt.version")
	// Environment is the environment the version is active in.
	Environment = attribute.Key("prompts.environment")
	// ProjectID is the id of the prompt's project.
	ProjectID = attribute.Key("prompts.project.id")
	// PromptID is the prompt's id.
	PromptID = attribute.Key("prompts.prompt.id")
)

// Attributes returns the attributes of a, a prompt as read in an
// environment (Store.GetActive, GetActiveByKey, prompts.ReadActive):
// gen_ai.prompt.name, gen_ai.prompt.version (left out when no version is
// active), prompts.environment, prompts.project.id and prompts.prompt.id.
func Attributes(a prompts.ActivePrompt) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 5)
	kv = append(kv, PromptName.String(a.Key))
	if a.ActiveVersion != nil {
		kv = append(kv, PromptVersion.String(strconv.Itoa(a.ActiveVersion.VersionNumber)))
	}
	if a.Environment != "" {
		kv = append(kv, Environment.String(string(a.Environment)))
	}
	if a.ProjectID != "" {
		kv = append(kv, ProjectID.String(a.ProjectID))
	}
	if a.ID != "" {
		kv = append(kv, PromptID.String(a.ID))
	}
	return kv
}
