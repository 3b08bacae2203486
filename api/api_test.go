package api_test

import (
	stdjson "encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// keysOf returns the sorted member names of the JSON object b.
func keysOf(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(b, &m); err != nil {
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

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := api.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sample is read 3's value in the load harness: a 1.1 KB body.
func sample() prompts.ActivePrompt {
	now := time.Date(2026, 11, 21, 22, 19, 26, 123456000, time.UTC)
	desc := "The first message of the support assistant."
	return prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", ProjectID: "01KAKM6N8V0000000000000000", Key: "support/greeting",
			Name: "Support greeting", Description: &desc, LatestVersionID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", CreatedAt: now, Revision: 7,
		},
		Environment: prompts.Production,
		ActiveVersion: &prompts.PromptVersion{
			ID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", PromptID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", VersionNumber: 1,
			Content:  strings.Repeat("You are the support assistant of {{company}}. Greet them warmly. ", 11),
			Metadata: `{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`, CreatedAt: now,
			Variables: []string{"company"},
		},
	}
}

// Every response shape holds exactly its fields: read 3 no created_at
// of the prompt, a version no change_summary unless in detail.
func TestShapes(t *testing.T) {
	is := is.New(t)
	a := sample()
	is.Equal(keysOf(t, mustMarshal(t, api.FromActive(a))), sorted("id", "project_id", "key", "name", "description", "latest_version_id", "active_version"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromPrompt(a.Prompt))), sorted("id", "project_id", "key", "name", "description", "latest_version_id", "created_at"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromVersion(*a.ActiveVersion))), sorted("id", "prompt_id", "version_number", "content", "metadata_", "created_at"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromVersionDetail(*a.ActiveVersion))), sorted("id", "prompt_id", "version_number", "content", "metadata_", "created_at", "change_summary", "template_format", "variables", "partials"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromProject(prompts.Project{}))), sorted("id", "name", "slug", "description", "is_private", "created_at"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromDeployment(prompts.Deployment{}))), sorted("id", "prompt_id", "environment", "action", "version_id", "version_number",
		"previous_version_id", "previous_version_number", "actor", "reason", "created_at"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromWebhook(prompts.Webhook{Secret: "whsec_x"}))), sorted("id", "url", "events", "project_id", "created_at")) // no secret
	is.Equal(keysOf(t, mustMarshal(t, api.FromNewWebhook(prompts.Webhook{Secret: "whsec_x"}))), sorted("id", "url", "events", "project_id", "secret", "created_at"))
	is.Equal(keysOf(t, mustMarshal(t, api.FromDeliveryAttempt(prompts.DeliveryAttempt{}))), sorted("id", "event_id", "attempt", "at", "status_code", "error", "duration_ms"))

	a.ActiveVersion, a.Description, a.LatestVersionID = nil, nil, ""
	is.Equal(string(mustMarshal(t, api.FromActive(a))), `{"id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","project_id":"01KAKM6N8V0000000000000000",`+
		`"key":"support/greeting","name":"Support greeting","description":null,"latest_version_id":null,"active_version":null}`) // nulls, never a missing key
}

// A version's body, to the byte: metadata as stored, <, > and & as they
// are, variables never null.
func TestVersionExactly(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{
		ID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", PromptID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", VersionNumber: 2, Content: "<b>Hi</b> & {{name}}",
		Metadata: `{"n":12345678901234567890.5}`, CreatedAt: time.Date(2026, 11, 21, 22, 19, 26, 100000000, time.UTC),
	}
	is.Equal(string(mustMarshal(t, api.FromVersionDetail(v))), `{"id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","prompt_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB",`+
		`"version_number":2,"content":"<b>Hi</b> & {{name}}","metadata_":{"n":12345678901234567890.5},`+
		`"created_at":"2026-11-21T22:19:26.100000Z","change_summary":null,"template_format":"plain","variables":[],"partials":[]}`)
	v.Metadata = ""
	is.True(strings.Contains(string(mustMarshal(t, api.FromVersion(v))), `"metadata_":null`)) // no metadata: null
}

