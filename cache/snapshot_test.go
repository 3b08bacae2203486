package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

// project returns a memstore with a project of three prompts (one active
// in both environments, with metadata, a summary and variables; one in
// staging only; one with no version) and a prompt of another project.
func project(t testing.TB) (*memstore.Store, prompts.Project, []prompts.Prompt) {
	t.Helper()
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Support", Description: "the bot"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	desc, summary := "greets", "first"
	var list []prompts.Prompt
	for _, in := range []prompts.NewPrompt{
		{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting", Description: &desc},
		{ProjectID: proj.ID, Key: "farewell", Name: "Farewell"},
		{ProjectID: proj.ID, Key: "draft", Name: "Draft"},
		{ProjectID: other.ID, Key: "elsewhere", Name: "Elsewhere"},
	} {
		p, err := ms.CreatePrompt(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, p)
	}
	for _, in := range []prompts.NewVersion{
		{PromptID: list[0].ID, Content: "Hi {{name}}", ChangeSummary: &summary, Metadata: `{"model":"m","t":0.20000000000000001}`, Environments: []prompts.Environment{prompts.Production, prompts.Staging}},
		{PromptID: list[0].ID, Content: "Hello {{name}}", Environments: []prompts.Environment{prompts.Staging}},
		{PromptID: list[1].ID, Content: "Bye", Environments: []prompts.Environment{prompts.Staging}},
		{PromptID: list[3].ID, Content: "x", Environments: []prompts.Environment{prompts.Production}},
	} {
		if _, err := ms.CreateVersion(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	return ms, proj, list
}

func TestTakeSnapshot(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	s, err := cache.TakeSnapshot(ctx, ms, proj.ID)
	is.NoErr(err)
	is.Equal(s.Project, proj)
	is.True(!s.TakenAt.IsZero())
	is.Equal(len(s.Prompts), 3) // every prompt of the project, none of another
	for i, sp := range s.Prompts {
		is.Equal(sp.Prompt.ID, list[i].ID) // oldest first
		for _, env := range prompts.Environments {
			want, err := ms.GetActive(ctx, sp.Prompt.ID, env)
			is.NoErr(err)
			is.Equal(sp.ActiveIn(env), want) // both environments, as GetActive answers them
		}
	}
	is.Equal(s.Prompts[0].Active[prompts.Production].Content, "Hi {{name}}")
	is.Equal(s.Prompts[0].Active[prompts.Staging].Content, "Hello {{name}}")
	is.True(s.Prompts[1].Active[prompts.Production] == nil)
	is.True(s.Prompts[2].Active[prompts.Staging] == nil)

	_, err = cache.TakeSnapshot(ctx, ms, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	is.True(errors.Is(err, prompts.ErrNotFound)) // an unknown project
}

// changing changes a prompt (a promotion in production) each time its
// staging is read, the first times times: between the snapshot's reads of
// its two environments.
type changing struct {
	prompts.Store
	times atomic.Int64
}

func (c *changing) GetActive(ctx context.Context, id string, env prompts.Environment) (prompts.ActivePrompt, error) {
	if env == prompts.Staging && c.times.Add(-1) >= 0 {
		cur, err := c.Store.GetActive(ctx, id, prompts.Production)
		if err != nil {
			return prompts.ActivePrompt{}, err
		}
		n := 1
		if cur.ActiveVersion != nil && cur.ActiveVersion.VersionNumber == 1 {
			n = 2
		}
		if _, err := c.Store.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(n)}); err != nil {
			return prompts.ActivePrompt{}, err
		}
	}
	return c.Store.GetActive(ctx, id, env)
}

// Each prompt of a snapshot is as of one revision: its environments are
// read again when it changed between them; a prompt that never holds
// still is unavailable, rather than half of two states.
func TestTakeSnapshotReadsEachPromptAtOneRevision(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	c := &changing{Store: ms}
	c.times.Store(2)
	s, err := cache.TakeSnapshot(ctx, c, proj.ID)
	is.NoErr(err)
	got := s.Prompts[0]
	for _, env := range prompts.Environments {
		want, err := ms.GetActive(ctx, list[0].ID, env)
		is.NoErr(err)
		is.Equal(got.ActiveIn(env), want) // the state after the changes, both environments
	}

	c.times.Store(1000)
	_, err = cache.TakeSnapshot(ctx, c, proj.ID)
	is.True(errors.Is(err, prompts.ErrUnavailable)) // it never held still
	is.True(strings.Contains(err.Error(), list[0].ID))
}

func TestTakeSnapshotBounds(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Big"})
	is.NoErr(err)
	big, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "big", Name: "Big"})
	is.NoErr(err)
	_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: big.ID, Content: strings.Repeat("x", cache.MaxSnapshotSize/2+1), Environments: prompts.Environments})
	is.NoErr(err)
	_, err = cache.TakeSnapshot(ctx, ms, proj.ID)
	is.True(errors.Is(err, cache.ErrSnapshotTooLarge)) // the text, counted in each environment
	is.True(strings.Contains(err.Error(), "67108864 bytes"))

	proj, err = ms.CreateProject(ctx, prompts.NewProject{Name: "Many"})
	is.NoErr(err)
	for i := range cache.MaxSnapshotPrompts {
		_, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + strconv.Itoa(i), Name: "N"})
		is.NoErr(err)
	}
	s, err := cache.TakeSnapshot(ctx, ms, proj.ID)
	is.NoErr(err)
	is.Equal(len(s.Prompts), cache.MaxSnapshotPrompts) // at the bound: every one, through every page
	_, err = ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "one-more", Name: "N"})
	is.NoErr(err)
	_, err = cache.TakeSnapshot(ctx, ms, proj.ID)
	is.True(errors.Is(err, cache.ErrSnapshotTooLarge))
	is.True(strings.Contains(err.Error(), "more than 10000 prompts")) // naming the bound
}

