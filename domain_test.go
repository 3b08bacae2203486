package prompts_test

import (
	"errors"
	"slices"
	"strconv"
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
		{"split", prompts.Activation{PromptID: id, Environment: prompts.Production, Split: prompts.Split{{VersionNumber: 1, Weight: 90}, {VersionID: id, Weight: 10}}}, nil},
		{"split and a number", prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(1), Split: prompts.Split{{VersionNumber: 1, Weight: 1}, {VersionNumber: 2, Weight: 1}}}, []string{"split"}},
		{"split of one", prompts.Activation{PromptID: id, Environment: prompts.Production, Split: prompts.Split{{VersionNumber: 1, Weight: 1}}}, []string{"split"}},
		{"empty split", prompts.Activation{PromptID: id, Environment: prompts.Production, Split: prompts.Split{}}, []string{"split"}},
		{"split of eleven", prompts.Activation{PromptID: id, Environment: prompts.Production, Split: func() prompts.Split {
			var s prompts.Split
			for i := range 11 {
				s = append(s, prompts.Share{VersionNumber: i + 1, Weight: 1})
			}
			return s
		}()}, []string{"split"}},
		{"split entries wrong", prompts.Activation{PromptID: id, Environment: prompts.Production, Split: prompts.Split{
			{VersionNumber: 1, Weight: 0}, {VersionNumber: 1, Weight: 10001}, {Weight: 1}, {VersionID: id, VersionNumber: 2, Weight: 1},
			{VersionID: id, Weight: 1}, {VersionID: id, Weight: 1}, {VersionNumber: -3, Weight: 1}}},
			[]string{"split[0].weight", "split[1].version_number", "split[1].weight", "split[2].version_id", "split[3].version_id", "split[5].version_id", "split[6].version_number"}},
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

// PromptVersion.Copy shares nothing with the original, whatever the
// number of variables and partials: neither a change to an element nor
// an append reaches the original, or the other list.
func TestPromptVersionCopy(t *testing.T) {
	is := is.New(t)
	lists := [][]string{nil, {}, {"a"}, {"a", "b", "c"}, {"a", "b", "c", "d", "e", "f", "g"}}
	for _, vars := range lists {
		for _, partials := range lists {
			for _, summary := range []*string{nil, new(string)} {
				v := prompts.PromptVersion{ID: "v", ChangeSummary: summary, Variables: slices.Clone(vars), Partials: slices.Clone(partials)}
				c := v.Copy()
				is.Equal(c, v)                                        // equal
				is.Equal(c.Variables == nil, vars == nil)             // nil stays nil
				is.Equal(c.Partials == nil, partials == nil)          // nil stays nil
				is.True(summary == nil || c.ChangeSummary != summary) // its own summary
				for i := range c.Variables {
					c.Variables[i] = "z"
				}
				for i := range c.Partials {
					c.Partials[i] = "z"
				}
				c.Variables = append(c.Variables, "x") // appending to one list
				c.Partials = append(c.Partials, "y")   // does not reach the other
				is.Equal(c.Variables[len(c.Variables)-1], "x")
				if len(partials) > 0 {
					is.Equal(c.Partials[0], "z") // not overwritten by the variable appended
				}
				is.Equal(v.Variables, vars)    // untouched
				is.Equal(v.Partials, partials) // untouched
			}
		}
	}
	room := make([]string, 1, 4)
	c := prompts.PromptVersion{Variables: room[:0], Partials: room[:0]}.Copy()
	c.Variables = append(c.Variables, "x")
	c.Partials = append(c.Partials, "y")
	is.Equal(room[0], "") // an empty list's spare room is not the copy's
}

// A split's Copy shares nothing with the original, and serves the entry
// the original served.
func TestActivePromptCopySplit(t *testing.T) {
	is := is.New(t)
	summary := "s"
	vs := []prompts.PromptVersion{{ID: "a", VersionNumber: 1, Variables: []string{"x"}, ChangeSummary: &summary}, {ID: "b", VersionNumber: 2}}
	a := prompts.ActivePrompt{Prompt: prompts.Prompt{ID: "p"}, Environment: prompts.Production,
		Split: prompts.Split{{VersionID: "a", VersionNumber: 1, Weight: 1}, {VersionID: "b", VersionNumber: 2, Weight: 1}}, SplitVersions: vs}
	a.ActiveVersion = &a.SplitVersions[1]
	c := a.Copy()
	is.Equal(c, a)
	is.True(c.ActiveVersion == &c.SplitVersions[1]) // serves its own copy of the same entry
	c.Split[0].Weight = 7
	c.SplitVersions[0].Variables[0] = "y"
	*c.SplitVersions[0].ChangeSummary = "t"
	is.Equal(a.Split[0].Weight, 1)
	is.Equal(a.SplitVersions[0].Variables[0], "x")
	is.Equal(*a.SplitVersions[0].ChangeSummary, "s")
}

// Pick serves a subject the version of the entry that owns its point,
// by the published formula; no subject, or no split, changes nothing.
func TestActivePromptPick(t *testing.T) {
	is := is.New(t)
	const id = "01J9Z3K6Q2W8XN5T4V7B1C0D9E"
	vs := []prompts.PromptVersion{{ID: "v3", VersionNumber: 3}, {ID: "v4", VersionNumber: 4}, {ID: "v5", VersionNumber: 5}}
	split := prompts.Split{{VersionID: "v3", VersionNumber: 3, Weight: 70}, {VersionID: "v4", VersionNumber: 4, Weight: 20}, {VersionID: "v5", VersionNumber: 5, Weight: 10}}
	a := prompts.ActivePrompt{Prompt: prompts.Prompt{ID: id}, Environment: prompts.Production, Split: split, SplitVersions: vs, ActiveVersion: &vs[0]}
	counts := map[int]int{}
	for i := range 10000 {
		subject := "user-" + strconv.Itoa(i)
		p := a.Pick(subject)
		want := prompts.SplitEntry(prompts.SplitPoint(id, prompts.Production, subject), []int{70, 20, 10})
		is.Equal(p.ActiveVersion.VersionNumber, vs[want].VersionNumber)                      // the formula's entry
		is.Equal(p.Pick(subject).ActiveVersion.VersionNumber, p.ActiveVersion.VersionNumber) // sticky
		counts[p.ActiveVersion.VersionNumber]++
	}
	is.True(counts[3] > 6700 && counts[3] < 7300 && counts[4] > 1800 && counts[4] < 2200 && counts[5] > 850 && counts[5] < 1150)
	is.Equal(a.Pick("").ActiveVersion.VersionNumber, 3) // no subject: the first entry
	plain := prompts.ActivePrompt{Prompt: prompts.Prompt{ID: id}, ActiveVersion: &vs[1]}
	is.Equal(plain.Pick("user-1").ActiveVersion.VersionNumber, 4) // no split: as it is
	is.Equal(testing.AllocsPerRun(100, func() { _ = a.Pick("user-12345") }), 0.0)
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