// Times are RFC 3339 in UTC with six fractional digits and a Z,
// whatever the zone and the nanoseconds of the value.
func TestTimeFormat(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 21, 22, 19, 26, 123456789, time.UTC), "2026-11-21T22:19:26.123456Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 100000000, time.UTC), "2026-01-02T03:04:05.100000Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000000Z"},
		{time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.FixedZone("east", 5*3600+1800)), "1999-12-31T18:29:59.999999Z"},
		{time.Date(2000, 2, 29, 0, 0, 0, 0, time.FixedZone("west", -7*3600)), "2000-02-29T07:00:00.000000Z"},
	} {
		b := mustMarshal(t, api.FromProject(prompts.Project{CreatedAt: tc.in}))
		is.True(strings.HasSuffix(string(b), `"created_at":"`+tc.want+`"}`)) // the interface's format
		var p api.Project
		is.NoErr(api.Unmarshal(b, &p))
		is.Equal(p.Domain().CreatedAt, tc.in.UTC().Truncate(time.Microsecond)) // read back
	}
}

func TestEventRoundTrip(t *testing.T) {
	a := sample()
	one := 1
	dep := prompts.Deployment{ID: a.ActiveVersion.ID, PromptID: a.ID, Environment: prompts.Production, Action: prompts.ActionActivate,
		VersionID: &a.ActiveVersion.ID, VersionNumber: &one, CreatedAt: a.CreatedAt}
	project := prompts.Project{ID: a.ProjectID, Name: "Support", Slug: "support", CreatedAt: a.CreatedAt}
	for _, e := range []prompts.Event{
		{Type: prompts.EventProjectCreated, Project: &project},
		{Type: prompts.EventPromptCreated, PromptID: a.ID, Prompt: &a.Prompt},
		{Type: prompts.EventPromptUpdated, PromptID: a.ID, Prompt: &a.Prompt},
		{Type: prompts.EventVersionCreated, PromptID: a.ID, Version: a.ActiveVersion},
		{Type: prompts.EventDeploymentCreated, PromptID: a.ID, Deployment: &dep},
	} {
		t.Run(string(e.Type), func(t *testing.T) {
			is := is.New(t)
			e.ID, e.ProjectID, e.CreatedAt = 9007199254740993, a.ProjectID, a.CreatedAt // beyond float64's integers
			b, err := api.MarshalEvent(e)
			is.NoErr(err)
			is.Equal(keysOf(t, b), sorted("id", "type", "project_id", "prompt_id", "created_at", "data")) // the event's fields, exactly
			is.True(strings.HasPrefix(string(b), `{"id":"9007199254740993","type":"`+string(e.Type)+`"`)) // the id a decimal string
			var got api.Event
			is.NoErr(api.Unmarshal(b, &got))
			back, err := got.Domain()
			is.NoErr(err)
			again, err := api.MarshalEvent(back)
			is.NoErr(err)
			is.Equal(string(again), string(b)) // what it read writes the same
			if e.Type == prompts.EventProjectCreated {
				is.True(strings.Contains(string(b), `"prompt_id":null`)) // null for a project's event
			}
		})
	}
}

