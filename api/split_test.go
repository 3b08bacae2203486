package api_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// splitSample is sample() in an environment that holds a split of its
// version and another.
func splitSample() prompts.ActivePrompt {
	a := sample()
	two := *a.ActiveVersion
	two.ID, two.VersionNumber, two.Content = "01KAKM6N8X5X3ZJ0W2Q9R7T4YD", 2, "Hello \"there\""
	a.Split = prompts.Split{
		{VersionID: a.ActiveVersion.ID, VersionNumber: 1, Weight: 90},
		{VersionID: two.ID, VersionNumber: 2, Weight: 10},
	}
	a.SplitVersions = []prompts.PromptVersion{*a.ActiveVersion, two}
	a.ActiveVersion = &a.SplitVersions[0]
	return a
}

// The read of an environment that holds a split has the split after
// active_version; without one, no split member at all.
func TestActiveSplit(t *testing.T) {
	is := is.New(t)
	a := splitSample()
	checkActive(t, a)
	b := mustMarshal(t, api.FromActive(a))
	is.Equal(keysOf(t, b), sorted("id", "project_id", "key", "name", "description", "latest_version_id", "active_version", "split"))
	is.True(strings.HasSuffix(string(b), `,"split":[{"version_id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","version_number":1,"weight":90},`+
		`{"version_id":"01KAKM6N8X5X3ZJ0W2Q9R7T4YD","version_number":2,"weight":10}]}`)) // the split, last

	picked := a.Pick("someone")
	checkActive(t, picked) // whichever version is served

	var back api.ActivePrompt
	is.NoErr(api.Unmarshal(b, &back))
	d := back.Domain(prompts.Production)
	is.Equal(d.Split, a.Split)     // read back
	is.Equal(d.SplitVersions, nil) // which the body does not hold
	is.Equal(d.ActiveVersion.ID, a.ActiveVersion.ID)

	plain := sample()
	is.True(!strings.Contains(string(api.AppendActive(nil, plain)), "split")) // no split: as before
	var none api.ActivePrompt
	is.NoErr(api.Unmarshal(mustMarshal(t, api.FromActive(plain)), &none))
	is.Equal(none.Domain(prompts.Production).Split, nil)
}

func TestAppendActiveSplitAllocates(t *testing.T) {
	is := is.New(t)
	a := splitSample()
	buf := make([]byte, 0, 8192)
	is.Equal(testing.AllocsPerRun(100, func() { buf = api.AppendActive(buf[:0], a) }), 0.0) // no allocation
}

// A deployment record carries split and previous_split when it has them,
// and neither member otherwise.
func TestDeploymentSplit(t *testing.T) {
	is := is.New(t)
	a := splitSample()
	one, two := 1, 2
	id2 := a.Split[1].VersionID
	dep := prompts.Deployment{ID: "01KAKM6N8Z5X3ZJ0W2Q9R7T4YE", PromptID: a.ID, Environment: prompts.Production, Action: prompts.ActionSplit,
		VersionID: &a.Split[0].VersionID, VersionNumber: &one, PreviousVersionID: &id2, PreviousVersionNumber: &two,
		Split: a.Split, CreatedAt: a.CreatedAt}
	b := mustMarshal(t, api.FromDeployment(dep))
	is.Equal(keysOf(t, b), sorted("id", "prompt_id", "environment", "action", "version_id", "version_number",
		"previous_version_id", "previous_version_number", "split", "actor", "reason", "created_at"))
	is.True(strings.Contains(string(b), `"action":"split"`))

	dep.Action, dep.Split, dep.PreviousSplit = prompts.ActionRollback, nil, a.Split
	b = mustMarshal(t, api.FromDeployment(dep))
	is.True(strings.Contains(string(b), `"previous_split":[{"version_id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","version_number":1,"weight":90},`))
	is.True(!strings.Contains(string(b), `"split"`)) // none after

	e := prompts.Event{ID: 3, Type: prompts.EventDeploymentCreated, ProjectID: a.ProjectID, PromptID: a.ID, CreatedAt: a.CreatedAt, Deployment: &dep}
	eb, err := api.MarshalEvent(e)
	is.NoErr(err)
	var got api.Event
	is.NoErr(api.Unmarshal(eb, &got))
	back, err := got.Domain()
	is.NoErr(err)
	is.Equal(back.Deployment.PreviousSplit, a.Split) // the event carries it
	is.Equal(back.Deployment.Split, nil)
}

