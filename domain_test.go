package prompts_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

func TestNextRevision(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	first := prompts.NextRevision(0, now)
	is.Equal(first, now.UnixMicro())                                    // a new prompt: the clock
	is.Equal(prompts.NextRevision(first, now), first+1)                 // the same microsecond: one more
	is.Equal(prompts.NextRevision(first, now.Add(-time.Hour)), first+1) // a clock behind: still one more
	is.Equal(prompts.NextRevision(first, now.Add(time.Second)), first+1e6)
}

func TestPromptUpdateApplyTellsAChange(t *testing.T) {
	is := is.New(t)
	desc := "d"
	p := prompts.Prompt{Key: "k", Name: "n", Description: &desc, Revision: 7}
	for _, tc := range []struct {
		name    string
		in      prompts.PromptUpdate
		changed bool
	}{
		{"nothing given", prompts.PromptUpdate{}, false},
		{"the same values", prompts.PromptUpdate{Key: prompts.Some("k"), Name: prompts.Some("n"), Description: prompts.Some("d")}, false},
		{"a new key", prompts.PromptUpdate{Key: prompts.Some("k2")}, true},
		{"a new name", prompts.PromptUpdate{Name: prompts.Some("n2")}, true},
		{"a new description", prompts.PromptUpdate{Description: prompts.Some("d2")}, true},
		{"description cleared", prompts.PromptUpdate{Description: prompts.Null[string]()}, true},
	} {
		got, changed := tc.in.Apply(p)
		is.Equal(changed, tc.changed) // tc.name
		is.Equal(got.Revision, int64(7))
	}
	q := p
	q.Description = nil
	_, changed := prompts.PromptUpdate{Description: prompts.Null[string]()}.Apply(q)
	is.True(!changed) // clearing what is null changes nothing
}

// Activation names its version by id or by number, exactly one; null is
// the same as absent.
func TestActivationValidate(t *testing.T) {
	const id = "01KAKM6N8V5X3ZJ0W2Q9R7T4YB"
	for _, tc := range []struct {
		name   string
		in     prompts.Activation
		fields []string
	}{
		{"by number", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(2)}, nil},
		{"by id", prompts.Activation{PromptID: id, Environment: prompts.Staging, VersionID: prompts.Some(id)}, nil},
		{"null id and a number", prompts.Activation{PromptID: id, Environment: prompts.Staging, VersionID: prompts.Null[string](), VersionNumber: prompts.Some(1)}, nil},
		{"both", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionID: prompts.Some(id), VersionNumber: prompts.Some(1)}, []string{"version_id"}},
		{"neither", prompts.Activation{PromptID: id, Environment: prompts.Production}, []string{"version_id"}},
		{"both null", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionID: prompts.Null[string](), VersionNumber: prompts.Null[int]()}, []string{"version_id"}},
		{"empty id", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionID: prompts.Some("")}, []string{"version_id"}},
		{"id with NUL", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionID: prompts.Some("a\x00")}, []string{"version_id"}},
		{"number 0", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(0)}, []string{"version_number"}},
		{"everything wrong", prompts.Activation{Environment: "Dev", VersionNumber: prompts.Some(-1)}, []string{"prompt_id", "environment", "version_number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := tc.in.Validate()
			if tc.fields == nil {
				is.NoErr(err) // valid
				return
			}
			var e *prompts.Error
			is.True(errors.As(err, &e)) // an *Error
			var got []string
			for _, f := range e.Fields {
				got = append(got, f.Field)
			}
			is.Equal(got, tc.fields) // the invalid fields
		})
	}
}

func TestEnvironmentValidate(t *testing.T) {
	is := is.New(t)
	for _, e := range append(prompts.Environments, "canary", "eu-west-1", "a", prompts.Environment(strings.Repeat("a", 32))) {
		is.NoErr(e.Validate()) // well-formed: whether a project has it is the Store's to say
	}
	for _, e := range []prompts.Environment{"", "Production", "1st", "-x", "a_b", "production ", "ünï", prompts.Environment(strings.Repeat("a", 33))} {
		err := e.Validate()
		var pe *prompts.Error
		is.True(errors.As(err, &pe))                // invalid
		is.Equal(pe.Fields[0].Field, "environment") // names the field
		is.True(errors.Is(err, prompts.ErrInvalid)) // with the invalid code
	}
}

// ActivePrompt.Copy shares nothing with the original, whatever the number
// of variables.
func TestActivePromptCopy(t *testing.T) {
	is := is.New(t)
	for _, vars := range [][]string{nil, {}, {"a"}, {"a", "b", "c", "d"}, {"a", "b", "c", "d", "e", "f"}} {
		desc, summary := "d", "s"
		a := prompts.ActivePrompt{Prompt: prompts.Prompt{Description: &desc},
			ActiveVersion: &prompts.PromptVersion{ChangeSummary: &summary, Variables: slices.Clone(vars)}}
		c := a.Copy()
		is.Equal(c, a) // equal
		*c.Description, *c.ActiveVersion.ChangeSummary = "x", "x"
		if len(vars) > 0 {
			c.ActiveVersion.Variables[0] = "x"
			c.ActiveVersion.Variables = append(c.ActiveVersion.Variables, "y")
			is.Equal(a.ActiveVersion.Variables, vars) // untouched
		}
		is.Equal(c.ActiveVersion.Variables == nil, vars == nil) // nil stays nil
		is.Equal(*a.Description, "d")
		is.Equal(*a.ActiveVersion.ChangeSummary, "s")
	}
}

// Metadata that gives a name twice in one object, at any depth, is
// invalid, and the error names the member's path as the HTTP interface
// does; the same name in two objects, or a name and its value alike, is
// fine.
func TestMetadataDuplicateNames(t *testing.T) {
	for _, tc := range []struct {
		md, field string // field "": valid
	}{
		{`{"model":"a","model":"b"}`, "metadata_.model"},
		{`{"model":"a","n":{"x":1,"x":2}}`, "metadata_.n.x"},
		{`{"x":{"y":[1,{"z":1,"z":{}}]}}`, "metadata_.x.y[1].z"},
		{`{"l":[[0],[1,2,{"a":{"b":1,"c":2,"b":3}}]]}`, "metadata_.l[1][2].a.b"},
		{`{"model":"a","\u006dodel":"b"}`, "metadata_.model"}, // escaped, the same name
		{`{"a":{"b":1},"c":{"d":{},"d":[]}}`, "metadata_.c.d"},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},           // one name in two objects
		{`{"a":"a","b":["a","a"],"c":{"a":1}}`, ""}, // values alike
		{`{"a":[{"x":1},{"x":2}]}`, ""},             // objects in an array
	} {
		t.Run(tc.md, func(t *testing.T) {
			is := is.New(t)
			err := prompts.Metadata(tc.md).Validate()
			if tc.field == "" {
				is.NoErr(err) // valid
				return
			}
			var e *prompts.Error
			is.True(errors.As(err, &e))                                                                    // an *Error
			is.Equal(e.Fields, []prompts.FieldError{{Field: tc.field, Detail: "is given more than once"}}) // names the member
		})
	}
}