func TestEventRefused(t *testing.T) {
	is := is.New(t)
	p := prompts.Project{ID: "01KAKM6N8V0000000000000000"}
	for _, e := range []prompts.Event{
		{ID: 1, Type: prompts.EventProjectCreated},
		{ID: 1, Type: prompts.EventPromptUpdated, Project: &p},
		{ID: 1, Type: prompts.EventVersionCreated},
		{ID: 1, Type: prompts.EventDeploymentCreated},
		{ID: 1, Type: "project.deleted", Project: &p},
	} {
		_, err := api.MarshalEvent(e)
		is.True(err != nil) // an event without its resource, or of an unknown type
	}
	for _, e := range []api.Event{
		{ID: "x", Type: prompts.EventProjectCreated, Data: []byte(`{}`)},
		{ID: "0", Type: prompts.EventProjectCreated, Data: []byte(`{}`)},
		{ID: "1", Type: prompts.EventPromptCreated, Data: []byte(`[]`)},
	} {
		_, err := e.Domain()
		is.True(err != nil) // a bad id or data
	}
	ev, err := api.Event{ID: "7", Type: "project.deleted", ProjectID: "p", Data: []byte(`{"x":1}`)}.Domain()
	is.NoErr(err)                                                               // a type of a later release
	is.Equal(ev, prompts.Event{ID: 7, Type: "project.deleted", ProjectID: "p"}) // without its resource
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		detail     string   // the detail holds this
		fields     []string // the fields named
	}{
		{"empty", " \n", "is empty", nil},
		{"not JSON", `{"content":`, "ends too soon", nil},
		{"a bare word", `hello`, "not valid JSON", nil},
		{"not an object", `[1]`, "must be a JSON object", nil},
		{"data after", `{}{}`, "data after the JSON object", nil},
		{"bad UTF-8", "{\"content\":\"a\xffb\"}", "not valid UTF-8 (at byte 13)", nil},
		{"a lone surrogate", `{"content":"\ud800"}`, "surrogate", nil},
		{"a member twice", `{"content":"a","content":"b"}`, `"content" twice`, []string{"content"}},
		{"a member twice, deep", `{"content":"c","metadata_":{"x":{"y":[1,{"z":1,"z":{}}]}}}`, "twice", []string{"metadata_.x.y[1].z"}},
		{"a member twice, escaped", `{"content":"c","metadata_":{"model":"a","\u006dodel":"b"}}`, "twice", []string{"metadata_.model"}},
		{"metadata", `{"content":"c","metadata":{}}`, `did you mean "metadata_"`, []string{"metadata"}},
		{"another case", `{"Content":"c"}`, `did you mean "content"`, []string{"Content"}},
		{"unknown", `{"content":"c","color":"red"}`, "color is not a known field", []string{"color"}},
		{"every error at once, in order", `{"color":1,"content":1,"change_summary":{},"environments":"x"}`, "content must be a string",
			[]string{"color", "content", "change_summary", "environments"}},
		{"environments not names", `{"content":"c","environments":[1]}`, "an array of environment names (strings) or null", []string{"environments"}},
		{"metadata not an object", `{"content":"c","metadata_":1}`, "", nil}, // the domain's rule judges it
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var v api.NewVersion
			bad := api.DecodeRequest([]byte(tc.body), &v)
			if tc.detail == "" {
				is.True(bad == nil) // decoded
				return
			}
			is.True(bad != nil)                              // refused
			is.True(strings.Contains(bad.Detail, tc.detail)) // the detail names the problem
			var fields []string
			for _, f := range bad.Fields {
				fields = append(fields, f.Field)
			}
			is.Equal(fields, tc.fields) // and the members
		})
	}
}

