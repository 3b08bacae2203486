package api

import (
	"bytes"
	stdjson "encoding/json"
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
	// AllowMissingPartials turns the partials guard off for Environments.
	AllowMissingPartials bool             `json:"allow_missing_partials,omitzero"`
	Reason               Optional[string] `json:"reason,omitzero"`
}

// check refuses a template_format given as "": absent or null takes the
// prompt's latest version's format, and any string but plain or
// dotprompt is refused, the empty one too.
func (in *NewVersion) check() []prompts.FieldError {
	if in.TemplateFormat.Set && !in.TemplateFormat.Null && in.TemplateFormat.Value == "" {
		return []prompts.FieldError{{Field: "template_format", Detail: `is "", not a known template format: plain or dotprompt (leave it out, or null, for the format of the prompt's latest version)`}}
	}
	return nil
}

// Domain returns the input of Store.CreateVersion for the prompt
// promptID.
func (in NewVersion) Domain(promptID string) prompts.NewVersion {
	return prompts.NewVersion{
		PromptID: promptID, Content: in.Content, ChangeSummary: in.ChangeSummary.Ptr(),
		Metadata: prompts.Metadata(in.Metadata), Environments: in.Environments,
		Reason: in.Reason.Value, AllowVariableChange: in.AllowVariableChange, AllowMissingPartials: in.AllowMissingPartials,
		TemplateFormat: prompts.TemplateFormat(in.TemplateFormat.Value),
	}
}

// FromNewVersion returns the body of in.
func FromNewVersion(in prompts.NewVersion) NewVersion {
	out := NewVersion{
		Content: in.Content, Environments: in.Environments, AllowVariableChange: in.AllowVariableChange,
		AllowMissingPartials: in.AllowMissingPartials, Metadata: Metadata(in.Metadata.Normalize()),
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
// version_id, version_number or split, exactly one.
type Activation struct {
	VersionID     Optional[string] `json:"version_id,omitzero"`
	VersionNumber VersionNumber    `json:"version_number,omitzero"`
	// Split makes the environment hold a split of 2 to 10 versions.
	Split               SplitRequest     `json:"split,omitzero"`
	Reason              Optional[string] `json:"reason,omitzero"`
	AllowVariableChange bool             `json:"allow_variable_change,omitzero"`
	// AllowMissingPartials turns the partials guard off.
	AllowMissingPartials bool `json:"allow_missing_partials,omitzero"`
}

// Rollback is the body of POST /prompts/{prompt_id}/environments/{environment}/rollback,
// which may be left out.
type Rollback struct {
	Reason              Optional[string] `json:"reason,omitzero"`
	AllowVariableChange bool             `json:"allow_variable_change,omitzero"`
	// AllowMissingPartials turns the partials guard off.
	AllowMissingPartials bool `json:"allow_missing_partials,omitzero"`
}

// PutEnvironment is the body of PUT
// /projects/{project_id}/environments/{name}, which may be left out:
// protected absent is false.
type PutEnvironment struct {
	Protected bool `json:"protected,omitzero"`
}

// Render is the body of POST /prompts/{prompt_id}/render: an environment
// or a version number (neither: production), the variables' values, and
// for a dotprompt version its @ data (context) and history. Subject, with
// an environment that holds a split, renders the version the split serves
// it, and picks each partial's version for it too
// (prompts.RenderRequest.Subject); given empty, it is refused (null is
// none, as absent).
type Render struct {
	Environment   Optional[prompts.Environment] `json:"environment,omitzero"`
	VersionNumber VersionNumber                 `json:"version_number,omitzero"`
	Subject       Optional[string]              `json:"subject,omitzero"`
	Variables     Variables                     `json:"variables,omitzero"`
	AllowUnused   bool                          `json:"allow_unused,omitzero"`
	History       History                       `json:"history,omitzero"`
	Context       Context                       `json:"context,omitzero"`
}

// check refuses a subject given empty: the interface hashes no empty
// subject, and one left out is served the split's first entry.
func (in *Render) check() []prompts.FieldError {
	if in.Subject.Set && !in.Subject.Null && in.Subject.Value == "" {
		return []prompts.FieldError{{Field: "subject", Detail: "must not be empty: omit it to be served the split's first entry"}}
	}
	return nil
}

// Domain returns the render request for the prompt promptID.
func (in Render) Domain(promptID string) prompts.RenderRequest {
	out := prompts.RenderRequest{
		PromptID: promptID, Environment: in.Environment.Domain(),
		VersionNumber: prompts.Optional[int](in.VersionNumber), Variables: in.Variables,
		Context: in.Context, AllowUnused: in.AllowUnused, Subject: in.Subject.Value,
	}
	for _, m := range in.History {
		out.History = append(out.History, m.Domain())
	}
	return out
}

// NewWebhook is the body of POST /webhooks: events empty or null for
// every type, project_id null for every project the key may see.
type NewWebhook struct {
	URL       string              `json:"url"`
	Events    []prompts.EventType `json:"events,omitzero"`
	ProjectID Optional[string]    `json:"project_id,omitzero"`
}

// Variables are the values of a render's variables: an object whose
// values are any JSON (a plain version takes strings only, which the
// render checks); numbers are json.Number, keeping every digit.
type Variables map[string]any

// UnmarshalJSON reads an object; null leaves v nil.
func (v *Variables) UnmarshalJSON(b []byte) error {
	m, err := decodeObject(b)
	*v = m
	return err
}

// UnmarshalJSONFrom reads an object from dec, as UnmarshalJSON does, in
// one pass over the tokens: DecodeRequest, and Unmarshal, read it so.
func (v *Variables) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeObjectFrom(dec)
	*v = m
	return err
}

// Context is a render's Dotprompt @ data: an object, null for none.
type Context map[string]any

// UnmarshalJSON reads an object; null leaves c nil.
func (c *Context) UnmarshalJSON(b []byte) error {
	m, err := decodeObject(b)
	*c = m
	return err
}

// UnmarshalJSONFrom reads an object from dec, as UnmarshalJSON does.
func (c *Context) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeObjectFrom(dec)
	*c = m
	return err
}

// decodeObjectFrom reads a JSON object from dec as decodeObject decodes
// it (numbers as json.Number, null as nil), without a second decoder
// that scans the value again: the variables of a render were a third of
// decoding its request. A value that is not an object or null is read
// whole and refused.
func decodeObjectFrom(dec *jsontext.Decoder) (map[string]any, error) {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return nil, err
	case '{':
		v, err := decodeValue(dec)
		if err != nil {
			return nil, err
		}
		return v.(map[string]any), nil
	}
	if err := dec.SkipValue(); err != nil {
		return nil, err
	}
	return nil, errNotObject
}

// decodeValue reads the next value of dec as encoding/json decodes it
// into an any with UseNumber: objects as map[string]any (the last of a
// name given twice, should the decoder allow it), arrays as []any,
// numbers as json.Number with their text.
func decodeValue(dec *jsontext.Decoder) (any, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	case '0':
		v, err := dec.ReadValue()
		return stdjson.Number(v), err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	}
	return tok.String(), nil
}

// decodeObject decodes a JSON object with numbers as json.Number; null
// is nil.
func decodeObject(b []byte) (map[string]any, error) {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil, nil
	}
	dec := stdjson.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errNotObject
	}
	return m, nil
}

var errNotObject = errors.New("api: must be a JSON object")
