package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// textField is one free-text field of one input of the Store.
type textField struct {
	field string // the name the error reports
	max   int    // the most code points it may hold; 0 for no limit
	// set writes text into this field, every other field valid and new.
	set func(ctx context.Context, s *fixture, promptID, text string) error
}

// textFields lists every free-text field the Store takes.
var textFields = []textField{
	{"name", prompts.MaxName, func(ctx context.Context, s *fixture, _, text string) error {
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: text, Slug: s.unique("slug-")})
		return err
	}},
	{"description", prompts.MaxDescription, func(ctx context.Context, s *fixture, _, text string) error {
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: "Name", Slug: s.unique("slug-"), Description: text})
		return err
	}},
	{"name", prompts.MaxName, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: s.projectOf(promptID), Key: s.unique("key-"), Name: text})
		return err
	}},
	{"description", prompts.MaxDescription, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: s.projectOf(promptID), Key: s.unique("key-"), Name: "Name", Description: &text})
		return err
	}},
	{"name", prompts.MaxName, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.UpdatePrompt(ctx, promptID, prompts.PromptUpdate{Name: prompts.Some(text)})
		return err
	}},
	{"description", prompts.MaxDescription, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.UpdatePrompt(ctx, promptID, prompts.PromptUpdate{Description: prompts.Some(text)})
		return err
	}},
	{"content", 0, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: text})
		return err
	}},
	{"change_summary", prompts.MaxChangeSummary, func(ctx context.Context, s *fixture, promptID, text string) error {
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: promptID, Content: "c", ChangeSummary: &text})
		return err
	}},
}

// keyFields lists every place the Store takes a key.
var keyFields = []func(ctx context.Context, s *fixture, promptID, key string) error{
	func(ctx context.Context, s *fixture, promptID, key string) error {
		_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: s.projectOf(promptID), Key: key, Name: "Name"})
		return err
	},
	func(ctx context.Context, s *fixture, promptID, key string) error {
		_, err := s.UpdatePrompt(ctx, promptID, prompts.PromptUpdate{Key: prompts.Some(key)})
		return err
	},
}

// unique returns prefix followed by a number not used before.
func (s *fixture) unique(prefix string) string {
	s.n++
	return prefix + strconv.Itoa(s.n)
}

// projectOf returns the project of the prompt.
func (s *fixture) projectOf(promptID string) string {
	is := is.New(s.t)
	is.Helper()
	p, err := s.GetPrompt(s.t.Context(), promptID)
	is.NoErr(err) // get prompt
	return p.ProjectID
}

// refused checks that every text is refused in every field of fields,
// naming that field, and that the store is unchanged afterwards.
func (s *fixture) refused(texts []string, fields []textField) {
	is := is.New(s.t)
	is.Helper()
	p := s.prompt(s.project().ID, "k")
	before := s.snapshot()
	for _, f := range fields {
		for _, text := range texts {
			err := f.set(s.t.Context(), s, p.ID, text)
			s.invalid(err, f.field)
		}
	}
	is.Equal(s.snapshot(), before) // the refused writes changed nothing
}

// NUL in JSON metadata, as an escape in values and names at every depth.
var nulMetadata = []prompts.Metadata{
	`{"a":"\u0000"}`,
	`{"a":"x\u0000y"}`,
	`{"\u0000":1}`,
	`{"a\u0000b":1}`,
	`{"a":[1,{"b":["c","\u0000"]}]}`,
	`{"a":{"b":{"c\u0000":null}}}`,
	"{\"a\":\"\x00\"}",
}

