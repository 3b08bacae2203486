package api

import (
	"github.com/go-json-experiment/json/jsontext"
	"time"

	"github.com/promptkit/prompts"
)

// Project is a project as every answer has it: the list of projects, its
// read and its create.
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	Description string    `json:"description"` // may be empty, never null
	IsPrivate   bool      `json:"is_private"`
	CreatedAt   time.Time `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromProject returns the JSON form of p.
func FromProject(p prompts.Project) Project {
	return Project{ID: p.ID, Name: p.Name, Slug: p.Slug, Description: p.Description, IsPrivate: p.IsPrivate, CreatedAt: utc(p.CreatedAt)}
}

// Domain returns p as package prompts has it.
func (p Project) Domain() prompts.Project {
	return prompts.Project{ID: p.ID, Name: p.Name, Slug: p.Slug, Description: p.Description, IsPrivate: p.IsPrivate, CreatedAt: utc(p.CreatedAt)}
}

// Prompt is a prompt as its create, its update and the list of prompts
// answer it.
type Prompt struct {
	ID              string    `json:"id"`
	ProjectID       string    `json:"project_id"`
	Key             string    `json:"key"`
	Name            string    `json:"name"`
	Description     *string   `json:"description"`       // nil is null
	LatestVersionID *string   `json:"latest_version_id"` // null while the prompt has no versions
	CreatedAt       time.Time `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromPrompt returns the JSON form of p.
func FromPrompt(p prompts.Prompt) Prompt {
	return Prompt{
		ID: p.ID, ProjectID: p.ProjectID, Key: p.Key, Name: p.Name, Description: p.Description,
		LatestVersionID: idOrNull(p.LatestVersionID), CreatedAt: utc(p.CreatedAt),
	}
}

// Domain returns p as package prompts has it (without a Revision, which
// the interface sends in ETags, not in bodies).
func (p Prompt) Domain() prompts.Prompt {
	return prompts.Prompt{
		ID: p.ID, ProjectID: p.ProjectID, Key: p.Key, Name: p.Name, Description: p.Description,
		LatestVersionID: deref(p.LatestVersionID), CreatedAt: utc(p.CreatedAt),
	}
}

// ActivePrompt is a prompt with the version active in one environment, as
// the read of a prompt answers it: the prompt's fields without
// created_at, and active_version (null when nothing is active). When the
// environment holds a split, active_version is the version served (the
// one picked for the read's subject, else the split's first entry's) and
// split is the split; split is absent otherwise.
type ActivePrompt struct {
	ID              string   `json:"id"`
	ProjectID       string   `json:"project_id"`
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Description     *string  `json:"description"`
	LatestVersionID *string  `json:"latest_version_id"`
	ActiveVersion   *Version `json:"active_version"`
	Split           []Share  `json:"split,omitzero"`
}

// FromActive returns the JSON form of a.
func FromActive(a prompts.ActivePrompt) ActivePrompt {
	out := ActivePrompt{
		ID: a.ID, ProjectID: a.ProjectID, Key: a.Key, Name: a.Name, Description: a.Description,
		LatestVersionID: idOrNull(a.LatestVersionID), Split: FromSplit(a.Split),
	}
	if a.ActiveVersion != nil {
		v := FromVersion(*a.ActiveVersion)
		out.ActiveVersion = &v
	}
	return out
}

// Domain returns a as package prompts has it, in env (which the body does
// not name). Its version has no change summary or variables (the body
// has none) and its prompt no CreatedAt or Revision; a split has no
// SplitVersions (the body holds one version: the caller reads the others).
func (a ActivePrompt) Domain(env prompts.Environment) prompts.ActivePrompt {
	out := prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID: a.ID, ProjectID: a.ProjectID, Key: a.Key, Name: a.Name, Description: a.Description,
			LatestVersionID: deref(a.LatestVersionID),
		},
		Environment: env,
		Split:       DomainSplit(a.Split),
	}
	if a.ActiveVersion != nil {
		v := a.ActiveVersion.Domain()
		out.ActiveVersion = &v
	}
	return out
}

