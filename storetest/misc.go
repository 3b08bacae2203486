package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

var timeTests = []test{
	{"timestamps come from the clock in UTC truncated to microseconds", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		m := s.clock.mark()
		proj := s.project()
		s.stamped(m, proj.CreatedAt)
		s.idStamped(m, proj.ID)
		m = s.clock.mark()
		p := s.prompt(proj.ID, "k")
		s.stamped(m, p.CreatedAt)
		s.idStamped(m, p.ID)
		m = s.clock.mark()
		v1 := s.version(p.ID, "one")
		s.stamped(m, v1.CreatedAt)
		s.idStamped(m, v1.ID)
		m = s.clock.mark()
		v2 := s.version(p.ID, "two", prompts.Production)
		s.stamped(m, v2.CreatedAt)
		s.idStamped(m, v2.ID)
		is.True(v2.CreatedAt.After(v1.CreatedAt)) // each write reads the clock anew

		gotProj, err := s.GetProject(ctx, proj.ID)
		is.NoErr(err) // get project
		s.sameTime(gotProj.CreatedAt, proj.CreatedAt)
		projs, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
		is.NoErr(err) // list projects
		s.sameTime(projs[0].CreatedAt, proj.CreatedAt)
		gotP, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err) // get prompt
		s.sameTime(gotP.CreatedAt, p.CreatedAt)
		ps, _, err := s.ListPrompts(ctx, prompts.PromptFilter{})
		is.NoErr(err) // list prompts
		s.sameTime(ps[0].CreatedAt, p.CreatedAt)
		upd, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("Renamed")})
		is.NoErr(err) // update prompt
		s.sameTime(upd.CreatedAt, p.CreatedAt)
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err) // get active
		s.sameTime(a.CreatedAt, p.CreatedAt)
		s.sameTime(a.ActiveVersion.CreatedAt, v2.CreatedAt)
		gotV, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err) // get version
		s.sameTime(gotV.CreatedAt, v1.CreatedAt)
		vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err) // list versions
		s.sameTime(vs[0].CreatedAt, v2.CreatedAt)
		s.sameTime(vs[1].CreatedAt, v1.CreatedAt)
	}},
}

// sameTime checks that a timestamp read back is the one written, in UTC.
func (s *fixture) sameTime(got, want time.Time) {
	is := is.New(s.t)
	is.Helper()
	is.Equal(got.Location(), time.UTC) // read back in UTC
	is.True(got.Equal(want))           // read back as written
}