// An activation's split decodes entry by entry, and what is wrong with
// an entry is named by its path.
func TestDecodeActivationSplit(t *testing.T) {
	is := is.New(t)
	var act api.Activation
	is.True(api.DecodeRequest([]byte(`{"split":[{"version_number":3,"weight":90},{"version_id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","weight":10}],"reason":"try"}`), &act) == nil)
	is.Equal(act.Split.Domain(), prompts.Split{{VersionNumber: 3, Weight: 90}, {VersionID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", Weight: 10}})
	is.Equal(act.Reason.Value, "try")

	is.True(api.DecodeRequest([]byte(`{"split":null,"version_number":1}`), &act) == nil)
	is.Equal(act.Split, nil) // null: no split

	// What the client sends reads back the same.
	in := prompts.Split{{VersionNumber: 3, Weight: 90}, {VersionID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", VersionNumber: 4, Weight: 10}}
	body := mustMarshal(t, api.Activation{Split: api.FromSplitRequest(in)})
	is.Equal(string(body), `{"split":[{"version_number":3,"weight":90},{"version_id":"01KAKM6N8W5X3ZJ0W2Q9R7T4YC","weight":10}]}`)

	for _, tc := range []struct {
		body   string
		fields []string
	}{
		{`{"split":{}}`, []string{"split"}},
		{`{"split":[1,{"version_number":1,"weight":1}]}`, []string{"split[0]"}},
		{`{"split":[{"version_number":1,"weight":"x"},{"version_number":"2","weight":1}]}`, []string{"split[0].weight", "split[1].version_number"}},
		{`{"split":[{"version_number":1,"weight":1.5},{"version_id":7,"weight":1}]}`, []string{"split[0].weight", "split[1].version_id"}},
		{`{"split":[{"version_number":1,"weight":1,"color":"red"},{"version_number":2,"weight":null}]}`, []string{"split[0].color", "split[1].weight"}},
		{`{"split":[{"version_number":1,"weight":1},{"version_number":2,"weight":1,"weight":2}]}`, []string{"split[1].weight"}}, // given twice
		{`{"split":[{"version_number":0,"weight":1},{"version_number":2,"weight":1}]}`, []string{"split[0].version_number"}},    // given 0, not absent
	} {
		var act api.Activation
		bad := api.DecodeRequest([]byte(tc.body), &act)
		is.True(bad != nil) // refused
		var fields []string
		for _, f := range bad.Fields {
			fields = append(fields, f.Field)
		}
		is.Equal(fields, tc.fields) // naming the members
	}
}

func TestDecodeRenderSubject(t *testing.T) {
	is := is.New(t)
	var r api.Render
	is.True(api.DecodeRequest([]byte(`{"environment":"production","subject":"user-42"}`), &r) == nil)
	is.Equal(r.Domain("p").Subject, "user-42")
	bad := api.DecodeRequest([]byte(`{"subject":42}`), &r)
	is.True(bad != nil)
	is.Equal(bad.Fields[0].Field, "subject")

	// Given empty, refused: the interface hashes no empty subject; null is
	// none, as absent.
	bad = api.DecodeRequest([]byte(`{"subject":""}`), &r)
	is.True(bad != nil)
	is.Equal(bad.Fields, []prompts.FieldError{{Field: "subject", Detail: "must not be empty: omit it to be served the split's first entry"}})
	r = api.Render{}
	is.True(api.DecodeRequest([]byte(`{"subject":null}`), &r) == nil)
	is.Equal(r.Domain("p").Subject, "")
}
