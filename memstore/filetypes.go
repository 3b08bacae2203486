package memstore

import (
	"encoding/json"
	"time"

	"github.com/promptkit/prompts"
)

// The domain's values as the journal holds them. The field names are the
// journal's format, kept from the releases that wrote the domain's types
// directly: a file written by one opens in the next. Each type but
// fileVersion has the fields of its domain type, so that a conversion
// moves one to the other.

type fileProject struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	Description string    `json:"description"`
	IsPrivate   bool      `json:"is_private"`
	CreatedAt   time.Time `json:"created_at"`
}

type filePrompt struct {
	ID              string    `json:"id"`
	ProjectID       string    `json:"project_id"`
	Key             string    `json:"key"`
	Name            string    `json:"name"`
	Description     *string   `json:"description"`
	LatestVersionID string    `json:"latest_version_id"`
	CreatedAt       time.Time `json:"created_at"`
	Revision        int64     `json:"revision"`
	Replayed        bool      `json:"-"`
}

type fileVersion struct {
	ID            string          `json:"id"`
	PromptID      string          `json:"prompt_id"`
	VersionNumber int             `json:"version_number"`
	Content       string          `json:"content"`
	ChangeSummary *string         `json:"change_summary"`
	Metadata      json.RawMessage `json:"metadata_"` // the object as it is, or null
	CreatedAt     time.Time       `json:"created_at"`
	Variables     []string        `json:"variables"`
	// TemplateFormat is absent in files written before formats existed:
	// those versions are plain.
	TemplateFormat prompts.TemplateFormat `json:"template_format,omitempty"`
	// Inputs are the typed inputs of a version with an input schema
	// (prompts.Signature.Inputs), absent for any other; files written
	// before they existed have none, so a dotprompt version stored then
	// keeps the variables it had and types none.
	Inputs []string `json:"inputs,omitempty"`
	// Partials are absent in files written before partials existed: those
	// versions include none.
	Partials []string `json:"partials,omitempty"`
}

func fileVersionOf(v prompts.PromptVersion) fileVersion {
	fv := fileVersion{
		ID: v.ID, PromptID: v.PromptID, VersionNumber: v.VersionNumber, Content: v.Content,
		ChangeSummary: v.ChangeSummary, CreatedAt: v.CreatedAt, Variables: v.Variables,
		TemplateFormat: v.TemplateFormat, Partials: v.Partials,
	}
	if len(fv.Partials) == 0 {
		fv.Partials = nil // absent: the format of files without partials
	}
	if !v.Metadata.IsNull() {
		fv.Metadata = json.RawMessage(v.Metadata)
	}
	return fv
}

func (fv fileVersion) version() prompts.PromptVersion {
	v := prompts.PromptVersion{
		ID: fv.ID, PromptID: fv.PromptID, VersionNumber: fv.VersionNumber, Content: fv.Content,
		ChangeSummary: fv.ChangeSummary, CreatedAt: fv.CreatedAt, Variables: fv.Variables,
		TemplateFormat: fv.TemplateFormat.Or(prompts.FormatPlain), Partials: fv.Partials,
	}
	if v.Partials == nil {
		v.Partials = []string{}
	}
	if m := prompts.Metadata(fv.Metadata); !m.IsNull() {
		v.Metadata = m
	}
	return v
}

func fileVersionsOf(vs []prompts.PromptVersion, ins [][]string) []fileVersion {
	if vs == nil {
		return nil
	}
	out := make([]fileVersion, len(vs))
	for i, v := range vs {
		out[i] = fileVersionOf(v)
		if len(ins[i]) > 0 {
			out[i].Inputs = ins[i]
		}
	}
	return out
}

func versionsOf(fvs []fileVersion) []prompts.PromptVersion {
	if fvs == nil {
		return nil
	}
	out := make([]prompts.PromptVersion, len(fvs))
	for i, fv := range fvs {
		out[i] = fv.version()
	}
	return out
}

