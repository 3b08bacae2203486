package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

var promptTests = []test{
	{"prompt is created with no versions", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "support/greeting", Name: "Greeting", Description: ptr("says hello")})
		is.NoErr(err)                          // create prompt
		is.True(prompts.ValidID(p.ID))         // the id is a well-formed ULID
		is.Equal(p.ProjectID, proj.ID)         // project_id
		is.Equal(p.Key, "support/greeting")    // key
		is.Equal(p.Name, "Greeting")           // name
		is.True(p.Description != nil)          // description is set
		is.Equal(*p.Description, "says hello") // description
		is.Equal(p.LatestVersionID, "")        // latest_version_id is null without versions
		got, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                            // get prompt
		is.Equal(promptText(got), promptText(p)) // read back as created
		vs, more, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)        // list versions
		is.Equal(len(vs), 0) // a new prompt has no versions
		is.True(!more)       // and no more to come
	}},
	{"prompt description null and empty are kept apart", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		null, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "null", Name: "Null"})
		is.NoErr(err)                   // create prompt without description
		is.Equal(null.Description, nil) // no description is null
		empty, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "empty", Name: "Empty", Description: ptr("")})
		is.NoErr(err)                     // create prompt with an empty description
		is.True(empty.Description != nil) // an empty description is not null
		got, err := s.GetPrompt(ctx, null.ID)
		is.NoErr(err)                  // get prompt
		is.Equal(got.Description, nil) // null reads back as null
		got, err = s.GetPrompt(ctx, empty.ID)
		is.NoErr(err)                   // get prompt
		is.True(got.Description != nil) // empty reads back as not null
		is.Equal(*got.Description, "")  // empty reads back as empty
	}},
	{"prompt of an unknown project is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		before := s.snapshot()
		for _, id := range append(malformedIDs(proj.ID), unknownID, proj.ID[:10]+strings.Repeat("0", 16)) {
			_, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: id, Key: "k", Name: "N"})
			is.True(errors.Is(err, prompts.ErrNotFound)) // an unknown or malformed project id is not found
		}
		is.Equal(s.snapshot(), before) // nothing was stored
	}},
}

var keyTests = []test{
	{"key is unique within its project", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		s.prompt(proj.ID, "greeting")
		before := s.snapshot()
		_, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: proj.ID, Key: "greeting", Name: "Again"})
		is.True(errors.Is(err, prompts.ErrConflict)) // a key the project uses is a conflict
		is.Equal(s.snapshot(), before)               // the refused prompt is not stored
	}},
	{"key uniqueness is case-sensitive", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		a := s.prompt(proj.ID, "a")
		b := s.prompt(proj.ID, "A")
		is.True(a.ID != b.ID) // "a" and "A" are two keys
		ps, _, err := s.ListPrompts(t.Context(), prompts.PromptFilter{ProjectIDs: []string{proj.ID}})
		is.NoErr(err)        // list prompts
		is.Equal(len(ps), 2) // both are stored
	}},
	{"same key in two projects is fine", func(t *testing.T, s *fixture) {
		is := is.New(t)
		one, two := s.project(), s.project()
		a := s.prompt(one.ID, "greeting")
		b := s.prompt(two.ID, "greeting")
		is.True(a.ID != b.ID)         // two prompts
		is.Equal(b.ProjectID, two.ID) // each in its project
	}},
	{"rename to a key the project uses is a conflict", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		s.prompt(proj.ID, "taken")
		p := s.prompt(proj.ID, "mine")
		before := s.snapshot()
		_, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Some("taken"), Name: prompts.Some("Renamed")})
		is.True(errors.Is(err, prompts.ErrConflict)) // renaming to a taken key is a conflict
		is.Equal(s.snapshot(), before)               // nothing of the update was applied, the name neither
	}},
	{"rename to its own key is fine", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p := s.prompt(proj.ID, "mine")
		got, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Some("mine"), Name: prompts.Some("Renamed")})
		is.NoErr(err)                 // the prompt's own key is not a clash
		is.Equal(got.Key, "mine")     // key kept
		is.Equal(got.Name, "Renamed") // the rest of the update is applied
	}},
	{"rename to a key of another project is fine", func(t *testing.T, s *fixture) {
		is := is.New(t)
		one, two := s.project(), s.project()
		s.prompt(one.ID, "shared")
		p := s.prompt(two.ID, "mine")
		got, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Some("shared")})
		is.NoErr(err)               // keys are unique per project only
		is.Equal(got.Key, "shared") // renamed
	}},
	{"after a rename the old key is free", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "old")
		_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("new")})
		is.NoErr(err) // rename
		q, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "old", Name: "Old again"})
		is.NoErr(err) // the old key can be used again
		a, err := s.GetActiveByKey(ctx, proj.ID, "new", prompts.Production)
		is.NoErr(err)        // the renamed prompt is found by its new key
		is.Equal(a.ID, p.ID) // the renamed prompt
		a, err = s.GetActiveByKey(ctx, proj.ID, "old", prompts.Production)
		is.NoErr(err)        // the old key now names the new prompt
		is.Equal(a.ID, q.ID) // the new prompt
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("old")})
		is.True(errors.Is(err, prompts.ErrConflict)) // and is taken again
	}},
}