func TestDecodeRequestValues(t *testing.T) {
	is := is.New(t)
	var v api.NewVersion
	is.True(api.DecodeRequest([]byte(`{"content":"\ud83d\ude00 \u00e9","metadata_":{"b":1.50,"a":[1,{"a":1}]},"change_summary":null,"environments":["staging"]}`), &v) == nil)
	in := v.Domain("01KAKM6N8V5X3ZJ0W2Q9R7T4YB")
	is.Equal(in.Content, "\U0001F600 é")                        // escapes read as the characters they name
	is.Equal(string(in.Metadata), `{"b":1.50,"a":[1,{"a":1}]}`) // as given: every digit
	is.Equal(in.ChangeSummary, nil)                             // null: none
	is.Equal(in.Environments, []prompts.Environment{prompts.Staging})

	var u api.PromptUpdate
	is.True(api.DecodeRequest([]byte(`{"description":null,"name":"N"}`), &u) == nil)
	up := u.Domain()
	is.True(up.Description.Set && up.Description.Null) // null clears
	is.True(up.Name.HasValue() && up.Name.Value == "N")
	is.True(!up.Key.Set) // absent: unchanged

	var act api.Activation
	is.True(api.DecodeRequest([]byte(`{"version_number":99999999999999999999999}`), &act) == nil)
	is.Equal(act.VersionNumber.Value, math.MaxInt) // too large: a number no version has
	is.True(api.DecodeRequest([]byte(`{"version_number":1.5}`), &act) != nil)
	is.True(api.DecodeRequest([]byte(`{"version_number":-99999999999999999999999}`), &act) != nil)

	var r api.Render
	is.True(api.DecodeRequest([]byte(`{"variables":{"a":"x","b":"y"}}`), &r) == nil)
	is.Equal(map[string]any(r.Variables), map[string]any{"a": "x", "b": "y"})
	is.True(api.DecodeRequest([]byte(`{"variables":{"a":null,"n":12345678901234567890.5,"o":{"x":[1]}},"context":{"state":{"k":1}},"allow_unused":true,`+
		`"history":[{"role":"model","content":[{"text":"hi"},{"media":{"url":"https://x/a.png","contentType":"image/png"}}]}]}`), &r) == nil)
	is.Equal(r.Variables["a"], nil)                                      // any JSON
	is.Equal(r.Variables["n"], stdjson.Number("12345678901234567890.5")) // every digit
	rq := r.Domain("p")
	is.True(rq.AllowUnused)
	is.Equal(rq.History[0].Role, "model")
	is.Equal(rq.History[0].Content[0].Text, "hi")
	is.Equal(rq.History[0].Content[1].Media.ContentType, "image/png")
	is.True(rq.Context["state"] != nil)
	for _, body := range []string{`{"variables":[]}`, `{"variables":"x"}`, `{"context":[]}`, `{"history":{}}`, `{"history":[{"role":"user","content":[{"data":1}]}]}`} {
		is.True(api.DecodeRequest([]byte(body), &r) != nil) // the shapes
	}
}

// A render's answer: the version's format, the messages in Dotprompt's
// shape (a text part always has its text), and null model, config and
// output.
func TestRendered(t *testing.T) {
	is := is.New(t)
	v := prompts.PromptVersion{ID: "v", PromptID: "p", VersionNumber: 2, TemplateFormat: prompts.FormatDotprompt}
	out := api.FromRendered(v, prompts.Rendered{Text: "", Messages: []prompts.Message{
		{Role: "system", Content: []prompts.Part{{Text: ""}, {Media: &prompts.Media{URL: "u"}}}},
	}})
	is.Equal(string(mustMarshal(t, out)), `{"prompt_id":"p","version_id":"v","version_number":2,"template_format":"dotprompt",`+
		`"messages":[{"role":"system","content":[{"text":""},{"media":{"url":"u"}}]}],"model":null,"config":null,"output":null,"text":""}`)
}

// An Optional marshals as what it reads: absent (with omitzero), null, or
// its value.
func TestOptionalJSON(t *testing.T) {
	is := is.New(t)
	type body struct {
		N api.Optional[int]    `json:"n,omitzero"`
		S api.Optional[string] `json:"s,omitzero"`
	}
	for _, tc := range []struct {
		in   body
		want string
	}{
		{body{}, `{}`},
		{body{N: api.Null[int]()}, `{"n":null}`},
		{body{N: api.Some(0), S: api.Some("x")}, `{"n":0,"s":"x"}`},
	} {
		b, err := api.Marshal(tc.in)
		is.NoErr(err)
		is.Equal(string(b), tc.want) // marshaled
		var back body
		is.NoErr(api.Unmarshal(b, &back))
		is.Equal(back, tc.in) // and read back the same
		var std body
		is.NoErr(stdjson.Unmarshal(b, &std))
		is.Equal(std, tc.in) // encoding/json reads it the same
	}
}

