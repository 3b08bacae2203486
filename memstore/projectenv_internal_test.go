package memstore

import (
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A project's environments, what its prompts' other environments point
// at, and the events of their changes are in the journal and in a
// compaction's rewrite of it.
func TestFileKeepsProjectEnvironments(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := Open(path)
	is.NoErr(err)
	defer func() { s.Close() }()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P", Slug: "p"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	for _, in := range []prompts.NewEnvironment{{Name: "canary", Protected: true}, {Name: "eu"}, {Name: "gone"}, {Name: prompts.Staging, Protected: true}} {
		in.ProjectID = proj.ID
		_, err = s.PutEnvironment(ctx, in)
		is.NoErr(err)
	}
	is.NoErr(s.DeleteEnvironment(ctx, proj.ID, "gone"))
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: []prompts.Environment{"canary", "eu"}, AllowProtected: true})
	is.NoErr(err)
	want, err := s.ListEnvironments(ctx, proj.ID)
	is.NoErr(err)
	check := func(s *Store) {
		t.Helper()
		l, err := s.ListEnvironments(ctx, proj.ID)
		is.NoErr(err)
		is.Equal(l, want) // the environments, in order, protected as they were
		for _, env := range []prompts.Environment{"canary", "eu"} {
			a, err := s.GetActive(ctx, p.ID, env)
			is.NoErr(err)
			is.True(a.ActiveVersion != nil) // what it points at
		}
		_, err = s.GetActive(ctx, p.ID, "gone")
		is.True(prompts.ErrorCode(err) == prompts.CodeInvalid) // removed stays removed
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1)})
		is.Equal(prompts.ErrorCode(err), prompts.CodeForbidden) // staging protected still
		evs, _, err := s.ListEvents(ctx, prompts.EventFilter{})
		is.NoErr(err)
		n := 0
		for _, e := range evs {
			if e.Environment != nil {
				n++
			}
		}
		is.Equal(n, 5) // three added, staging protected, one removed
	}
	is.NoErr(s.Close())
	s, err = Open(path)
	is.NoErr(err)
	check(s) // read back from the journal

	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	is.NoErr(err)
	is.NoErr(s.Close())
	s, err = Open(path)
	is.NoErr(err)
	check(s) // read back from the compacted journal
}