// What MarshalJSON writes, ParseSnapshot reads back whole: every field of
// the project, the prompts, their revisions and both environments'
// versions (metadata's digits included).
func TestSnapshotRoundTrip(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, _ := project(t)
	s, err := cache.TakeSnapshot(ctx, ms, proj.ID)
	is.NoErr(err)
	data, err := s.MarshalJSON()
	is.NoErr(err)
	back, err := cache.ParseSnapshot(data)
	is.NoErr(err)
	is.True(reflect.DeepEqual(back, s)) // the same snapshot
	is.Equal(string(back.Prompts[0].Active[prompts.Production].Metadata), `{"model":"m","t":0.20000000000000001}`)
	again, err := back.MarshalJSON()
	is.NoErr(err)
	is.Equal(string(again), string(data)) // and the same bytes

	// encoding/json uses the same format, by value or pointer, both ways.
	type doc struct{ Snap cache.Snapshot }
	data, err = json.Marshal(doc{*s})
	is.NoErr(err)
	is.True(strings.Contains(string(data), `"format":"prompts.snapshot/1"`))
	var d doc
	is.NoErr(json.Unmarshal(data, &d))
	is.True(reflect.DeepEqual(&d.Snap, s))
	is.True(json.Unmarshal([]byte(`{"Snap":{"format":"other"}}`), &d) != nil) // refused as ParseSnapshot refuses

	empty := &cache.Snapshot{Project: proj, TakenAt: s.TakenAt}
	data, err = empty.MarshalJSON()
	is.NoErr(err)
	is.True(strings.Contains(string(data), `"prompts":[]`)) // an array, never null
	back, err = cache.ParseSnapshot(data)
	is.NoErr(err)
	is.Equal(len(back.Prompts), 0)
}

// validSnapshot is a small snapshot's JSON, for the tests that break it.
const validSnapshot = `{"format":"prompts.snapshot/1","taken_at":"2026-11-21T22:19:26.123456Z",
"project":{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","name":"Support","slug":"support","description":"","is_private":false,"created_at":"2026-11-21T22:19:26.000000Z"},
"prompts":[{"prompt":{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YC","project_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","key":"greeting","name":"Greeting","description":null,"latest_version_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YD","created_at":"2026-11-21T22:19:26.000000Z"},
"revision":1763900000123456,
"environments":{"production":{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YD","prompt_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YC","version_number":1,"content":"Hi {{name}}","metadata_":null,"created_at":"2026-11-21T22:19:26.000000Z","change_summary":null,"variables":["name"]},"staging":null}}]}`

