package wire_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/internal/wire"
)

// benchActive is read 3's value in the load harness.
func benchActive() prompts.ActivePrompt {
	now := time.Date(2026, 11, 21, 22, 19, 26, 123456000, time.UTC)
	desc := "The first message of the support assistant."
	return prompts.ActivePrompt{
		Prompt: prompts.Prompt{
			ID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", ProjectID: "01KAKM6N8V0000000000000000", Key: "support/greeting",
			Name: "Support greeting", Description: &desc, LatestVersionID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", CreatedAt: now,
		},
		Environment: prompts.Production,
		ActiveVersion: &prompts.PromptVersion{
			ID: "01KAKM6N8W5X3ZJ0W2Q9R7T4YC", PromptID: "01KAKM6N8V5X3ZJ0W2Q9R7T4YB", VersionNumber: 1,
			Content:  strings.Repeat("You are the support assistant of {{company}}. Greet them warmly. ", 11),
			Metadata: `{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"]}`, CreatedAt: now,
		},
	}
}

// The entity tag names the prompt, the environment and the revision, and
// so differs whenever one of them does.
func TestAppendETag(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	a.Revision = 1763900000123456
	tag := string(wire.AppendETag(nil, a))
	is.Equal(tag, `"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`)
	tags := map[string]bool{tag: true}
	b := a
	b.Revision++
	c := a
	c.Environment = prompts.Staging
	d := a
	d.ID = "01KAKM6N8V5X3ZJ0W2Q9R7T4YD"
	for _, x := range []prompts.ActivePrompt{b, c, d} {
		tg := string(wire.AppendETag(nil, x))
		is.True(!tags[tg]) // another prompt, environment or revision, another tag
		tags[tg] = true
	}
}

// ParseETag reads back what AppendETag writes, and nothing else.
func TestParseETag(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	a.Revision = 1763900000123456
	id, env, rev, ok := wire.ParseETag(string(wire.AppendETag(nil, a)))
	is.True(ok)
	is.Equal(id, a.ID)
	is.Equal(env, a.Environment)
	is.Equal(rev, a.Revision)
	a.Environment = "eu-west-1" // a project's environment may hold '-'
	id, env, rev, ok = wire.ParseETag(string(wire.AppendETag(nil, a)))
	is.True(ok)
	is.Equal(id, a.ID)
	is.Equal(env, a.Environment)
	is.Equal(rev, a.Revision)
	for _, bad := range []string{
		``, `"`, `""`, `*`,
		`1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456`,     // unquoted
		`W/"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`, // weak
		`"2-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456"`,   // another form
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4Y-production-1763900000123456"`,    // not an id
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-Dev-1763900000123456"`,          // not an environment name
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-1763900000123456"`,              // no environment
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-0"`,                  // no revision
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1x"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-99999999999999999999"`,
		`"0123456789abcdef"`, // the tags of an older release
	} {
		_, _, _, ok := wire.ParseETag(bad)
		is.True(!ok) // not a tag of this form: bad
	}
}

// The tag of an environment that holds a split names the version served
// too, so that each version of the split has a tag of its own; ParseETag
// reads its revision as that of any other tag.
func TestETagOfSplit(t *testing.T) {
	is := is.New(t)
	a := benchActive()
	a.Revision = 1763900000123456
	one := *a.ActiveVersion
	two := one
	two.ID, two.VersionNumber = "01KAKM6N8X5X3ZJ0W2Q9R7T4YD", 12
	a.Split = prompts.Split{{VersionID: one.ID, VersionNumber: 1, Weight: 1}, {VersionID: two.ID, VersionNumber: 12, Weight: 1}}
	a.SplitVersions = []prompts.PromptVersion{one, two}
	a.ActiveVersion = &a.SplitVersions[0]
	first := string(wire.AppendETag(nil, a))
	is.Equal(first, `"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v1"`)
	a.ActiveVersion = &a.SplitVersions[1]
	second := string(wire.AppendETag(nil, a))
	is.Equal(second, `"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v12"`) // another version, another tag

	for _, env := range []prompts.Environment{prompts.Production, "eu-west-1", "canary-v3"} {
		a.Environment = env
		id, e, rev, v, ok := wire.ParseETagVersion(string(wire.AppendETag(nil, a)))
		is.True(ok)
		is.Equal(id, a.ID)
		is.Equal(e, env) // an environment whose name looks like a version too
		is.Equal(rev, a.Revision)
		is.Equal(v, 12)
		_, e, rev, ok = wire.ParseETag(string(wire.AppendETag(nil, a)))
		is.True(ok) // ParseETag reads it as any tag
		is.Equal(e, env)
		is.Equal(rev, a.Revision)
	}
	a.Environment, a.Split, a.SplitVersions = "canary-v3", nil, nil
	_, e, rev, v, ok := wire.ParseETagVersion(string(wire.AppendETag(nil, a)))
	is.True(ok)
	is.Equal(e, prompts.Environment("canary-v3")) // not a version: the revision follows
	is.Equal(rev, a.Revision)
	is.Equal(v, 0) // a tag of no split names no version

	for _, bad := range []string{
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v0"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v03"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v+3"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v3x"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-1763900000123456-v99999999999"`,
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-production-v3"`, // no revision
		`"1-01KAKM6N8V5X3ZJ0W2Q9R7T4YB-v3"`,
	} {
		_, _, _, _, ok := wire.ParseETagVersion(bad)
		is.True(!ok) // bad
	}
}
