package storetest

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

var templateTests = []test{
	{"a version carries its variables, computed when it is stored", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{ name }}, {{place}} {{name}} {{_a}} {{ no }", Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
		want := []string{"_a", "name", "place"}
		is.Equal(v.Variables, want) // CreateVersion answers them
		got, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)
		is.Equal(got.Variables, want) // GetVersion
		list, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err)
		is.Equal(list[0].Variables, want) // ListVersions
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.Equal(a.ActiveVersion.Variables, want) // GetActive
		a.ActiveVersion.Variables[0] = "changed"
		got.Variables[0] = "changed"
		again, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		is.Equal(again.ActiveVersion.Variables, want) // the answers were copies
		none := s.version(p.ID, "no variables")
		is.True(none.Variables != nil) // none is empty, not nil
		is.Equal(len(none.Variables), 0)
	}},
	{"the promotion guard refuses a version with other variables, atomically", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.version(p.ID, "Hi {{name}}", prompts.Production) // 1, active
		s.version(p.ID, "Hello {{ name }}!")               // 2: the same variables
		s.version(p.ID, "Hi {{name}} from {{place}}")      // 3: adds place
		s.version(p.ID, "Hi")                              // 4: removes name
		s.version(p.ID, "{{greeting}} {{place}}")          // 5: both
		before, rev := s.snapshot(), s.revision(p.ID)
		records := len(s.deployments(p.ID, ""))
		activate := func(n int, allow bool) error {
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(n),
				Change: prompts.Change{AllowVariableChange: allow}})
			return err
		}
		for n, want := range map[int]prompts.VariableChange{
			3: {Added: []string{"place"}},
			4: {Removed: []string{"name"}},
			5: {Added: []string{"greeting", "place"}, Removed: []string{"name"}},
		} {
			err := activate(n, false)
			is.True(errors.Is(err, prompts.ErrVariablesChanged))          // refused
			is.Equal(err.Error(), prompts.VariablesChanged(want).Error()) // naming what is added and removed
		}
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{other}}", Environments: []prompts.Environment{prompts.Staging, prompts.Production}})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // a version created active is guarded too
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{other}}", Environments: []prompts.Environment{prompts.Production, prompts.Production}})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // named twice, refused once
		is.Equal(s.snapshot(), before)                       // nothing changed: no version, no pointer
		is.Equal(s.revision(p.ID), rev)                      // no revision
		is.Equal(len(s.deployments(p.ID, "")), records)      // no record

		s.notFound(activate(9, false), "version 9") // an unknown version is not found, guard or not
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(5), Change: prompts.Change{IfRevision: rev - 1}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // then the precondition, then the guard
		is.NoErr(activate(2, false))                           // the same variables pass
		is.NoErr(activate(3, true))                            // others, when allowed
		is.Equal(s.active(p.ID, prompts.Production), s.versionID(p.ID, 3))
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(5)})
		is.NoErr(err) // nothing active in staging: nothing to guard

		before, rev = s.snapshot(), s.revision(p.ID)
		records = len(s.deployments(p.ID, ""))
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // back to 2 would remove place
		is.Equal(s.snapshot(), before)                       // and the refused rollback changed nothing
		is.Equal(s.revision(p.ID), rev)
		is.Equal(len(s.deployments(p.ID, "")), records)
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{AllowVariableChange: true}})
		is.NoErr(err) // allowed
		is.Equal(s.active(p.ID, prompts.Production), s.versionID(p.ID, 2))
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{other}}", Environments: []prompts.Environment{prompts.Production}, AllowVariableChange: true})
		is.NoErr(err) // a version created active, allowed
		is.Equal(s.active(p.ID, prompts.Production), v.ID)
	}},
}