// Version is a version as its create answers it, and as the
// active_version of a read: no change_summary, no variables.
type Version struct {
	ID            string    `json:"id"`
	PromptID      string    `json:"prompt_id"`
	VersionNumber int       `json:"version_number"`
	Content       string    `json:"content"`
	Metadata      Metadata  `json:"metadata_"`
	CreatedAt     time.Time `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromVersion returns the JSON form of v without its change summary.
func FromVersion(v prompts.PromptVersion) Version {
	return Version{
		ID: v.ID, PromptID: v.PromptID, VersionNumber: v.VersionNumber, Content: v.Content,
		Metadata: Metadata(v.Metadata), CreatedAt: utc(v.CreatedAt),
	}
}

// Domain returns v as package prompts has it (Metadata normalized).
func (v Version) Domain() prompts.PromptVersion {
	return prompts.PromptVersion{
		ID: v.ID, PromptID: v.PromptID, VersionNumber: v.VersionNumber, Content: v.Content,
		Metadata: prompts.Metadata(v.Metadata).Normalize(), CreatedAt: utc(v.CreatedAt),
	}
}

// VersionDetail is a version as the version list, the read of one
// version, events and snapshots have it: Version's fields,
// change_summary, template_format, variables and partials.
type VersionDetail struct {
	Version
	ChangeSummary  *string                `json:"change_summary"`           // nil is null
	TemplateFormat prompts.TemplateFormat `json:"template_format,omitzero"` // always sent; absent in snapshots and events written before formats: plain
	Variables      []string               `json:"variables"`                // never null
	// Partials are the keys of the prompts the version includes ({{> KEY}}):
	// always sent, never null; absent in snapshots and events written
	// before partials: none.
	Partials []string `json:"partials,omitzero"`
}

// FromVersionDetail returns the JSON form of v.
func FromVersionDetail(v prompts.PromptVersion) VersionDetail {
	vars := v.Variables
	if vars == nil {
		vars = []string{}
	}
	partials := v.Partials
	if partials == nil {
		partials = []string{}
	}
	return VersionDetail{Version: FromVersion(v), ChangeSummary: v.ChangeSummary, TemplateFormat: v.TemplateFormat.Or(prompts.FormatPlain), Variables: vars, Partials: partials}
}

// Domain returns v as package prompts has it.
func (v VersionDetail) Domain() prompts.PromptVersion {
	out := v.Version.Domain()
	out.ChangeSummary, out.Variables = v.ChangeSummary, v.Variables
	out.TemplateFormat = v.TemplateFormat.Or(prompts.FormatPlain)
	if out.Partials = v.Partials; out.Partials == nil {
		out.Partials = []string{}
	}
	return out
}

// Deployment is a deployment record as the history lists it and the
// deployment.created event carries it. split is the split the environment
// holds after the change and previous_split the one it held before, each
// absent when there is none (version_id and version_number, or their
// previous_ ones, are then the split's first entry's).
type Deployment struct {
	ID                    string              `json:"id"`
	PromptID              string              `json:"prompt_id"`
	Environment           prompts.Environment `json:"environment"`
	Action                prompts.Action      `json:"action"`
	VersionID             *string             `json:"version_id"`
	VersionNumber         *int                `json:"version_number"`
	PreviousVersionID     *string             `json:"previous_version_id"`
	PreviousVersionNumber *int                `json:"previous_version_number"`
	Split                 []Share             `json:"split,omitzero"`
	PreviousSplit         []Share             `json:"previous_split,omitzero"`
	Actor                 *string             `json:"actor"`
	Reason                *string             `json:"reason"`
	CreatedAt             time.Time           `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromDeployment returns the JSON form of d.
func FromDeployment(d prompts.Deployment) Deployment {
	return Deployment{
		ID: d.ID, PromptID: d.PromptID, Environment: d.Environment, Action: d.Action,
		VersionID: d.VersionID, VersionNumber: d.VersionNumber,
		PreviousVersionID: d.PreviousVersionID, PreviousVersionNumber: d.PreviousVersionNumber,
		Split: FromSplit(d.Split), PreviousSplit: FromSplit(d.PreviousSplit),
		Actor: d.Actor, Reason: d.Reason, CreatedAt: utc(d.CreatedAt),
	}
}

// Domain returns d as package prompts has it.
func (d Deployment) Domain() prompts.Deployment {
	return prompts.Deployment{
		ID: d.ID, PromptID: d.PromptID, Environment: d.Environment, Action: d.Action,
		VersionID: d.VersionID, VersionNumber: d.VersionNumber,
		PreviousVersionID: d.PreviousVersionID, PreviousVersionNumber: d.PreviousVersionNumber,
		Split: DomainSplit(d.Split), PreviousSplit: DomainSplit(d.PreviousSplit),
		Actor: d.Actor, Reason: d.Reason, CreatedAt: utc(d.CreatedAt),
	}
}

// Rendered is the answer of a render: the version rendered, its format,
// its messages and the text parts of all of them joined; model, config
// and output from a dotprompt version's front matter, null when absent
// (and for a plain version).
type Rendered struct {
	PromptID       string                 `json:"prompt_id"`
	VersionID      string                 `json:"version_id"`
	VersionNumber  int                    `json:"version_number"`
	TemplateFormat prompts.TemplateFormat `json:"template_format"`
	Messages       []Message              `json:"messages"`
	Model          jsontext.Value         `json:"model"`
	Config         jsontext.Value         `json:"config"`
	Output         jsontext.Value         `json:"output"`
	Text           string                 `json:"text"`
}

// FromRendered returns the answer of a render of v.
func FromRendered(v prompts.PromptVersion, r prompts.Rendered) Rendered {
	out := Rendered{
		PromptID: v.PromptID, VersionID: v.ID, VersionNumber: v.VersionNumber,
		TemplateFormat: v.TemplateFormat.Or(prompts.FormatPlain), Messages: make([]Message, len(r.Messages)),
		Model: null, Config: null, Output: null, Text: r.Text,
	}
	if r.Model != "" {
		out.Model, _ = jsontext.AppendQuote(nil, r.Model)
	}
	if r.Config != "" {
		out.Config = jsontext.Value(r.Config)
	}
	if r.Output != "" {
		out.Output = jsontext.Value(r.Output)
	}
	for i, m := range r.Messages {
		out.Messages[i] = FromMessage(m)
	}
	return out
}

var null = jsontext.Value("null")

// Message is a chat message in Dotprompt's shape: {"role", "content":
// [{"text"} or {"media": {"url", "contentType"}}]}.
type Message struct {
	Role    string `json:"role"`
	Content []Part `json:"content"`
}

// Part is a text part or a media part.
type Part struct {
	Text  *string `json:"text,omitzero"`
	Media *Media  `json:"media,omitzero"`
}

// Media is a media part's reference.
type Media struct {
	URL         string `json:"url"`
	ContentType string `json:"contentType,omitzero"`
}

// FromMessage returns the JSON form of m.
func FromMessage(m prompts.Message) Message {
	out := Message{Role: m.Role, Content: make([]Part, len(m.Content))}
	for i, p := range m.Content {
		if p.Media != nil {
			out.Content[i].Media = &Media{URL: p.Media.URL, ContentType: p.Media.ContentType}
			continue
		}
		text := p.Text
		out.Content[i].Text = &text
	}
	return out
}

// Domain returns m as package prompts has it.
func (m Message) Domain() prompts.Message {
	out := prompts.Message{Role: m.Role}
	for _, p := range m.Content {
		if p.Media != nil {
			out.Content = append(out.Content, prompts.Part{Media: &prompts.Media{URL: p.Media.URL, ContentType: p.Media.ContentType}})
			continue
		}
		var text string
		if p.Text != nil {
			text = *p.Text
		}
		out.Content = append(out.Content, prompts.Part{Text: text})
	}
	return out
}

// Problem is every error answer: RFC 9457 problem details, with the
// invalid fields of a refused input.
type Problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Code   string       `json:"code"`
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError is one entry of a problem's errors: a field and what is
// wrong with it.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// FieldErrors returns the JSON form of fields.
func FieldErrors(fields []prompts.FieldError) []FieldError {
	if fields == nil {
		return nil
	}
	out := make([]FieldError, len(fields))
	for i, f := range fields {
		out[i] = FieldError{Field: f.Field, Detail: f.Detail}
	}
	return out
}

// DomainFields returns fields as package prompts has them.
func DomainFields(fields []FieldError) []prompts.FieldError {
	if fields == nil {
		return nil
	}
	out := make([]prompts.FieldError, len(fields))
	for i, f := range fields {
		out[i] = prompts.FieldError{Field: f.Field, Detail: f.Detail}
	}
	return out
}

func idOrNull(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Environment is one of a project's environments, as GET
// /projects/{project_id}/environments lists them and PUT answers.
type Environment struct {
	Name      prompts.Environment `json:"name"`
	Protected bool                `json:"protected"`
	CreatedAt time.Time           `json:"created_at,format:'2006-01-02T15:04:05.000000Z07:00'"`
}

// FromEnvironment returns the JSON form of e.
func FromEnvironment(e prompts.ProjectEnvironment) Environment {
	return Environment{Name: e.Name, Protected: e.Protected, CreatedAt: utc(e.CreatedAt)}
}

// Domain returns e as package prompts has it.
func (e Environment) Domain() prompts.ProjectEnvironment {
	return prompts.ProjectEnvironment{Name: e.Name, Protected: e.Protected, CreatedAt: utc(e.CreatedAt)}
}
