package storetest

import (
	"errors"
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// badEnvironments are environments a Store refuses: malformed names, and
// "dev", which no project of the tests has.
var badEnvironments = []prompts.Environment{"", "dev", "Production", "STAGING", " production", "production\x00"}

var activationTests = []test{
	{"nothing is active in a new prompt", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		for _, env := range prompts.Environments {
			a, err := s.GetActive(t.Context(), p.ID, env)
			is.NoErr(err)                  // get active
			is.Equal(a.ActiveVersion, nil) // active version is null
			is.Equal(a.Environment, env)   // for the environment asked
			is.Equal(a.ID, p.ID)           // the prompt is there all the same
			is.Equal(a.Key, "k")           // with its fields
		}
	}},
	{"activate by id", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		a, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(vs[0].ID)})
		is.NoErr(err)                                               // activate by id
		is.True(a.ActiveVersion != nil)                             // a version is active
		is.Equal(versionText(*a.ActiveVersion), versionText(vs[0])) // the version asked for
		is.Equal(a.Environment, prompts.Production)                 // in the environment asked
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID)      // and it stays active
	}},
	{"activate by number", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 3)
		a, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(2)})
		is.NoErr(err)                                       // activate by number
		is.True(a.ActiveVersion != nil)                     // a version is active
		is.Equal(a.ActiveVersion.ID, vs[1].ID)              // version number 2
		is.Equal(s.active(p.ID, prompts.Staging), vs[1].ID) // and it stays active
	}},
	{"activate answers as get active does", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: s.project().ID, Key: "k", Name: "N", Description: ptr("d")})
		is.NoErr(err) // create prompt
		v, err := s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "c", ChangeSummary: ptr("why"), Metadata: `{"a":[1,2]}`})
		is.NoErr(err) // create version
		a, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(v.ID)})
		is.NoErr(err) // activate
		got, err := s.GetActive(t.Context(), p.ID, prompts.Staging)
		is.NoErr(err)                                              // get active
		is.Equal(activeText(a), activeText(got))                   // the same read
		is.Equal(got.LatestVersionID, v.ID)                        // with latest_version_id
		is.True(got.ActiveVersion.ChangeSummary != nil)            // and the active version's change_summary
		is.Equal(*got.ActiveVersion.ChangeSummary, "why")          // as stored
		is.True(got.Description != nil && *got.Description == "d") // and the prompt's description
	}},
	{"environments are independent", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err)                                 // activate 1 in production
		is.Equal(s.active(p.ID, prompts.Staging), "") // staging is untouched
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(2)})
		is.NoErr(err)                                          // activate 2 in staging
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID) // production keeps 1
		is.Equal(s.active(p.ID, prompts.Staging), vs[1].ID)    // staging has 2
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Staging))     // deactivate staging
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID) // production keeps 1
		q := s.prompt(p.ProjectID, "other")
		s.versions(q.ID, 1)
		is.Equal(s.active(q.ID, prompts.Production), "") // another prompt is untouched
	}},
	{"rollback activates an older version", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2)})
		is.NoErr(err) // promote 2
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err)                                          // roll back to 1
		is.Equal(a.ActiveVersion.ID, vs[0].ID)                 // 1 is active
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID) // and stays active
		is.Equal(a.LatestVersionID, vs[1].ID)                  // 2 is still the latest
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err)                                          // activating the active version again is fine
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID) // and changes nothing
	}},
	{"deactivate leaves nothing active", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		v := s.version(p.ID, "c", prompts.Production, prompts.Staging)
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // deactivate production
		is.Equal(s.active(p.ID, prompts.Production), "")              // nothing active in production
		is.Equal(s.active(p.ID, prompts.Staging), v.ID)               // staging keeps its version
		got, err := s.GetVersion(t.Context(), p.ID, 1)
		is.NoErr(err)          // the version itself stays
		is.Equal(got.ID, v.ID) // unchanged
	}},
	{"deactivate when nothing is active is a no-op", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		before := s.snapshot()
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // nothing active is fine
		is.Equal(s.snapshot(), before)                                // and changes nothing
		s.version(p.ID, "c", prompts.Staging)
		before = s.snapshot()
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // nothing active in production is fine
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // twice too
		is.Equal(s.snapshot(), before)                                // and changes nothing
	}},
	{"a version of another prompt is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.version(p.ID, "one")
		mine := s.version(p.ID, "two", prompts.Production)
		q := s.prompt(p.ProjectID, "other")
		theirs := s.versions(q.ID, 2)
		before := s.snapshot()
		for _, v := range theirs {
			_, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v.ID)})
			is.True(errors.Is(err, prompts.ErrNotFound)) // another prompt's version is not found, though this prompt has its number
		}
		_, err := s.Activate(t.Context(), prompts.Activation{PromptID: q.ID, Environment: prompts.Staging, VersionID: prompts.Some(mine.ID)})
		is.True(errors.Is(err, prompts.ErrNotFound)) // nor the other way round
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(p.ID)})
		is.True(errors.Is(err, prompts.ErrNotFound))          // nor is an id of something else
		is.Equal(s.snapshot(), before)                        // nothing changed
		is.Equal(s.active(p.ID, prompts.Production), mine.ID) // production keeps its version
	}},
	{"an unknown version number is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		q := s.prompt(p.ProjectID, "other")
		s.versions(q.ID, 3)
		empty := s.prompt(p.ProjectID, "empty")
		before := s.snapshot()
		for _, n := range []int{3, 4, 1 << 40} {
			_, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(n)})
			is.True(errors.Is(err, prompts.ErrNotFound)) // no such number for this prompt
		}
		_, err := s.Activate(t.Context(), prompts.Activation{PromptID: empty.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1)})
		is.True(errors.Is(err, prompts.ErrNotFound)) // a prompt without versions has no number 1
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(unknownID)})
		is.True(errors.Is(err, prompts.ErrNotFound)) // an unknown version id is not found
		is.Equal(s.snapshot(), before)               // nothing changed
	}},
	{"activation names exactly one of version id and number", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		v := s.version(p.ID, "c")
		before := s.snapshot()
		_, err := s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v.ID), VersionNumber: prompts.Some(1)})
		s.invalid(err, "version_id")
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production})
		s.invalid(err, "version_id")
		_, err = s.Activate(t.Context(), prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(-1)})
		s.invalid(err, "version_number")
		is.Equal(s.snapshot(), before) // nothing changed
	}},
	{"environment must be one of the project's", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.version(p.ID, "c")
		before := s.snapshot()
		for _, env := range badEnvironments {
			_, err := s.GetActive(ctx, p.ID, env)
			s.invalid(err, "environment")
			_, err = s.GetActiveByKey(ctx, proj.ID, "k", env)
			s.invalid(err, "environment")
			_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(1)})
			s.invalid(err, "environment")
			s.invalid(s.deactivate(ctx, p.ID, env), "environment")
			_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{env}})
			s.invalid(err, "environments")
		}
		is.Equal(s.snapshot(), before) // nothing changed
	}},
	{"create and activate in one step", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.prompt(s.project().ID, "k")
		v1 := s.version(p.ID, "one", prompts.Staging)
		is.Equal(s.active(p.ID, prompts.Staging), v1.ID) // active in staging
		is.Equal(s.active(p.ID, prompts.Production), "") // not in production
		v2 := s.version(p.ID, "two", prompts.Production, prompts.Staging)
		is.Equal(s.active(p.ID, prompts.Staging), v2.ID)    // active in staging
		is.Equal(s.active(p.ID, prompts.Production), v2.ID) // and in production
		v3 := s.version(p.ID, "three", prompts.Production, prompts.Production)
		is.Equal(s.active(p.ID, prompts.Production), v3.ID) // an environment named twice is named once
		is.Equal(s.active(p.ID, prompts.Staging), v2.ID)    // staging keeps 2
		a, err := s.GetActive(t.Context(), p.ID, prompts.Production)
		is.NoErr(err)                                            // get active
		is.Equal(versionText(*a.ActiveVersion), versionText(v3)) // the version as created
		is.Equal(a.LatestVersionID, v3.ID)                       // and the latest
	}},
}