func TestParseSnapshotRefusesMalformedInput(t *testing.T) {
	is := is.New(t)
	s, err := cache.ParseSnapshot([]byte(validSnapshot))
	is.NoErr(err) // the base of the cases below
	is.Equal(s.Prompts[0].Prompt.Revision, int64(1763900000123456))
	is.Equal(s.Prompts[0].Active[prompts.Production].Variables, []string{"name"})

	_, err = cache.ParseSnapshot([]byte(strings.Replace(validSnapshot, `"name":"Greeting",`, `"name":"Greeting","later":{"x":1},`, 1)))
	is.NoErr(err) // members it does not know are ignored

	for _, tc := range []struct{ name, old, new, want string }{
		{"not JSON", validSnapshot, `{"format":`, "not valid JSON"},
		{"not an object", validSnapshot, `[]`, "must be an object, not a JSON array"},
		{"nothing", validSnapshot, ``, "not valid JSON"},
		{"no format", `"format":"prompts.snapshot/1",`, ``, "format: missing: not a snapshot"},
		{"another format", `prompts.snapshot/1`, `prompts.snapshot/2`, `format: is "prompts.snapshot/2"; this version reads "prompts.snapshot/1"`},
		{"no taken_at", `"taken_at":"2026-11-21T22:19:26.123456Z",`, ``, "taken_at: missing"},
		{"a bad time", `"taken_at":"2026-11-21T22:19:26.123456Z"`, `"taken_at":"yesterday"`, "taken_at: must be an RFC 3339 time"},
		{"no project", `"project":{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","name":"Support","slug":"support","description":"","is_private":false,"created_at":"2026-11-21T22:19:26.000000Z"},`, ``, "project: missing"},
		{"a bad project id", `"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","name":"Support"`, `"id":"nope","name":"Support"`, "project.id: is not an id"},
		{"no slug", `"slug":"support",`, ``, "project.slug: missing"},
		{"no prompts", `"prompts":[`, `"x":[`, "prompts: missing"},
		{"prompts null", `"prompts":[{`, `"prompts":null,"x":[{`, "prompts: missing"},
		{"a wrong type", `"revision":1763900000123456`, `"revision":"1"`, "prompts[0].revision: must be an integer, not a JSON string"},
		{"a fraction", `"revision":1763900000123456`, `"revision":1.5`, "prompts[0].revision: must be an integer, not a JSON number"},
		{"no revision", `"revision":1763900000123456,`, ``, "prompts[0].revision: missing"},
		{"a zero revision", `"revision":1763900000123456`, `"revision":0`, "prompts[0].revision: must be a positive integer"},
		{"no prompt", `"prompt":{`, `"x":{`, "prompts[0].prompt: missing"},
		{"another project's prompt", `"project_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB"`, `"project_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YZ"`, "prompts[0].prompt.project_id: is not the snapshot's project"},
		{"a bad key", `"key":"greeting"`, `"key":"-greeting"`, "prompts[0].prompt.key: is not a key"},
		{"no description", `"description":null,`, ``, "prompts[0].prompt.description: missing"},
		{"a description of another type", `"description":null,`, `"description":7,`, "prompts[0].prompt.description: must be a string or null"},
		{"a bad latest version id", `"latest_version_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YD"`, `"latest_version_id":"x"`, "prompts[0].prompt.latest_version_id: is not an id"},
		{"no environments", `"environments":{`, `"x":{`, "prompts[0].environments: missing"},
		{"an environment missing", `,"staging":null`, ``, "prompts[0].environments.staging: missing (null when no version is active)"},
		{"an unknown environment", `"staging":null`, `"staging":null,"dev":null`, "prompts[0].environments.dev: is not an environment"},
		{"a version of another prompt", `"prompt_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YC"`, `"prompt_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB"`, "prompts[0].environments.production.prompt_id: is not the prompt's id"},
		{"a version not an object", `"staging":null`, `"staging":"v1"`, "prompts[0].environments.staging: must be an object, not a JSON string"},
		{"no content", `"content":"Hi {{name}}",`, ``, "prompts[0].environments.production.content: missing"},
		{"empty content", `"content":"Hi {{name}}"`, `"content":""`, "prompts[0].environments.production.content: must not be empty"},
		{"a version number of zero", `"version_number":1`, `"version_number":0`, "prompts[0].environments.production.version_number: must be a positive integer"},
		{"metadata not an object", `"metadata_":null`, `"metadata_":[1]`, "prompts[0].environments.production.metadata_: must be a JSON object or null"},
		{"no metadata", `"metadata_":null,`, ``, "prompts[0].environments.production.metadata_: missing"},
		{"no variables", `,"variables":["name"]`, ``, "prompts[0].environments.production.variables: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			doc := strings.Replace(validSnapshot, tc.old, tc.new, 1)
			if doc == validSnapshot {
				t.Fatalf("the case changes nothing")
			}
			s, err := cache.ParseSnapshot([]byte(doc))
			is.True(err != nil) // refused
			is.True(s == nil)
			is.True(strings.HasPrefix(err.Error(), "cache: malformed snapshot: "))
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}

	// A prompt twice; a key twice (a second prompt with another id).
	item := validSnapshot[strings.Index(validSnapshot, `{"prompt"`) : len(validSnapshot)-2]
	withSecond := func(second string) error {
		_, err := cache.ParseSnapshot([]byte(validSnapshot[:len(validSnapshot)-2] + "," + second + "]}"))
		return err
	}
	err = withSecond(item)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "prompts[1].prompt.id: is given twice"))
	err = withSecond(strings.ReplaceAll(item, "01KAKM6N8V5X3ZJ0W2Q9R7T4YC", "01KAKM6N8V5X3ZJ0W2Q9R7T4YE"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "prompts[1].prompt.key: is given twice"))
	is.NoErr(withSecond(strings.ReplaceAll(strings.ReplaceAll(item, "01KAKM6N8V5X3ZJ0W2Q9R7T4YC", "01KAKM6N8V5X3ZJ0W2Q9R7T4YE"), `"greeting"`, `"other"`)))
}

