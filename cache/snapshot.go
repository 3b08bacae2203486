package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// A Snapshot is every prompt of one project with the version active in
// each environment, as GET /v1/integration/projects/{project_id}/snapshot
// answers it (its JSON, with the format SnapshotFormat, is described in
// httpapi/openapi.yaml). A cache given one with WithFallback answers from
// it when the store is unavailable, so that an application that embeds a
// snapshot file starts and serves even when the store cannot be reached.
type Snapshot struct {
	Project prompts.Project
	TakenAt time.Time        // when it was taken
	Prompts []SnapshotPrompt // oldest first
}

// SnapshotPrompt is one prompt of a Snapshot: the prompt as of one
// revision (Prompt.Revision), and the version active in each environment
// at that revision.
type SnapshotPrompt struct {
	Prompt prompts.Prompt
	// Active holds, for each environment, the version active there, or
	// nil when none is.
	Active map[prompts.Environment]*prompts.PromptVersion
}

// ActiveIn returns the prompt with the version active in env, as
// Store.GetActive answers it.
func (p SnapshotPrompt) ActiveIn(env prompts.Environment) prompts.ActivePrompt {
	return prompts.ActivePrompt{Prompt: p.Prompt, Environment: env, ActiveVersion: p.Active[env]}
}

// SnapshotFormat names the format of a snapshot's JSON, its "format"
// member. A change that older readers could not read names a new one.
const SnapshotFormat = "prompts.snapshot/1"

// The bounds of a snapshot that TakeSnapshot takes: at most
// MaxSnapshotPrompts prompts, and at most MaxSnapshotSize bytes of their
// text (names, keys, descriptions, and the active versions' contents,
// change summaries and metadata).
const (
	MaxSnapshotPrompts = 10000
	MaxSnapshotSize    = 64 << 20
)

// ErrSnapshotTooLarge is the error of TakeSnapshot for a project past
// MaxSnapshotPrompts or MaxSnapshotSize; errors.Is tells it.
var ErrSnapshotTooLarge = errors.New("the project is too large for a snapshot")

// snapshotAttempts is how many times TakeSnapshot reads the environments
// of a prompt that changes between its reads of one and the other.
const snapshotAttempts = 5

// TakeSnapshot reads a snapshot of a project from store: every prompt of
// the project (ListPrompts, page by page) and the version active in each
// environment (GetActive), each prompt as of one revision. Give it the
// store itself rather than a cache over it: a cache that has not yet
// heard of a change may answer one environment from before it and the
// other from after. An unknown project is prompts.ErrNotFound; a project
// past the bounds is ErrSnapshotTooLarge, read no further.
func TakeSnapshot(ctx context.Context, store prompts.Store, projectID string) (*Snapshot, error) {
	project, err := store.GetProject(ctx, projectID)
	if err != nil {
		return nil, err
	}
	takenAt := time.Now().UTC().Truncate(time.Microsecond)
	var list []prompts.Prompt
	f := prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := store.ListPrompts(ctx, f)
		if err != nil {
			return nil, err
		}
		list = append(list, page...)
		if len(list) > MaxSnapshotPrompts {
			return nil, fmt.Errorf("%w: it has more than %d prompts", ErrSnapshotTooLarge, MaxSnapshotPrompts)
		}
		if !more || len(page) == 0 {
			break
		}
		f.After = page[len(page)-1].ID
	}
	s := &Snapshot{Project: project, TakenAt: takenAt, Prompts: make([]SnapshotPrompt, 0, len(list))}
	var size int64
	for _, p := range list {
		sp, err := snapshotPrompt(ctx, store, p.ID)
		if err != nil {
			return nil, err
		}
		if size += snapshotSize(sp); size > MaxSnapshotSize {
			return nil, fmt.Errorf("%w: its text passes %d bytes", ErrSnapshotTooLarge, MaxSnapshotSize)
		}
		s.Prompts = append(s.Prompts, sp)
	}
	return s, nil
}

// snapshotPrompt reads the prompt's environments until both reads saw the
// same revision.
func snapshotPrompt(ctx context.Context, store prompts.Store, id string) (SnapshotPrompt, error) {
	for range snapshotAttempts {
		sp := SnapshotPrompt{Active: make(map[prompts.Environment]*prompts.PromptVersion, len(prompts.Environments))}
		same := true
		for i, env := range prompts.Environments {
			a, err := store.GetActive(ctx, id, env)
			if err != nil {
				return SnapshotPrompt{}, err
			}
			if i == 0 {
				sp.Prompt = a.Prompt
			} else if a.Revision != sp.Prompt.Revision {
				same = false
			}
			sp.Active[env] = a.ActiveVersion
		}
		if same {
			return sp, nil
		}
	}
	return SnapshotPrompt{}, prompts.Unavailable(fmt.Errorf("cache: prompt %s changed during each of %d reads of its environments", id, snapshotAttempts))
}

