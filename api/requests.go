package api

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// The bodies of the requests. A member that is absent or null is the zero
// value unless its type is Optional; Domain returns the domain's input,
// which the server completes (ids from the path, the actor, the
// idempotency) and validates.

// NewProject is the body of POST /projects.
type NewProject struct {
	Name        string           `json:"name"`
	Slug        Optional[string] `json:"slug,omitzero"`
	Description Optional[string] `json:"description,omitzero"`
	IsPrivate   bool             `json:"is_private,omitzero"`
}

// Domain returns the input of Store.CreateProject.
func (in NewProject) Domain() prompts.NewProject {
	return prompts.NewProject{Name: in.Name, Slug: in.Slug.Value, Description: in.Description.Value, IsPrivate: in.IsPrivate}
}

// NewPrompt is the body of POST /prompts.
type NewPrompt struct {
	ProjectID   string           `json:"project_id"`
	Key         string           `json:"key"`
	Name        string           `json:"name"`
	Description Optional[string] `json:"description,omitzero"`
}

// Domain returns the input of Store.CreatePrompt.
func (in NewPrompt) Domain() prompts.NewPrompt {
	return prompts.NewPrompt{ProjectID: in.ProjectID, Key: in.Key, Name: in.Name, Description: in.Description.Ptr()}
}

// PromptUpdate is the body of PATCH /prompts/{prompt_id}: an absent
// member stays unchanged; description null clears it.
type PromptUpdate struct {
	Key         Optional[string] `json:"key,omitzero"`
	Name        Optional[string] `json:"name,omitzero"`
	Description Optional[string] `json:"description,omitzero"`
}

// Domain returns the input of Store.UpdatePrompt.
func (in PromptUpdate) Domain() prompts.PromptUpdate {
	return prompts.PromptUpdate{Key: in.Key.Domain(), Name: in.Name.Domain(), Description: in.Description.Domain()}
}

// FromPromptUpdate returns the body of in.
func FromPromptUpdate(in prompts.PromptUpdate) PromptUpdate {
	return PromptUpdate{Key: Optional[string](in.Key), Name: Optional[string](in.Name), Description: Optional[string](in.Description)}
}

// NewVersion is the body of POST /prompts/{prompt_id}/versions.
type NewVersion struct {
	Content             string                `json:"content"`
	ChangeSummary       Optional[string]      `json:"change_summary,omitzero"`
	Metadata            Metadata              `json:"metadata_,omitzero"`
	TemplateFormat      Optional[string]      `json:"template_format,omitzero"` // absent or null: the latest version's
	Environments        []prompts.Environment `json:"environments,omitzero"`
	AllowVariableChange bool                  `json:"allow_variable_change,omitzero"`
	Reason              Optional[string]      `json:"reason,omitzero"`
}

// Domain returns the input of Store.CreateVersion for the prompt
// promptID.
func (in NewVersion) Domain(promptID string) prompts.NewVersion {
	return prompts.NewVersion{
		PromptID: promptID, Content: in.Content, ChangeSummary: in.ChangeSummary.Ptr(),
		Metadata: prompts.Metadata(in.Metadata), Environments: in.Environments,
		Reason: in.Reason.Value, AllowVariableChange: in.AllowVariableChange,
		TemplateFormat: prompts.TemplateFormat(in.TemplateFormat.Value),
	}
}

// FromNewVersion returns the body of in.
func FromNewVersion(in prompts.NewVersion) NewVersion {
	out := NewVersion{
		Content: in.Content, Environments: in.Environments, AllowVariableChange: in.AllowVariableChange,
		Metadata: Metadata(in.Metadata.Normalize()),
	}
	if in.ChangeSummary != nil {
		out.ChangeSummary = Some(*in.ChangeSummary)
	}
	if in.Reason != "" {
		out.Reason = Some(in.Reason)
	}
	if in.TemplateFormat != "" {
		out.TemplateFormat = Some(string(in.TemplateFormat))
	}
	return out
}

// Activation is the body of PUT /prompts/{prompt_id}/environments/{environment}:
// version_id or version_number, exactly one.
type Activation struct {
	VersionID           Optional[string] `json:"version_id,omitzero"`
	VersionNumber       VersionNumber    `json:"version_number,omitzero"`
	Reason              Optional[string] `json:"reason,omitzero"`
	AllowVariableChange bool             `json:"allow_variable_change,omitzero"`
}

// Rollback is the body of POST /prompts/{prompt_id}/environments/{environment}/rollback,
// which may be left out.
type Rollback struct {
	Reason              Optional[string] `json:"reason,omitzero"`
	AllowVariableChange bool             `json:"allow_variable_change,omitzero"`
}

// Render is the body of POST /prompts/{prompt_id}/render: an environment
// or a version number (neither: production), and the variables' values.
type Render struct {
	Environment   Optional[prompts.Environment] `json:"environment,omitzero"`
	VersionNumber VersionNumber                 `json:"version_number,omitzero"`
	Variables     Variables                     `json:"variables,omitzero"`
}

// Domain returns the render request for the prompt promptID.
func (in Render) Domain(promptID string) prompts.RenderRequest {
	return prompts.RenderRequest{
		PromptID: promptID, Environment: in.Environment.Domain(),
		VersionNumber: prompts.Optional[int](in.VersionNumber), Variables: in.Variables,
	}
}

// NewWebhook is the body of POST /webhooks: events empty or null for
// every type, project_id null for every project the key may see.
type NewWebhook struct {
	URL       string              `json:"url"`
	Events    []prompts.EventType `json:"events,omitzero"`
	ProjectID Optional[string]    `json:"project_id,omitzero"`
}

// Variables are the values of a render's variables: an object whose
// values are all strings (null is none of them).
type Variables map[string]string

// UnmarshalJSON reads an object of strings; null leaves v nil.
func (v *Variables) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = nil
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errNotStrings
	}
	out := Variables{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next read voids tok
		val, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if val.Kind() != '"' {
			return errNotStrings
		}
		out[name] = val.String()
	}
	*v = out
	return nil
}

var errNotStrings = errors.New("api: variables must be an object whose values are strings")
