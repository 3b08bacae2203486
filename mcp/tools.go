package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// The tools' inputs and outputs. A field without omitempty is required.
type (
	listPromptsIn struct {
		Environment string `json:"environment,omitempty" jsonschema:"the environment whose active versions to show; the session's when absent"`
		Project     string `json:"project,omitempty" jsonschema:"a project's slug: its prompts only"`
		After       string `json:"after,omitempty" jsonschema:"the prompt_id of the last prompt of the previous page"`
		Limit       int    `json:"limit,omitempty" jsonschema:"at most this many prompts (1 to 1000; 100 when absent)"`
	}
	listPromptsOut struct {
		Prompts []promptOut `json:"prompts"`
		Next    string      `json:"next,omitempty" jsonschema:"when more follow: the after of the next page"`
	}
	promptOut struct {
		Name                string     `json:"name" jsonschema:"PROJECT/KEY, as prompts/list names it"`
		PromptID            string     `json:"prompt_id"`
		Project             string     `json:"project"`
		Key                 string     `json:"key"`
		Description         *string    `json:"description"`
		Environment         string     `json:"environment"`
		ActiveVersionNumber *int       `json:"active_version_number" jsonschema:"null when no version is active in the environment; the first entry's when the environment holds a split"`
		Variables           []string   `json:"variables" jsonschema:"the variables of the active version"`
		Split               []shareOut `json:"split,omitempty" jsonschema:"when the environment holds a split: its versions, each served to weight / sum of weights of subjects, in order"`
	}
	shareIn struct {
		VersionNumber int `json:"version_number" jsonschema:"a version of the prompt"`
		Weight        int `json:"weight" jsonschema:"1 to 10000: the version serves weight / sum of weights of subjects"`
	}
	shareOut struct {
		VersionNumber int `json:"version_number"`
		Weight        int `json:"weight"`
	}
	ref struct {
		Key     string `json:"key" jsonschema:"the prompt: PROJECT/KEY as prompts/list names it, or its key with project"`
		Project string `json:"project,omitempty" jsonschema:"the project's slug, when key is a key only"`
	}
	getPromptIn struct {
		ref
		Environment string  `json:"environment,omitempty" jsonschema:"the environment whose active version to read; the session's when absent"`
		Version     int     `json:"version,omitempty" jsonschema:"a version number: that version rather than the active one"`
		Subject     *string `json:"subject,omitempty" jsonschema:"who the prompt is for (a user, a session, a tenant): where the environment holds a split, the version it serves this subject (without one, the split's first entry); not empty; not with version"`
	}
	versionOut struct {
		Name           string     `json:"name"`
		PromptID       string     `json:"prompt_id"`
		Environment    string     `json:"environment,omitempty"`
		VersionID      string     `json:"version_id"`
		VersionNumber  int        `json:"version_number"`
		TemplateFormat string     `json:"template_format"`
		Content        string     `json:"content"`
		Variables      []string   `json:"variables"`
		Metadata       any        `json:"metadata_" jsonschema:"the version's metadata_: a JSON object, or null"`
		CreatedAt      time.Time  `json:"created_at"`
		Split          []shareOut `json:"split,omitempty" jsonschema:"when the environment read holds a split: its versions and weights, in order (the version is the one it serves the subject)"`
	}
	renderPromptIn struct {
		getPromptIn
		Variables   map[string]any `json:"variables,omitempty" jsonschema:"the values of the variables: strings for a plain version, any JSON for a dotprompt one"`
		AllowUnused bool           `json:"allow_unused,omitempty" jsonschema:"ignore values the version does not use, rather than refuse them"`
	}
	renderOut struct {
		Name          string       `json:"name"`
		PromptID      string       `json:"prompt_id"`
		Environment   string       `json:"environment,omitempty"`
		VersionNumber int          `json:"version_number"`
		Messages      []messageOut `json:"messages"`
		Text          string       `json:"text" jsonschema:"the text parts of all messages, joined"`
	}
	messageOut struct {
		Role    string    `json:"role" jsonschema:"system, user, model or tool"`
		Content []partOut `json:"content"`
	}
	partOut struct {
		Text  string    `json:"text,omitempty"`
		Media *mediaOut `json:"media,omitempty"`
	}
	mediaOut struct {
		URL         string `json:"url"`
		ContentType string `json:"contentType,omitempty"`
	}
	createVersionIn struct {
		ref
		Content             string         `json:"content" jsonschema:"the template"`
		ChangeSummary       string         `json:"change_summary,omitempty"`
		Metadata            map[string]any `json:"metadata_,omitempty" jsonschema:"the version's metadata_ (for dotprompt: its front matter)"`
		TemplateFormat      string         `json:"template_format,omitempty" jsonschema:"plain or dotprompt; the latest version's when absent"`
		Environments        []string       `json:"environments,omitempty" jsonschema:"activate the new version there at once (needs the deploy role)"`
		Reason              string         `json:"reason,omitempty" jsonschema:"why, for the deployment records of environments"`
		AllowVariableChange bool           `json:"allow_variable_change,omitempty"`
	}
	activateVersionIn struct {
		ref
		Environment         string    `json:"environment" jsonschema:"where to activate it"`
		VersionNumber       int       `json:"version_number,omitempty" jsonschema:"the version to activate (this or split)"`
		Split               []shareIn `json:"split,omitempty" jsonschema:"instead of version_number, a split: 2 to 10 different versions, each served to weight / sum of weights of subjects, as [{\"version_number\": 3, \"weight\": 90}, {\"version_number\": 4, \"weight\": 10}]"`
		Reason              string    `json:"reason,omitempty" jsonschema:"why, for the deployment history"`
		AllowVariableChange bool      `json:"allow_variable_change,omitempty" jsonschema:"activate even when the variables of the version (of a version of the split) differ from those active there"`
	}
	activateOut struct {
		Name          string     `json:"name"`
		PromptID      string     `json:"prompt_id"`
		Environment   string     `json:"environment"`
		VersionNumber int        `json:"version_number" jsonschema:"the version active; of a split, its first entry's"`
		Split         []shareOut `json:"split,omitempty" jsonschema:"the split the environment holds, when it holds one"`
	}
)

