package wire_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// keysOf returns the sorted keys of the JSON object b.
func keysOf(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sorted(s ...string) []string { slices.Sort(s); return s }

func TestEncodeEventProjectExactly(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 21, 22, 19, 26, 100000000, time.UTC)
	p := prompts.Project{ID: "01KAKM6N8V0000000000000000", Name: "Support", Slug: "support", CreatedAt: at}
	got, err := wire.EncodeEvent(prompts.Event{ID: 42, Type: prompts.EventProjectCreated, ProjectID: p.ID, CreatedAt: at, Project: &p})
	is.NoErr(err)
	is.Equal(string(got), `{"id":"42","type":"project.created","project_id":"01KAKM6N8V0000000000000000","prompt_id":null,`+
		`"created_at":"2026-11-21T22:19:26.100000Z","data":{"id":"01KAKM6N8V0000000000000000","name":"Support",`+
		`"slug":"support","description":"","is_private":false,"created_at":"2026-11-21T22:19:26.100000Z"}}`) // the whole body
}

func TestEncodeEventShapes(t *testing.T) {
	at := time.Date(2026, 11, 21, 22, 19, 26, 123456000, time.FixedZone("CET", 3600))
	projectID, promptID, versionID := "01KAKM6N8V0000000000000000", "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", "01KAKM6N8W5X3ZJ0W2Q9R7T4YC"
	one := 1
	project := prompts.Project{ID: projectID, Name: "Support", Slug: "support", CreatedAt: at}
	prompt := prompts.Prompt{ID: promptID, ProjectID: projectID, Key: "greeting", Name: "Greeting", CreatedAt: at, Revision: 7}
	version := prompts.PromptVersion{ID: versionID, PromptID: promptID, VersionNumber: 1, Content: "Hi {{name}}", Variables: []string{"name"}, CreatedAt: at}
	deployment := prompts.Deployment{ID: versionID, PromptID: promptID, Environment: prompts.Production, Action: prompts.ActionActivate, VersionID: &versionID, VersionNumber: &one, CreatedAt: at}

	event := []string{"created_at", "data", "id", "project_id", "prompt_id", "type"}
	for _, c := range []struct {
		e    prompts.Event
		data []string
	}{
		{prompts.Event{Type: prompts.EventProjectCreated, Project: &project},
			sorted("id", "name", "slug", "description", "is_private", "created_at")},
		{prompts.Event{Type: prompts.EventPromptCreated, PromptID: promptID, Prompt: &prompt},
			sorted("id", "project_id", "key", "name", "description", "latest_version_id", "created_at")},
		{prompts.Event{Type: prompts.EventPromptUpdated, PromptID: promptID, Prompt: &prompt},
			sorted("id", "project_id", "key", "name", "description", "latest_version_id", "created_at")},
		{prompts.Event{Type: prompts.EventVersionCreated, PromptID: promptID, Version: &version},
			sorted("id", "prompt_id", "version_number", "content", "metadata_", "created_at", "change_summary", "variables")},
		{prompts.Event{Type: prompts.EventDeploymentCreated, PromptID: promptID, Deployment: &deployment},
			sorted("id", "prompt_id", "environment", "action", "version_id", "version_number", "previous_version_id",
				"previous_version_number", "actor", "reason", "created_at")},
	} {
		t.Run(string(c.e.Type), func(t *testing.T) {
			is := is.New(t)
			c.e.ID, c.e.ProjectID, c.e.CreatedAt = 9007199254740993, projectID, at // beyond float64's integers
			b, err := wire.EncodeEvent(c.e)
			is.NoErr(err)
			is.Equal(keysOf(t, b), event) // the event's fields, exactly
			var got struct {
				ID        any             `json:"id"`
				Type      string          `json:"type"`
				ProjectID string          `json:"project_id"`
				PromptID  *string         `json:"prompt_id"`
				CreatedAt string          `json:"created_at"`
				Data      json.RawMessage `json:"data"`
			}
			is.NoErr(json.Unmarshal(b, &got))
			is.Equal(got.ID, "9007199254740993")                   // the id as a decimal string
			is.Equal(got.Type, string(c.e.Type))                   // the type
			is.Equal(got.ProjectID, projectID)                     // the project
			is.Equal(got.CreatedAt, "2026-11-21T21:19:26.123456Z") // UTC, six digits, Z
			if c.e.Type == prompts.EventProjectCreated {
				is.Equal(got.PromptID, nil) // null for a project's event
			} else {
				is.True(got.PromptID != nil && *got.PromptID == promptID) // the prompt
			}
			is.Equal(keysOf(t, got.Data), c.data) // the resource's fields, exactly
		})
	}
}

func TestEncodeEventRefusesAnEventWithoutItsResource(t *testing.T) {
	is := is.New(t)
	p := prompts.Project{ID: "01KAKM6N8V0000000000000000"}
	for _, e := range []prompts.Event{
		{ID: 1, Type: prompts.EventProjectCreated},
		{ID: 1, Type: prompts.EventPromptUpdated, Project: &p},
		{ID: 1, Type: prompts.EventVersionCreated},
		{ID: 1, Type: prompts.EventDeploymentCreated},
		{ID: 1, Type: "project.deleted", Project: &p},
	} {
		b, err := wire.AppendEvent([]byte("x"), e)
		is.True(err != nil)      // refused
		is.Equal(string(b), "x") // b as it was
	}
}