var updateTests = []test{
	{"update sets every given field", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "before")
		v := s.version(p.ID, "v1")
		got, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{
			Key:         prompts.Some("after"),
			Name:        prompts.Some("After"),
			Description: prompts.Some("now described"),
		})
		is.NoErr(err)                               // update
		is.Equal(got.Key, "after")                  // key set
		is.Equal(got.Name, "After")                 // name set
		is.True(got.Description != nil)             // description set
		is.Equal(*got.Description, "now described") // description value
		is.Equal(got.ID, p.ID)                      // id unchanged
		is.Equal(got.ProjectID, proj.ID)            // project unchanged
		is.Equal(got.LatestVersionID, v.ID)         // latest_version_id unchanged
		is.True(got.CreatedAt.Equal(p.CreatedAt))   // created_at unchanged
		read, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                               // get prompt
		is.Equal(promptText(read), promptText(got)) // the update is stored as returned
	}},
	{"update leaves absent fields unchanged", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		got, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("Other")})
		is.NoErr(err)                      // update the name only
		is.Equal(got.Name, "Other")        // name set
		is.Equal(got.Key, "k")             // absent key unchanged
		is.True(got.Description != nil)    // absent description unchanged
		is.Equal(*got.Description, "desc") // absent description unchanged
		got, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Description: prompts.Some("")})
		is.NoErr(err)                   // update the description only
		is.Equal(got.Name, "Other")     // absent name unchanged
		is.True(got.Description != nil) // an empty description is not null
		is.Equal(*got.Description, "")  // description set to empty
	}},
	{"zero update is a no-op", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		s.version(p.ID, "v1", prompts.Production)
		want, err := s.GetPrompt(t.Context(), p.ID)
		is.NoErr(err) // get prompt
		before := s.snapshot()
		got, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{})
		is.NoErr(err)                               // the zero update is valid
		is.Equal(promptText(got), promptText(want)) // and returns the prompt as it is
		is.Equal(s.snapshot(), before)              // and changes nothing
	}},
	{"update description null clears it", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		got, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Description: prompts.Null[string]()})
		is.NoErr(err)                  // description null is valid
		is.Equal(got.Description, nil) // and clears it
		is.Equal(got.Name, "Name")     // leaving the rest
		read, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                   // get prompt
		is.Equal(read.Description, nil) // cleared in the store
	}},
	{"update key or name null is invalid", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		before := s.snapshot()
		_, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Null[string](), Name: prompts.Null[string](), Description: prompts.Some("d")})
		s.invalid(err, "key", "name")
		_, err = s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Name: prompts.Null[string]()})
		s.invalid(err, "name")
		is.Equal(s.snapshot(), before) // nothing of the refused updates was applied
	}},
	{"field rules are checked before existence and conflicts", func(t *testing.T, s *fixture) {
		proj := s.project()
		s.prompt(proj.ID, "taken")
		p := s.prompt(proj.ID, "mine")
		_, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Key: prompts.Some("taken"), Name: prompts.Some(" ")})
		s.invalid(err, "name")
		_, err = s.UpdatePrompt(t.Context(), unknownID, prompts.PromptUpdate{Name: prompts.Some(" ")})
		s.invalid(err, "name")
		_, err = s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: proj.ID, Key: "taken", Name: "\t"})
		s.invalid(err, "name")
		_, err = s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: unknownID, Key: "-", Name: "N"})
		s.invalid(err, "key")
		_, err = s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: unknownID, Content: ""})
		s.invalid(err, "content")
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: unknownID, Environment: "Dev", VersionNumber: prompts.Some(1)})
		s.invalid(err, "environment")
		_, err = s.CreateProject(t.Context(), prompts.NewProject{Name: proj.Name, Slug: "Bad"})
		s.invalid(err, "slug")
	}},
}