// snapshotSize is the bytes of text of a prompt of a snapshot.
func snapshotSize(sp SnapshotPrompt) int64 {
	n := promptSize(sp.Prompt)
	for _, v := range sp.Active {
		if v != nil {
			n += versionSize(*v)
		}
	}
	return n
}

// MarshalJSON implements json.Marshaler: the snapshot in SnapshotFormat,
// each resource in the form its own read has (the project as the list of
// projects, the prompt as the list of prompts, a version as the read of
// one version), which ParseSnapshot reads back. It never fails.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	b := append([]byte(nil), `{"format":`...)
	b = wire.AppendString(b, SnapshotFormat)
	b = append(b, `,"taken_at":`...)
	b = wire.AppendTime(b, s.TakenAt)
	b = append(b, `,"project":`...)
	b = wire.AppendProject(b, s.Project)
	b = append(b, `,"prompts":[`...)
	for i, p := range s.Prompts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"prompt":`...)
		b = wire.AppendPrompt(b, p.Prompt)
		b = append(b, `,"revision":`...)
		b = strconv.AppendInt(b, p.Prompt.Revision, 10)
		b = append(b, `,"environments":{`...)
		for j, env := range prompts.Environments {
			if j > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, string(env))
			b = append(b, ':')
			if v := p.Active[env]; v != nil {
				b = wire.AppendVersionDetail(b, *v)
			} else {
				b = append(b, "null"...)
			}
		}
		b = append(b, "}}"...)
	}
	return append(b, "]}"...), nil
}

// The JSON of a snapshot, as ParseSnapshot reads it. Pointers tell a
// member that is absent (or null) from one that holds a zero value.
type (
	snapshotJSON struct {
		Format  *string             `json:"format"`
		TakenAt *string             `json:"taken_at"`
		Project *projectJSON        `json:"project"`
		Prompts *[]snapshotItemJSON `json:"prompts"`
	}
	projectJSON struct {
		ID          *string `json:"id"`
		Name        *string `json:"name"`
		Slug        *string `json:"slug"`
		Description *string `json:"description"`
		IsPrivate   *bool   `json:"is_private"`
		CreatedAt   *string `json:"created_at"`
	}
	snapshotItemJSON struct {
		Prompt       *promptJSON                 `json:"prompt"`
		Revision     *int64                      `json:"revision"`
		Environments map[string]*json.RawMessage `json:"environments"`
	}
	promptJSON struct {
		ID              *string         `json:"id"`
		ProjectID       *string         `json:"project_id"`
		Key             *string         `json:"key"`
		Name            *string         `json:"name"`
		Description     json.RawMessage `json:"description"` // a string or null: present either way
		LatestVersionID json.RawMessage `json:"latest_version_id"`
		CreatedAt       *string         `json:"created_at"`
	}
	versionJSON struct {
		ID            *string         `json:"id"`
		PromptID      *string         `json:"prompt_id"`
		VersionNumber *int            `json:"version_number"`
		Content       *string         `json:"content"`
		Metadata      json.RawMessage `json:"metadata_"`
		CreatedAt     *string         `json:"created_at"`
		ChangeSummary json.RawMessage `json:"change_summary"`
		Variables     *[]string       `json:"variables"`
	}
)

// ParseSnapshot reads a snapshot's JSON, as MarshalJSON writes it and the
// HTTP interface sends it. It refuses anything else with an error naming
// the first problem and where it is (as in
// `prompts[3].environments.staging.content: missing`): a document that is
// not JSON, another format, a member missing or of the wrong type, a
// malformed id, a prompt of another project, a prompt or key given twice,
// a version of another prompt, an environment that is not one. Members
// it does not know are ignored.
func ParseSnapshot(data []byte) (*Snapshot, error) {
	var doc snapshotJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError("", err)
	}
	switch {
	case doc.Format == nil:
		return nil, snapshotError("format", "missing: not a snapshot")
	case *doc.Format != SnapshotFormat:
		return nil, snapshotError("format", fmt.Sprintf("is %q; this version reads %q", *doc.Format, SnapshotFormat))
	case doc.TakenAt == nil:
		return nil, snapshotError("taken_at", "missing")
	case doc.Project == nil:
		return nil, snapshotError("project", "missing")
	case doc.Prompts == nil:
		return nil, snapshotError("prompts", "missing")
	}
	takenAt, err := parseTime(*doc.TakenAt, "taken_at")
	if err != nil {
		return nil, err
	}
	project, err := doc.Project.parse()
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Project: project, TakenAt: takenAt, Prompts: make([]SnapshotPrompt, 0, len(*doc.Prompts))}
	ids, keys := make(map[string]bool), make(map[string]bool)
	for i, item := range *doc.Prompts {
		at := "prompts[" + strconv.Itoa(i) + "]"
		sp, err := item.parse(at, project.ID)
		if err != nil {
			return nil, err
		}
		if ids[sp.Prompt.ID] {
			return nil, snapshotError(at+".prompt.id", "is given twice")
		}
		if keys[sp.Prompt.Key] {
			return nil, snapshotError(at+".prompt.key", "is given twice")
		}
		ids[sp.Prompt.ID], keys[sp.Prompt.Key] = true, true
		s.Prompts = append(s.Prompts, sp)
	}
	return s, nil
}

// UnmarshalJSON implements json.Unmarshaler with ParseSnapshot, so that a
// Snapshot inside another document reads (and refuses) the same.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	parsed, err := ParseSnapshot(data)
	if err != nil {
		return err
	}
	*s = *parsed
	return nil
}

func (p *projectJSON) parse() (prompts.Project, error) {
	const at = "project"
	switch {
	case p.ID == nil:
		return prompts.Project{}, snapshotError(at+".id", "missing")
	case !prompts.ValidID(*p.ID):
		return prompts.Project{}, snapshotError(at+".id", "is not an id")
	case p.Name == nil:
		return prompts.Project{}, snapshotError(at+".name", "missing")
	case p.Slug == nil:
		return prompts.Project{}, snapshotError(at+".slug", "missing")
	case p.Description == nil:
		return prompts.Project{}, snapshotError(at+".description", "missing")
	case p.IsPrivate == nil:
		return prompts.Project{}, snapshotError(at+".is_private", "missing")
	case p.CreatedAt == nil:
		return prompts.Project{}, snapshotError(at+".created_at", "missing")
	}
	created, err := parseTime(*p.CreatedAt, at+".created_at")
	if err != nil {
		return prompts.Project{}, err
	}
	return prompts.Project{ID: *p.ID, Name: *p.Name, Slug: *p.Slug, Description: *p.Description, IsPrivate: *p.IsPrivate, CreatedAt: created}, nil
}

func (item *snapshotItemJSON) parse(at, projectID string) (SnapshotPrompt, error) {
	switch {
	case item.Prompt == nil:
		return SnapshotPrompt{}, snapshotError(at+".prompt", "missing")
	case item.Revision == nil:
		return SnapshotPrompt{}, snapshotError(at+".revision", "missing")
	case *item.Revision < 1:
		return SnapshotPrompt{}, snapshotError(at+".revision", "must be a positive integer")
	case item.Environments == nil:
		return SnapshotPrompt{}, snapshotError(at+".environments", "missing")
	}
	p, err := item.Prompt.parse(at+".prompt", projectID)
	if err != nil {
		return SnapshotPrompt{}, err
	}
	p.Revision = *item.Revision
	sp := SnapshotPrompt{Prompt: p, Active: make(map[prompts.Environment]*prompts.PromptVersion, len(prompts.Environments))}
	for name := range item.Environments {
		if !prompts.Environment(name).Valid() {
			return SnapshotPrompt{}, snapshotError(at+".environments."+name, "is not an environment (production, staging)")
		}
	}
	for _, env := range prompts.Environments {
		where := at + ".environments." + string(env)
		raw, ok := item.Environments[string(env)]
		if !ok {
			return SnapshotPrompt{}, snapshotError(where, "missing (null when no version is active)")
		}
		if raw == nil { // null: none active
			sp.Active[env] = nil
			continue
		}
		var vj versionJSON
		if err := json.Unmarshal(*raw, &vj); err != nil {
			return SnapshotPrompt{}, jsonError(where, err)
		}
		v, err := vj.parse(where, p.ID)
		if err != nil {
			return SnapshotPrompt{}, err
		}
		sp.Active[env] = &v
	}
	return sp, nil
}

func (p *promptJSON) parse(at, projectID string) (prompts.Prompt, error) {
	switch {
	case p.ID == nil:
		return prompts.Prompt{}, snapshotError(at+".id", "missing")
	case !prompts.ValidID(*p.ID):
		return prompts.Prompt{}, snapshotError(at+".id", "is not an id")
	case p.ProjectID == nil:
		return prompts.Prompt{}, snapshotError(at+".project_id", "missing")
	case *p.ProjectID != projectID:
		return prompts.Prompt{}, snapshotError(at+".project_id", "is not the snapshot's project")
	case p.Key == nil:
		return prompts.Prompt{}, snapshotError(at+".key", "missing")
	case !prompts.ValidKey(*p.Key):
		return prompts.Prompt{}, snapshotError(at+".key", "is not a key")
	case p.Name == nil:
		return prompts.Prompt{}, snapshotError(at+".name", "missing")
	case p.CreatedAt == nil:
		return prompts.Prompt{}, snapshotError(at+".created_at", "missing")
	}
	created, err := parseTime(*p.CreatedAt, at+".created_at")
	if err != nil {
		return prompts.Prompt{}, err
	}
	out := prompts.Prompt{ID: *p.ID, ProjectID: *p.ProjectID, Key: *p.Key, Name: *p.Name, CreatedAt: created}
	if out.Description, err = nullString(p.Description, at+".description"); err != nil {
		return prompts.Prompt{}, err
	}
	latest, err := nullString(p.LatestVersionID, at+".latest_version_id")
	if err != nil {
		return prompts.Prompt{}, err
	}
	if latest != nil {
		if !prompts.ValidID(*latest) {
			return prompts.Prompt{}, snapshotError(at+".latest_version_id", "is not an id")
		}
		out.LatestVersionID = *latest
	}
	return out, nil
}

func (v *versionJSON) parse(at, promptID string) (prompts.PromptVersion, error) {
	switch {
	case v.ID == nil:
		return prompts.PromptVersion{}, snapshotError(at+".id", "missing")
	case !prompts.ValidID(*v.ID):
		return prompts.PromptVersion{}, snapshotError(at+".id", "is not an id")
	case v.PromptID == nil:
		return prompts.PromptVersion{}, snapshotError(at+".prompt_id", "missing")
	case *v.PromptID != promptID:
		return prompts.PromptVersion{}, snapshotError(at+".prompt_id", "is not the prompt's id")
	case v.VersionNumber == nil:
		return prompts.PromptVersion{}, snapshotError(at+".version_number", "missing")
	case *v.VersionNumber < 1:
		return prompts.PromptVersion{}, snapshotError(at+".version_number", "must be a positive integer")
	case v.Content == nil:
		return prompts.PromptVersion{}, snapshotError(at+".content", "missing")
	case *v.Content == "":
		return prompts.PromptVersion{}, snapshotError(at+".content", "must not be empty")
	case v.Metadata == nil:
		return prompts.PromptVersion{}, snapshotError(at+".metadata_", "missing (null when there is none)")
	case v.CreatedAt == nil:
		return prompts.PromptVersion{}, snapshotError(at+".created_at", "missing")
	case v.Variables == nil:
		return prompts.PromptVersion{}, snapshotError(at+".variables", "missing")
	}
	m := prompts.Metadata(v.Metadata)
	if err := m.Validate(); err != nil {
		return prompts.PromptVersion{}, snapshotError(at+".metadata_", "must be a JSON object or null")
	}
	created, err := parseTime(*v.CreatedAt, at+".created_at")
	if err != nil {
		return prompts.PromptVersion{}, err
	}
	out := prompts.PromptVersion{
		ID: *v.ID, PromptID: *v.PromptID, VersionNumber: *v.VersionNumber, Content: *v.Content,
		Metadata: m.Normalize(), CreatedAt: created, Variables: *v.Variables,
	}
	if out.ChangeSummary, err = nullString(v.ChangeSummary, at+".change_summary"); err != nil {
		return prompts.PromptVersion{}, err
	}
	return out, nil
}

// nullString reads a member that must be present, a string or null.
func nullString(raw json.RawMessage, at string) (*string, error) {
	if raw == nil {
		return nil, snapshotError(at, "missing (null when there is none)")
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, snapshotError(at, "must be a string or null")
	}
	return &s, nil
}

// parseTime reads an RFC 3339 time, in UTC, truncated to microseconds
// as a Store's times are.
func parseTime(s, at string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, snapshotError(at, "must be an RFC 3339 time, as 2026-11-21T22:19:26.123456Z")
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// jsonError is the error of a malformed snapshot that encoding/json
// found, in the member at (empty for the whole document): what is wrong,
// and where below at.
func jsonError(at string, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return snapshotError(at, fmt.Sprintf("not valid JSON at byte %d: %v", syntax.Offset, syntax))
	case errors.As(err, &typ):
		var want string
		switch typ.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Int, reflect.Int64:
			want = "an integer"
		case reflect.Bool:
			want = "true or false"
		case reflect.Slice:
			want = "an array"
		default:
			want = "an object"
		}
		if typ.Field != "" {
			if at != "" {
				at += "."
			}
			at += typ.Field
		}
		return snapshotError(at, fmt.Sprintf("must be %s, not a JSON %s", want, typ.Value))
	}
	return snapshotError(at, err.Error())
}

// snapshotError is the error of a malformed snapshot: at names the member
// (empty for the whole document).
func snapshotError(at, problem string) error {
	if at == "" {
		return errors.New("cache: malformed snapshot: " + problem)
	}
	return errors.New("cache: malformed snapshot: " + at + ": " + problem)
}