// UnmarshalComplete refuses a member missing at any depth, or null where
// its type allows none, naming it; it ignores members it does not know.
func TestUnmarshalComplete(t *testing.T) {
	is := is.New(t)
	a := sample()
	v := api.FromVersionDetail(*a.ActiveVersion)
	doc := api.Snapshot{Format: api.SnapshotFormat, TakenAt: a.CreatedAt, Project: api.FromProject(prompts.Project{ID: a.ProjectID}),
		Prompts: []api.SnapshotPrompt{{Prompt: api.FromPrompt(a.Prompt), Revision: 7,
			Environments: map[prompts.Environment]*api.VersionDetail{prompts.Staging: nil, prompts.Production: &v}}}}
	b := mustMarshal(t, doc)
	is.True(strings.Contains(string(b), `"environments":{"production":{`)) // environments in order
	var back api.Snapshot
	is.NoErr(api.UnmarshalComplete(b, &back))
	is.Equal(string(mustMarshal(t, back)), string(b)) // read back the same

	for _, tc := range []struct{ old, new, want string }{
		{`"revision":7,`, `"later":1,`, "prompts[0].revision: missing"},
		{`"change_summary":null,`, ``, "prompts[0].environments.production.change_summary: missing"},
		{`"variables":["company"]`, `"variables":null`, "prompts[0].environments.production.variables: missing"},
		{`"prompts":[`, `"prompts":null,"x":[`, "prompts: missing"},
		{`"revision":7`, `"revision":"7"`, "prompts[0].revision: must be an integer, not a JSON string"},
		{`"description":"The`, `"description":7,"x":"`, "prompts[0].prompt.description: must be a string or null, not a JSON number"},
		{`"taken_at":"2026-11-21T22:19:26.123456Z"`, `"taken_at":"yesterday"`, "taken_at: must be an RFC 3339 time"},
	} {
		doc := strings.Replace(string(b), tc.old, tc.new, 1)
		is.True(doc != string(b)) // the case changes something
		err := api.UnmarshalComplete([]byte(doc), &back)
		is.True(err != nil && strings.Contains(err.Error(), tc.want)) // refused, naming the member
	}
}

// The details of the other requests' typed members say what they take.
func TestDecodeRequestTypedMembers(t *testing.T) {
	is := is.New(t)
	var r api.Render
	bad := api.DecodeRequest([]byte(`{"environment":1}`), &r)
	is.True(bad != nil)
	is.True(strings.Contains(bad.Detail, "an environment of the project (a string) or null")) // the environments it takes
	var w api.NewWebhook
	bad = api.DecodeRequest([]byte(`{"url":"https://example.com","events":[1]}`), &w)
	is.True(bad != nil)
	is.True(strings.Contains(bad.Detail, "an array of event types (strings) or null"))
}

// A version's template format: in the version detail (plain when a
// snapshot or event written before formats has none), and in the create
// body only when given.
func TestTemplateFormat(t *testing.T) {
	is := is.New(t)
	var d api.VersionDetail
	is.NoErr(api.Unmarshal([]byte(`{"id":"x","prompt_id":"p","version_number":1,"content":"c","metadata_":null,"created_at":"2026-11-21T22:19:26.100000Z","change_summary":null,"variables":[]}`), &d))
	is.Equal(d.Domain().TemplateFormat, prompts.FormatPlain) // absent: plain
	d.TemplateFormat = prompts.FormatDotprompt
	is.Equal(d.Domain().TemplateFormat, prompts.FormatDotprompt)
	is.True(!strings.Contains(string(mustMarshal(t, api.FromNewVersion(prompts.NewVersion{Content: "c"}))), "template_format"))
	body := api.FromNewVersion(prompts.NewVersion{Content: "c", TemplateFormat: prompts.FormatDotprompt})
	is.True(strings.Contains(string(mustMarshal(t, body)), `"template_format":"dotprompt"`))
	is.Equal(body.Domain("p").TemplateFormat, prompts.FormatDotprompt) // round-trips
}