func (v *view) addTools() {
	notDestructive := false
	sdk.AddTool(v.server, &sdk.Tool{Name: "list_prompts", Description: "List the prompts the key may see, with the version active in an environment (role read).",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, v.listPrompts)
	sdk.AddTool(v.server, &sdk.Tool{Name: "get_prompt", Description: "Read a prompt's version: the one active in an environment, or a numbered one (role read).",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, v.getPromptTool)
	sdk.AddTool(v.server, &sdk.Tool{Name: "render_prompt", Description: "Render a prompt's version with values for its variables, to chat messages (role read).",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, v.renderPrompt)
	sdk.AddTool(v.server, &sdk.Tool{Name: "create_version", Description: "Create the next version of a prompt (role write; deploy to activate it at once in environments).",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &notDestructive}}, v.createVersion)
	sdk.AddTool(v.server, &sdk.Tool{Name: "activate_version", Description: "Make a version the active one in an environment, or split the environment between versions, each served to a share of subjects (role deploy).",
		Annotations: &sdk.ToolAnnotations{IdempotentHint: true}}, v.activateVersion)
}

// allow returns the refusal of a tool that needs a role the key has not.
func (v *view) allow(tool string, need httpapi.Role) error {
	if v.access.Role >= need && v.access.Role <= httpapi.RoleAdmin {
		return nil
	}
	return fmt.Errorf("forbidden: %s needs the %s role; this key's role is %s", tool, need, v.access.Role)
}

// environment is the tool's environment, or the session's.
func (v *view) environment(env string) (prompts.Environment, error) {
	if env == "" {
		return v.env, nil
	}
	e := prompts.Environment(env)
	return e, e.Validate()
}

func (v *view) listPrompts(ctx context.Context, _ *sdk.CallToolRequest, in listPromptsIn) (*sdk.CallToolResult, listPromptsOut, error) {
	var out listPromptsOut
	if err := v.allow("list_prompts", httpapi.RoleRead); err != nil {
		return nil, out, err
	}
	env, err := v.environment(in.Environment)
	if err != nil {
		return nil, out, err
	}
	f := prompts.PromptFilter{ProjectIDs: visible(v.access), Page: prompts.Page{Limit: in.Limit, After: in.After}}
	if in.Project != "" {
		p, err := v.project(ctx, in.Project)
		if err != nil {
			return nil, out, err
		}
		f.ProjectIDs = []string{p.ID}
	}
	page, more, err := v.h.store.ListPrompts(ctx, f)
	if err != nil {
		return nil, out, err
	}
	out.Prompts = []promptOut{}
	for _, p := range page {
		slug, err := v.h.projects.slug(ctx, v.h.store, p.ProjectID)
		if err != nil {
			return nil, out, err
		}
		ap, _, err := prompts.ReadActive(ctx, v.h.store, prompts.ActiveQuery{PromptID: p.ID, Environment: env, Shared: true})
		if errors.Is(err, prompts.ErrInvalid) && in.Project == "" {
			continue // a project without this environment: not listed
		}
		if err != nil {
			return nil, out, err
		}
		po := promptOut{Name: slug + "/" + p.Key, PromptID: p.ID, Project: slug, Key: p.Key, Description: ap.Description, Environment: string(env), Variables: []string{}}
		if ap.ActiveVersion != nil {
			n := ap.ActiveVersion.VersionNumber
			po.ActiveVersionNumber = &n
			po.Variables = append(po.Variables, ap.ActiveVersion.Variables...)
		}
		po.Split = sharesOf(ap.Split)
		out.Prompts = append(out.Prompts, po)
	}
	if more && len(page) > 0 {
		out.Next = page[len(page)-1].ID
	}
	return nil, out, nil
}

// sharesOf returns a split as the tools answer it: nil for none.
func sharesOf(s prompts.Split) []shareOut {
	if len(s) == 0 {
		return nil
	}
	out := make([]shareOut, len(s))
	for i, e := range s {
		out[i] = shareOut{VersionNumber: e.VersionNumber, Weight: e.Weight}
	}
	return out
}

// read returns the version a tool names: the numbered one, or the one
// active in env (the one its split serves subject, when it holds one),
// with the split.
func (v *view) read(ctx context.Context, p prompts.Prompt, env prompts.Environment, number int, subject string) (prompts.PromptVersion, prompts.Split, error) {
	if number != 0 {
		ver, err := v.h.store.GetVersion(ctx, p.ID, number)
		return ver, nil, err
	}
	ap, _, err := prompts.ReadActive(ctx, v.h.store, prompts.ActiveQuery{PromptID: p.ID, Environment: env, Subject: subject, Shared: true})
	if err != nil {
		return prompts.PromptVersion{}, nil, err
	}
	if ap.ActiveVersion == nil {
		return prompts.PromptVersion{}, nil, fmt.Errorf("no version of %s is active in %s", p.Key, env)
	}
	return *ap.ActiveVersion, ap.Split, nil
}

// checkSubject returns the subject of a tool's input ("" for none). It
// refuses one given empty (no subject is hashed empty: one left out is
// served the split's first entry), and one with a version number: a
// subject picks among the versions of an environment's split.
func checkSubject(in getPromptIn) (string, error) {
	switch {
	case in.Subject == nil:
		return "", nil
	case *in.Subject == "":
		return "", errors.New("subject: must not be empty: omit it to be served the split's first entry")
	case in.Version != 0:
		return "", errors.New("subject: picks the version of an environment's split; give it without version")
	}
	return *in.Subject, nil
}

func (v *view) getPromptTool(ctx context.Context, _ *sdk.CallToolRequest, in getPromptIn) (*sdk.CallToolResult, versionOut, error) {
	var out versionOut
	env, p, name, err := v.readTool(ctx, "get_prompt", in.Environment, in.ref)
	if err != nil {
		return nil, out, err
	}
	subject, err := checkSubject(in)
	if err != nil {
		return nil, out, err
	}
	ver, split, err := v.read(ctx, p, env, in.Version, subject)
	if err != nil {
		return nil, out, err
	}
	out = versionOf(name, ver)
	if in.Version == 0 {
		out.Environment = string(env)
	}
	out.Split = sharesOf(split)
	return exact(out), out, nil
}

// exact returns a result whose text is out's JSON as encoded here: the
// SDK derives the structured content from out through float64, and the
// text keeps every digit of the metadata's numbers.
func exact(out any) *sdk.CallToolResult {
	b, err := json.Marshal(out)
	if err != nil {
		return nil // the SDK's text
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}

func versionOf(name string, ver prompts.PromptVersion) versionOut {
	out := versionOut{Name: name, PromptID: ver.PromptID, VersionID: ver.ID, VersionNumber: ver.VersionNumber,
		TemplateFormat: string(ver.TemplateFormat.Or(prompts.FormatPlain)), Content: ver.Content, Variables: ver.Variables,
		CreatedAt: ver.CreatedAt}
	if !ver.Metadata.IsNull() {
		out.Metadata = json.RawMessage(ver.Metadata)
	}
	if out.Variables == nil {
		out.Variables = []string{}
	}
	return out
}

func (v *view) renderPrompt(ctx context.Context, _ *sdk.CallToolRequest, in renderPromptIn) (*sdk.CallToolResult, renderOut, error) {
	var out renderOut
	env, p, name, err := v.readTool(ctx, "render_prompt", in.Environment, in.ref)
	if err != nil {
		return nil, out, err
	}
	subject, err := checkSubject(in.getPromptIn)
	if err != nil {
		return nil, out, err
	}
	req := prompts.RenderRequest{PromptID: p.ID, Variables: in.Variables, AllowUnused: in.AllowUnused, Subject: subject}
	if req.Variables == nil {
		req.Variables = map[string]any{}
	}
	if in.Version != 0 {
		req.VersionNumber = prompts.Some(in.Version)
	} else {
		req.Environment = prompts.Some(env)
		out.Environment = string(env)
	}
	ver, r, err := v.h.render(ctx, req)
	if err != nil {
		return nil, out, err
	}
	out.Name, out.PromptID, out.VersionNumber, out.Text = name, p.ID, ver.VersionNumber, r.Text
	out.Messages = []messageOut{}
	for _, m := range r.Messages {
		mo := messageOut{Role: m.Role, Content: []partOut{}}
		for _, part := range m.Content {
			po := partOut{Text: part.Text}
			if part.Media != nil {
				po = partOut{Media: &mediaOut{URL: part.Media.URL, ContentType: part.Media.ContentType}}
			}
			mo.Content = append(mo.Content, po)
		}
		out.Messages = append(out.Messages, mo)
	}
	return nil, out, nil
}

func (v *view) createVersion(ctx context.Context, _ *sdk.CallToolRequest, in createVersionIn) (*sdk.CallToolResult, versionOut, error) {
	var out versionOut
	need := httpapi.RoleWrite
	if len(in.Environments) > 0 {
		need = httpapi.RoleDeploy
	}
	if err := v.allow("create_version", need); err != nil {
		if need == httpapi.RoleDeploy && v.allow("create_version", httpapi.RoleWrite) == nil {
			err = fmt.Errorf("%w (to create a version active in environments; without environments, write is enough)", err)
		}
		return nil, out, err
	}
	nv := prompts.NewVersion{Content: in.Content, TemplateFormat: prompts.TemplateFormat(in.TemplateFormat),
		Actor: v.access.Name, Reason: in.Reason, AllowVariableChange: in.AllowVariableChange,
		AllowProtected: v.access.Role == httpapi.RoleAdmin} // a protected environment needs admin
	if in.ChangeSummary != "" {
		nv.ChangeSummary = &in.ChangeSummary
	}
	if in.Metadata != nil {
		b, err := json.Marshal(in.Metadata)
		if err != nil {
			return nil, out, fmt.Errorf("metadata_: %w", err)
		}
		nv.Metadata = prompts.Metadata(b)
	}
	for _, e := range in.Environments {
		nv.Environments = append(nv.Environments, prompts.Environment(e))
	}
	if err := (prompts.NewVersion{PromptID: "-", Content: nv.Content, ChangeSummary: nv.ChangeSummary, Metadata: nv.Metadata,
		TemplateFormat: nv.TemplateFormat, Environments: nv.Environments, Reason: nv.Reason}).Validate(); err != nil {
		return nil, out, err // the field rules before the prompt is looked for
	}
	p, name, err := v.resolve(ctx, in.ref)
	if err != nil {
		return nil, out, err
	}
	nv.PromptID = p.ID
	ver, err := v.h.store.CreateVersion(ctx, nv)
	if err != nil {
		return nil, out, err
	}
	out = versionOf(name, ver)
	return exact(out), out, nil
}

func (v *view) activateVersion(ctx context.Context, _ *sdk.CallToolRequest, in activateVersionIn) (*sdk.CallToolResult, activateOut, error) {
	var out activateOut
	if err := v.allow("activate_version", httpapi.RoleDeploy); err != nil {
		return nil, out, err
	}
	act := prompts.Activation{PromptID: "-", Environment: prompts.Environment(in.Environment),
		Change: prompts.Change{Actor: v.access.Name, Reason: in.Reason, AllowVariableChange: in.AllowVariableChange,
			AllowProtected: v.access.Role == httpapi.RoleAdmin}} // a protected environment needs admin
	switch {
	case in.VersionNumber == 0 && in.Split == nil:
		return nil, out, errors.New("version_number: or split is required: give one of the two")
	case in.VersionNumber != 0:
		act.VersionNumber = prompts.Some(in.VersionNumber)
	}
	if in.Split != nil {
		act.Split = make(prompts.Split, len(in.Split))
		for i, e := range in.Split {
			if e.VersionNumber == 0 { // given (the schema requires it): out of range, not absent
				return nil, out, fmt.Errorf("split[%d].version_number: must be 1 to 2147483647", i)
			}
			act.Split[i] = prompts.Share{VersionNumber: e.VersionNumber, Weight: e.Weight}
		}
	}
	if err := act.Validate(); err != nil {
		return nil, out, err
	}
	p, name, err := v.resolve(ctx, in.ref)
	if err != nil {
		return nil, out, err
	}
	act.PromptID = p.ID
	ap, err := v.h.store.Activate(ctx, act)
	if err != nil {
		return nil, out, err
	}
	out = activateOut{Name: name, PromptID: p.ID, Environment: string(ap.Environment), Split: sharesOf(ap.Split)}
	if ap.ActiveVersion != nil {
		out.VersionNumber = ap.ActiveVersion.VersionNumber
	}
	return nil, out, nil
}

// readTool is the start of a tool that reads one prompt (get_prompt,
// render_prompt): the read role, in this order, then the environment
// (the session's when none is named), then the prompt named.
func (v *view) readTool(ctx context.Context, tool, envName string, r ref) (prompts.Environment, prompts.Prompt, string, error) {
	if err := v.allow(tool, httpapi.RoleRead); err != nil {
		return "", prompts.Prompt{}, "", err
	}
	env, err := v.environment(envName)
	if err != nil {
		return "", prompts.Prompt{}, "", err
	}
	p, name, err := v.resolve(ctx, r)
	return env, p, name, err
}

// resolve finds the prompt a tool names, among those the key may see: by
// key in the project named, else PROJECT/KEY, else the key in the one
// project the key may see. It returns the prompt and its PROJECT/KEY.
func (v *view) resolve(ctx context.Context, r ref) (prompts.Prompt, string, error) {
	if r.Key == "" {
		return prompts.Prompt{}, "", errors.New("key: is required")
	}
	find := func(projectID, key string) (prompts.Prompt, bool, error) {
		if !v.access.Allows(projectID) {
			return prompts.Prompt{}, false, nil
		}
		page, _, err := v.h.store.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{projectID}, Key: key, Page: prompts.Page{Limit: 1}})
		if errors.Is(err, prompts.ErrInvalid) {
			return prompts.Prompt{}, false, nil // not a well-formed key: no such prompt
		}
		if err != nil || len(page) == 0 {
			return prompts.Prompt{}, false, err
		}
		return page[0], true, nil
	}
	named := func(p prompts.Prompt) (prompts.Prompt, string, error) {
		slug, err := v.h.projects.slug(ctx, v.h.store, p.ProjectID)
		return p, slug + "/" + p.Key, err
	}
	if r.Project != "" {
		proj, err := v.project(ctx, r.Project)
		if err != nil {
			return prompts.Prompt{}, "", err
		}
		p, ok, err := find(proj.ID, r.Key)
		if err != nil || ok {
			return p, proj.Slug + "/" + p.Key, err
		}
		return prompts.Prompt{}, "", fmt.Errorf("key: no prompt %q in project %s", r.Key, proj.Slug)
	}
	if slug, key, ok := strings.Cut(r.Key, "/"); ok {
		proj, err := v.project(ctx, slug)
		switch {
		case err == nil:
			p, ok, err := find(proj.ID, key)
			if err != nil || ok {
				return p, proj.Slug + "/" + p.Key, err
			}
		case !errors.Is(err, prompts.ErrNotFound):
			return prompts.Prompt{}, "", err
		}
	}
	if !v.access.AllProjects && len(v.access.ProjectIDs) == 1 {
		p, ok, err := find(v.access.ProjectIDs[0], r.Key)
		if err != nil {
			return p, "", err
		}
		if ok {
			return named(p)
		}
	}
	return prompts.Prompt{}, "", fmt.Errorf("key: no prompt %q that this key may see (name it PROJECT/KEY, as prompts/list does, or give project)", r.Key)
}

// project returns the project with this slug (or id) that the key may see.
func (v *view) project(ctx context.Context, slugOrID string) (prompts.Project, error) {
	if prompts.ValidID(slugOrID) && v.access.Allows(slugOrID) {
		if p, err := v.h.store.GetProject(ctx, slugOrID); err == nil || !errors.Is(err, prompts.ErrNotFound) {
			return p, err
		}
	}
	f := prompts.ProjectFilter{IDs: visible(v.access), Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := v.h.store.ListProjects(ctx, f)
		if err != nil {
			return prompts.Project{}, err
		}
		for _, p := range page {
			v.h.projects.put(p)
			if p.Slug == slugOrID {
				return p, nil
			}
		}
		if !more || len(page) == 0 {
			return prompts.Project{}, &prompts.Error{Code: prompts.CodeNotFound, Message: fmt.Sprintf("project: no project %q that this key may see", slugOrID)}
		}
		f.After = page[len(page)-1].ID
	}
}