// ParseSnapshot never panics, and what it accepts writes out and reads
// back the same.
func FuzzParseSnapshot(f *testing.F) {
	ms, proj, _ := project(f)
	s, err := cache.TakeSnapshot(context.Background(), ms, proj.ID)
	if err != nil {
		f.Fatal(err)
	}
	data, err := s.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(validSnapshot))
	f.Add([]byte(`{"format":"prompts.snapshot/1"}`))
	f.Add([]byte(`{"format":"prompts.snapshot/1","taken_at":"2026-11-21T22:19:26Z","project":{},"prompts":[{}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(strings.Replace(validSnapshot, `26.123456Z`, `26.1234567+02:00`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := cache.ParseSnapshot(data)
		if err != nil {
			if s != nil {
				t.Fatal("a snapshot with an error")
			}
			return
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := cache.ParseSnapshot(out)
		if err != nil {
			t.Fatalf("what it wrote does not read back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, s) {
			t.Fatalf("read back differs:\n%+v\n%+v", back, s)
		}
	})
}

// A snapshot holds the project's environments, each in every prompt, and
// a cache answers from it in each of them; a snapshot of an earlier
// release, which names none, holds production and staging.
func TestSnapshotOfAProjectsEnvironments(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, list := project(t)
	_, err := ms.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: proj.ID, Name: "canary"})
	is.NoErr(err)
	_, err = ms.Activate(ctx, prompts.Activation{PromptID: list[0].ID, Environment: "canary", VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	s, err := cache.TakeSnapshot(ctx, ms, proj.ID)
	is.NoErr(err)
	is.Equal(s.Environments, []prompts.Environment{prompts.Production, prompts.Staging, "canary"})
	is.True(s.Prompts[0].Active["canary"] != nil)
	data, err := s.MarshalJSON()
	is.NoErr(err)
	is.True(strings.Contains(string(data), `"environments":["production","staging","canary"]`))
	back, err := cache.ParseSnapshot(data)
	is.NoErr(err)
	is.True(reflect.DeepEqual(back, s)) // the same snapshot

	d := &down{Store: ms}
	d.isDown.Store(true)
	c := cache.New(d, cache.WithFallback(back))
	a, err := c.GetActive(ctx, list[0].ID, "canary")
	is.NoErr(err) // from the snapshot
	is.Equal(a.ActiveVersion.VersionNumber, 1)

	old, err := cache.ParseSnapshot([]byte(validSnapshot))
	is.NoErr(err)
	is.Equal(old.Environments, prompts.Environments) // an earlier release's
	for _, tc := range []struct{ list, want string }{
		{`["staging","production"]`, "environments[0]: must be production"},
		{`["production"]`, "environments: must hold the built-in environments"},
		{`["production","staging","Canary"]`, "environments[2]: is not an environment name"},
		{`["production","staging","eu","eu"]`, "environments[3]: is given twice"},
		{`["production","staging","eu"]`, "prompts[0].environments.eu: missing"},
	} {
		doc := strings.Replace(validSnapshot, `"prompts":[`, `"environments":`+tc.list+`,"prompts":[`, 1)
		_, err := cache.ParseSnapshot([]byte(doc))
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), tc.want)) // says what is wrong, and where
	}
}