type fileDeployment struct {
	ID                    string              `json:"id"`
	PromptID              string              `json:"prompt_id"`
	Environment           prompts.Environment `json:"environment"`
	Action                prompts.Action      `json:"action"`
	VersionID             *string             `json:"version_id"`
	VersionNumber         *int                `json:"version_number"`
	PreviousVersionID     *string             `json:"previous_version_id"`
	PreviousVersionNumber *int                `json:"previous_version_number"`
	// Split and PreviousSplit are absent when nil, as in files written
	// before splits.
	Split         []fileShare `json:"split,omitempty"`
	PreviousSplit []fileShare `json:"previous_split,omitempty"`
	Actor         *string     `json:"actor"`
	Reason        *string     `json:"reason"`
	CreatedAt     time.Time   `json:"created_at"`
}

func fileDeploymentOf(d prompts.Deployment) fileDeployment {
	return fileDeployment{
		ID: d.ID, PromptID: d.PromptID, Environment: d.Environment, Action: d.Action,
		VersionID: d.VersionID, VersionNumber: d.VersionNumber,
		PreviousVersionID: d.PreviousVersionID, PreviousVersionNumber: d.PreviousVersionNumber,
		Split: fileSplitOf(d.Split), PreviousSplit: fileSplitOf(d.PreviousSplit),
		Actor: d.Actor, Reason: d.Reason, CreatedAt: d.CreatedAt,
	}
}

func (fd fileDeployment) deployment() prompts.Deployment {
	return prompts.Deployment{
		ID: fd.ID, PromptID: fd.PromptID, Environment: fd.Environment, Action: fd.Action,
		VersionID: fd.VersionID, VersionNumber: fd.VersionNumber,
		PreviousVersionID: fd.PreviousVersionID, PreviousVersionNumber: fd.PreviousVersionNumber,
		Split: splitOf(fd.Split), PreviousSplit: splitOf(fd.PreviousSplit),
		Actor: fd.Actor, Reason: fd.Reason, CreatedAt: fd.CreatedAt,
	}
}

// fileShare is an entry of a split: of one an environment holds, or of a
// deployment record's.
type fileShare struct {
	VersionID     string `json:"version_id"`
	VersionNumber int    `json:"version_number"`
	Weight        int    `json:"weight"`
}

func fileSplitOf(sp prompts.Split) []fileShare {
	return convertAll(sp, func(e prompts.Share) fileShare { return fileShare(e) })
}

// splitOf returns the split of fs, nil for none (nil or empty).
func splitOf(fs []fileShare) prompts.Split {
	if len(fs) == 0 {
		return nil
	}
	return convertAll(fs, func(e fileShare) prompts.Share { return prompts.Share(e) })
}

// fileEnvironments is a project's environments, all of them, built-in
// ones first.
type fileEnvironments struct {
	ProjectID string            `json:"project_id"`
	List      []fileEnvironment `json:"list"`
}

type fileEnvironment struct {
	Name      prompts.Environment `json:"name"`
	Protected bool                `json:"protected"`
	CreatedAt time.Time           `json:"created_at"`
}

func fileEnvironmentsOf(projectID string, l []prompts.ProjectEnvironment) *fileEnvironments {
	return &fileEnvironments{ProjectID: projectID,
		List: convertAll(l, func(e prompts.ProjectEnvironment) fileEnvironment { return fileEnvironment(e) })}
}

type fileWebhook struct {
	ID         string              `json:"id"`
	URL        string              `json:"url"`
	Events     []prompts.EventType `json:"events"`
	ProjectIDs []string            `json:"project_ids"`
	Secret     string              `json:"secret"`
	CreatedAt  time.Time           `json:"created_at"`
}

type fileAttempt struct {
	ID         string        `json:"id"`
	WebhookID  string        `json:"webhook_id"`
	EventID    int64         `json:"event_id"`
	Attempt    int           `json:"attempt"`
	At         time.Time     `json:"at"`
	StatusCode int           `json:"status_code"`
	Error      string        `json:"error"`
	Duration   time.Duration `json:"duration"`
}

type fileIdemRecord struct {
	Op            string              `json:"op"`
	Request       string              `json:"request"`
	At            time.Time           `json:"at"`
	PromptID      string              `json:"prompt_id"`
	VersionID     string              `json:"version_id,omitempty"`
	VersionNumber int                 `json:"version_number,omitempty"`
	Environment   prompts.Environment `json:"environment,omitempty"`
}

// convertAll converts each of in with conv; nil stays nil.
func convertAll[A, B any](in []A, conv func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = conv(a)
	}
	return out
}