// A version written before partials existed (a snapshot, an event) has
// no partials member: it reads as a version with none, and a version
// with some keeps them.
func TestVersionDetailPartials(t *testing.T) {
	is := is.New(t)
	var old api.VersionDetail
	is.NoErr(api.UnmarshalComplete([]byte(`{"id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","prompt_id":"01KAKM6N8V5X3ZJ0W2Q9R7T4YB","version_number":2,`+
		`"content":"x","metadata_":null,"created_at":"2026-11-21T22:19:26.100000Z","change_summary":null,"variables":[]}`), &old))
	is.Equal(old.Domain().Partials, []string{})
	v := api.FromVersionDetail(prompts.PromptVersion{Content: "{{> a}}", TemplateFormat: prompts.FormatDotprompt, Partials: []string{"a"}})
	b := mustMarshal(t, v)
	is.True(strings.Contains(string(b), `"partials":["a"]`))
	var back api.VersionDetail
	is.NoErr(api.UnmarshalComplete(b, &back))
	is.Equal(back.Domain().Partials, []string{"a"})
}

// A render's history is checked message by message, part by part, each
// problem named by its path.
func TestDecodeRenderHistory(t *testing.T) {
	is := is.New(t)
	var v api.Render
	bad := api.DecodeRequest([]byte(`{"history":[{"role":"user","metadata":{"purpose":"history"},"content":[{"text":"hi","metadata":{"a":1}},{"media":{"url":"https://x/y.png","contentType":"image/png"}}]}]}`), &v)
	is.True(bad == nil) // Dotprompt's metadata, of a message or a part: accepted, ignored
	is.Equal(v.Domain("p").History, []prompts.Message{{Role: "user", Content: []prompts.Part{{Text: "hi"}, {Media: &prompts.Media{URL: "https://x/y.png", ContentType: "image/png"}}}}})

	var w api.Render
	bad = api.DecodeRequest([]byte(`{"history":[{"role":"user","content":[{"text":"a"},{"text":"b","media":{"url":"u"}},{},{"media":{}},{"media":{"url":""}},{"text":1},{"tool":1}]},`+
		`{"role":2,"content":"x","metadata":3},{"content":[]},7]}`), &w)
	is.True(bad != nil)
	var got []string
	for _, f := range bad.Fields {
		got = append(got, f.Field+": "+f.Detail)
	}
	is.Equal(got, []string{
		"history[0].content[1]: must have text or media, not both",
		"history[0].content[2]: must have text or media",
		"history[0].content[3].media.url: is required",
		"history[0].content[4].media.url: is required",
		"history[0].content[5].text: must be a string",
		"history[0].content[6].tool: is not a known field; the fields are text, media, metadata",
		"history[0].content[6]: must have text or media",
		"history[1].role: must be a string",
		"history[1].metadata: must be an object or null",
		`history[1].content: must be an array of parts ({"text"} or {"media": {"url", "contentType"}})`,
		"history[2].role: is required: system, user, model or tool",
		`history[3]: must be a message ({"role", "content": [{"text"} or {"media": {"url", "contentType"}}]})`,
	})
	is.True(w.History == nil) // nothing decoded

	bad = api.DecodeRequest([]byte(`{"history":{"role":"user"}}`), &w)
	is.Equal(bad.Fields[0].Field, "history")
	is.True(strings.HasPrefix(bad.Fields[0].Detail, "must be an array of messages"))
	is.True(api.DecodeRequest([]byte(`{"history":null}`), &w) == nil)
}