var copyTests = []test{
	{"changing a returned value changes nothing stored", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", ChangeSummary: ptr("sum"), Metadata: `{"a":1}`, Environments: prompts.Environments})
		is.NoErr(err) // create version
		before := s.snapshot()

		*p.Description = "changed"
		*v.ChangeSummary = "changed"
		projs, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
		is.NoErr(err) // list projects
		projs[0].Name = "changed"
		got, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err) // get prompt
		*got.Description = "changed"
		ps, _, err := s.ListPrompts(ctx, prompts.PromptFilter{})
		is.NoErr(err) // list prompts
		*ps[0].Description = "changed"
		ps[0].Key = "changed"
		upd, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{})
		is.NoErr(err) // zero update
		*upd.Description = "changed"
		gv, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err) // get version
		*gv.ChangeSummary = "changed"
		vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
		is.NoErr(err) // list versions
		*vs[0].ChangeSummary = "changed"
		vs[0].Content = "changed"
		var reads []prompts.ActivePrompt
		a, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err) // get active
		reads = append(reads, a)
		a, err = s.GetActiveByKey(ctx, proj.ID, "k", prompts.Staging)
		is.NoErr(err) // get active by key
		reads = append(reads, a)
		a, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err) // activate the active version again
		reads = append(reads, a)
		for _, a := range reads {
			*a.Description = "changed"
			*a.ActiveVersion.ChangeSummary = "changed"
			a.ActiveVersion.Content = "changed"
			a.ActiveVersion.VersionNumber = 99
			a.ActiveVersion.Metadata = `{"changed":true}`
		}
		is.Equal(s.snapshot(), before) // no returned value shares memory with the store
	}},
	{"changing an input after the call changes nothing stored", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		desc := "desc"
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: &desc})
		is.NoErr(err) // create prompt
		sum := "sum"
		envs := []prompts.Environment{prompts.Production}
		md := []byte(`{"a":"b"}`)
		v, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", ChangeSummary: &sum, Metadata: prompts.Metadata(md), Environments: envs})
		is.NoErr(err) // create version
		update := prompts.Some("new desc")
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Description: update})
		is.NoErr(err) // update prompt
		ids := []string{proj.ID}
		_, _, err = s.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: ids})
		is.NoErr(err) // list prompts
		before := s.snapshot()

		desc = "changed"
		sum = "changed"
		envs[0] = prompts.Staging
		copy(md, `{"x":"y"}`)
		update.Value = "changed"
		ids[0] = "changed"

		is.Equal(s.snapshot(), before) // no input shares memory with the store

		// The description given at create, changed after the call, on a
		// prompt no update has touched since.
		desc2 := "desc"
		p2, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k2", Name: "Name", Description: &desc2})
		is.NoErr(err) // create a second prompt
		desc2 = "changed"
		got2, err := s.GetPrompt(ctx, p2.ID)
		is.NoErr(err)                       // get the second prompt
		is.Equal(*got2.Description, "desc") // the description as given at create

		got, err := s.GetPrompt(ctx, p.ID)
		is.NoErr(err)                          // get prompt
		is.Equal(*got.Description, "new desc") // the description as given
		gv, err := s.GetVersion(ctx, p.ID, 1)
		is.NoErr(err)                                        // get version
		is.Equal(*gv.ChangeSummary, "sum")                   // the change summary as given
		is.Equal(gv.Metadata, prompts.Metadata(`{"a":"b"}`)) // the metadata as given
		is.Equal(s.active(p.ID, prompts.Production), v.ID)   // active where asked
		is.Equal(s.active(p.ID, prompts.Staging), "")        // and nowhere else
	}},
}

var contextTests = []test{
	{"a cancelled context is an error", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		v := s.version(p.ID, "c")
		before := s.snapshot()
		ctx := cancelled(t)
		calls := map[string]func() error{
			"CreateProject": func() error { _, err := s.CreateProject(ctx, prompts.NewProject{Name: "New"}); return err },
			"GetProject":    func() error { _, err := s.GetProject(ctx, proj.ID); return err },
			"ListProjects":  func() error { _, _, err := s.ListProjects(ctx, prompts.ProjectFilter{}); return err },
			"CreatePrompt": func() error {
				_, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "new", Name: "New"})
				return err
			},
			"GetPrompt": func() error { _, err := s.GetPrompt(ctx, p.ID); return err },
			"UpdatePrompt": func() error {
				_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("New")})
				return err
			},
			"ListPrompts": func() error { _, _, err := s.ListPrompts(ctx, prompts.PromptFilter{}); return err },
			"CreateVersion": func() error {
				_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "new", Environments: prompts.Environments})
				return err
			},
			"GetVersion":   func() error { _, err := s.GetVersion(ctx, p.ID, 1); return err },
			"ListVersions": func() error { _, _, err := s.ListVersions(ctx, p.ID, prompts.Page{}); return err },
			"GetActive":    func() error { _, err := s.GetActive(ctx, p.ID, prompts.Production); return err },
			"GetActiveByKey": func() error {
				_, err := s.GetActiveByKey(ctx, proj.ID, "k", prompts.Production)
				return err
			},
			"Activate": func() error {
				_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v.ID)})
				return err
			},
			"Deactivate": func() error { return s.deactivate(ctx, p.ID, prompts.Production) },
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, context.Canceled) || !errors.Is(err, prompts.ErrUnavailable) {
				t.Logf("%s: got %v", name, err)
			}
			is.True(errors.Is(err, context.Canceled))       // the error says the context was cancelled
			is.True(errors.Is(err, prompts.ErrUnavailable)) // and is ErrUnavailable, as the contract says
		}
		is.Equal(s.snapshot(), before) // nothing changed
	}},
}