var lookupTests = []test{
	{"get active by project and key", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		one, two := s.project(), s.project()
		p := s.prompt(one.ID, "support/greeting")
		q := s.prompt(two.ID, "support/greeting")
		pv := s.version(p.ID, "one's", prompts.Production)
		qv := s.version(q.ID, "two's", prompts.Production)
		a, err := s.GetActiveByKey(ctx, one.ID, "support/greeting", prompts.Production)
		is.NoErr(err)                       // get active by key
		is.Equal(a.ID, p.ID)                // the prompt of that project
		is.Equal(a.ActiveVersion.ID, pv.ID) // with its active version
		want, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)                             // get active by id
		is.Equal(activeText(a), activeText(want)) // the same read as by id
		b, err := s.GetActiveByKey(ctx, two.ID, "support/greeting", prompts.Production)
		is.NoErr(err)                       // the same key in another project
		is.Equal(b.ID, q.ID)                // is the other prompt
		is.Equal(b.ActiveVersion.ID, qv.ID) // with its own version
		c, err := s.GetActiveByKey(ctx, one.ID, "support/greeting", prompts.Staging)
		is.NoErr(err)                            // another environment
		is.Equal(c.ActiveVersion, nil)           // with nothing active
		is.Equal(c.Environment, prompts.Staging) // says which
	}},
	{"get active by key of an unknown project or key is not found", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		one, two := s.project(), s.project()
		p := s.prompt(one.ID, "only-here")
		for _, projectID := range append(malformedIDs(one.ID), "", unknownID, p.ID) {
			_, err := s.GetActiveByKey(ctx, projectID, "only-here", prompts.Production)
			is.True(errors.Is(err, prompts.ErrNotFound)) // unknown or malformed project
		}
		for _, key := range []string{"missing", "ONLY-HERE", "only-her", "only-here/"} {
			_, err := s.GetActiveByKey(ctx, one.ID, key, prompts.Production)
			is.True(errors.Is(err, prompts.ErrNotFound)) // unknown key
		}
		_, err := s.GetActiveByKey(ctx, two.ID, "only-here", prompts.Production)
		is.True(errors.Is(err, prompts.ErrNotFound)) // a key of another project
	}},
}