var fieldRuleTests = []test{
	{"NUL is refused in every string field", func(t *testing.T, s *fixture) {
		is := is.New(t)
		s.refused([]string{"\x00", "a\x00", "\x00a", "a\x00b"}, textFields)
		p := s.prompt(s.project().ID, "nul")
		before := s.snapshot()
		for _, set := range keyFields {
			s.invalid(set(t.Context(), s, p.ID, "a\x00b"), "key")
		}
		_, err := s.CreateProject(t.Context(), prompts.NewProject{Name: "Name", Slug: "a\x00b"})
		s.invalid(err, "slug")
		for _, md := range nulMetadata {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: md})
			s.invalid(err, "metadata_")
		}
		_, _, err = s.ListPrompts(t.Context(), prompts.PromptFilter{Key: "a\x00"})
		s.invalid(err, "key")
		// References too: a NUL is a broken field, not an unknown id.
		_, err = s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: "\x00", Key: "k2", Name: "n"})
		s.invalid(err, "project_id")
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some("a\x00")})
		s.invalid(err, "version_id")
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"invalid UTF-8 is refused in every text field", func(t *testing.T, s *fixture) {
		is := is.New(t)
		bad := []string{"\xff", "a\xc3", "\xc3\x28", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok \xe2\x82"}
		s.refused(bad, textFields)
		p := s.prompt(s.project().ID, "utf8")
		before := s.snapshot()
		for _, set := range keyFields {
			s.invalid(set(t.Context(), s, p.ID, "k\xff"), "key")
		}
		for _, md := range []prompts.Metadata{"{\"a\":\"\xff\"}", "{\"\xc3\x28\":1}", "{\"a\":[\"\xed\xa0\x80\"]}"} {
			_, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", Metadata: md})
			s.invalid(err, "metadata_")
		}
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"text lengths count code points", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for _, f := range textFields {
			if f.max == 0 {
				continue
			}
			for _, r := range []string{"a", "é", "日", "😀"} {
				err := f.set(t.Context(), s, p.ID, strings.Repeat(r, f.max))
				is.NoErr(err) // the most code points a field holds, whatever their size in bytes
			}
		}
		var long []textField
		for _, f := range textFields {
			if f.max != 0 {
				long = append(long, f)
			}
		}
		for _, f := range long {
			before := s.snapshot()
			for _, r := range []string{"a", "😀"} {
				s.invalid(f.set(t.Context(), s, p.ID, strings.Repeat(r, f.max+1)), f.field)
			}
			is.Equal(s.snapshot(), before) // one code point too many is refused
		}
	}},
	{"name must not be only white space", func(t *testing.T, s *fixture) {
		var names []textField
		for _, f := range textFields {
			if f.field == "name" {
				names = append(names, f)
			}
		}
		s.refused([]string{"", " ", "   ", "\t\n", "\r\n", "\u00a0", "\u3000\u2003 "}, names)
	}},
	{"key is 1 to 128 characters", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for i, set := range keyFields {
			key := strings.Repeat("k", prompts.MaxKey-1) + strconv.Itoa(i)
			is.NoErr(set(t.Context(), s, p.ID, key)) // 128 characters are fine
		}
		before := s.snapshot()
		for _, set := range keyFields {
			s.invalid(set(t.Context(), s, p.ID, strings.Repeat("k", prompts.MaxKey+1)), "key")
		}
		_, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: p.ProjectID, Key: "", Name: "N"})
		s.invalid(err, "key")
		_, err = s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Some("")})
		s.invalid(err, "key")
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"key holds only ASCII letters, digits, dot, underscore, hyphen and slash", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		for _, set := range keyFields {
			for _, key := range []string{"a", "Z", "7", "support/greeting.v2_final-B", "a./_-", "0a/b/c"} {
				is.NoErr(set(t.Context(), s, p.ID, key+s.unique("-"))) // a well-formed key
			}
		}
		before := s.snapshot()
		for _, set := range keyFields {
			for _, key := range []string{"a b", "a:b", "a+b", `a\b`, "a?b", "a#b", "a%20", "é", "aé", "a\tb", "a\n", "ключ", "a😀"} {
				s.invalid(set(t.Context(), s, p.ID, key), "key")
			}
		}
		_, _, err := s.ListPrompts(t.Context(), prompts.PromptFilter{Key: "a b"})
		s.invalid(err, "key")
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"key starts with a letter or digit", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		before := s.snapshot()
		for _, set := range keyFields {
			for _, key := range []string{".a", "_a", "-a", "/a", ".", "/"} {
				s.invalid(set(t.Context(), s, p.ID, key), "key")
			}
		}
		_, _, err := s.ListPrompts(t.Context(), prompts.PromptFilter{Key: "/a"})
		s.invalid(err, "key")
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"required fields are reported together", func(t *testing.T, s *fixture) {
		ctx := t.Context()
		_, err := s.CreateProject(ctx, prompts.NewProject{})
		s.invalid(err, "name")
		_, err = s.CreatePrompt(ctx, prompts.NewPrompt{})
		s.invalid(err, "project_id", "key", "name")
		_, err = s.CreateVersion(ctx, prompts.NewVersion{})
		s.invalid(err, "prompt_id", "content")
		_, err = s.Activate(ctx, prompts.Activation{})
		s.invalid(err, "prompt_id", "environment", "version_id")
	}},
	{"every invalid field is reported at once", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		before := s.snapshot()
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: " ", Slug: "Bad Slug", Description: "\xff"})
		s.invalid(err, "name", "slug", "description")
		_, err = s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "-k", Name: strings.Repeat("n", 257), Description: ptr("\x00")})
		s.invalid(err, "key", "name", "description")
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("k k"), Name: prompts.Some("\t"), Description: prompts.Some(strings.Repeat("d", 4097))})
		s.invalid(err, "key", "name", "description")
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "a\x00", ChangeSummary: ptr(strings.Repeat("s", 1025)), Metadata: "[]", Environments: []prompts.Environment{"Dev"}})
		s.invalid(err, "content", "change_summary", "metadata_", "environments")
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: "Production", VersionID: prompts.Some(unknownID), VersionNumber: prompts.Some(1)})
		s.invalid(err, "environment", "version_id")
		_, _, err = s.ListPrompts(ctx, prompts.PromptFilter{Key: "-", Page: prompts.Page{Limit: -1, After: "x"}})
		s.invalid(err, "key", "limit", "after")
		is.Equal(s.snapshot(), before) // the refused writes changed nothing
	}},
	{"a refused write changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		s.prompt(proj.ID, "taken")
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("d")})
		is.NoErr(err) // create prompt
		v1 := s.version(p.ID, "one", prompts.Production)
		s.version(p.ID, "two", prompts.Staging)
		other := s.prompt(proj.ID, "other")
		ov := s.version(other.ID, "x")
		before := s.snapshot()
		refused := []error{
			func() error { _, err := s.CreateProject(ctx, prompts.NewProject{Name: proj.Name}); return err }(),
			func() error {
				_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "taken", Name: "N"})
				return err
			}(),
			func() error {
				_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("taken"), Description: prompts.Null[string]()})
				return err
			}(),
			func() error {
				_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("New"), Description: prompts.Some("\x00")})
				return err
			}(),
			func() error {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Metadata: "[1]", Environments: prompts.Environments})
				return err
			}(),
			func() error {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Environments: []prompts.Environment{prompts.Production, "dev"}})
				return err
			}(),
			func() error {
				_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(ov.ID)})
				return err
			}(),
			func() error {
				_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(3)})
				return err
			}(),
			s.deactivate(ctx, p.ID, "dev"),
		}
		for _, err := range refused {
			is.True(err != nil) // the write is refused
		}
		is.Equal(s.snapshot(), before)                      // and changes nothing
		is.Equal(s.active(p.ID, prompts.Production), v1.ID) // production still has version 1
	}},
}
