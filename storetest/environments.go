package storetest

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// ProtectionByRole is for a Store that decides whether a change may
// touch a protected environment by the identity it is reached with (over
// HTTP, the API key's role: admin), not by Change.AllowProtected and
// NewVersion.AllowProtected, which it does not send. The Store Run's
// newStore returns must be allowed (an admin); Deployer returns a Store
// over the same data reached with an identity that may change
// environments but not protected ones. Without it, Run calls the Store
// itself with AllowProtected false for the deployer.
type ProtectionByRole interface {
	Deployer() prompts.Store
}

// deployer returns the store as a caller that may not change protected
// environments sees it (its changes carry no AllowProtected).
func (s *fixture) deployer() prompts.Store {
	if r, ok := s.Store.(ProtectionByRole); ok {
		return r.Deployer()
	}
	return s.Store
}

// env adds the environment to the project.
func (s *fixture) env(projectID string, name prompts.Environment, protected bool) prompts.ProjectEnvironment {
	is := is.New(s.t)
	is.Helper()
	e, err := s.PutEnvironment(s.t.Context(), prompts.NewEnvironment{ProjectID: projectID, Name: name, Protected: protected})
	is.NoErr(err) // put environment
	return e
}

// envText returns the project's environments as text: "name" or
// "name(protected)", in the order listed.
func (s *fixture) envText(projectID string) string {
	is := is.New(s.t)
	is.Helper()
	l, err := s.ListEnvironments(s.t.Context(), projectID)
	is.NoErr(err) // list environments
	var b []string
	for _, e := range l {
		n := string(e.Name)
		if e.Protected {
			n += "(protected)"
		}
		b = append(b, n)
	}
	return strings.Join(b, " ")
}

// unknownEnv checks that err is ErrInvalid for field, whose detail lists
// the project's environments, names, in order.
func (s *fixture) unknownEnv(err error, field string, names ...string) {
	is := is.New(s.t)
	is.Helper()
	s.invalid(err, field)
	var e *prompts.Error
	if errors.As(err, &e) && len(e.Fields) == 1 {
		is.Equal(e.Fields[0].Detail, "is not an environment of this project: "+strings.Join(names, ", ")) // the detail lists the project's environments
	}
}

// forbidden checks that err is the refusal of a change of a protected
// environment.
func (s *fixture) forbidden(err error) {
	is := is.New(s.t)
	is.Helper()
	is.Equal(prompts.ErrorCode(err), prompts.CodeForbidden) // refused: the environment is protected
	is.True(strings.Contains(err.Error(), "admin"))         // the error names the role that may
}

var environmentTests = []test{
	{"a project starts with production and staging", func(t *testing.T, s *fixture) {
		is := is.New(t)
		p := s.project()
		l, err := s.ListEnvironments(t.Context(), p.ID)
		is.NoErr(err)
		is.Equal(len(l), 2)
		for i, name := range prompts.Environments {
			is.Equal(l[i].Name, name)                  // built-in ones first, in order
			is.True(!l[i].Protected)                   // unprotected
			is.True(l[i].CreatedAt.Equal(p.CreatedAt)) // created with the project
		}
	}},
	{"put adds an environment and sets its protection", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.project()
		mark := s.clock.mark()
		canary := s.env(p.ID, "canary", false)
		is.Equal(canary.Name, prompts.Environment("canary"))
		is.True(!canary.Protected)
		s.stamped(mark, canary.CreatedAt)
		s.env(p.ID, "eu-1", true)
		is.Equal(s.envText(p.ID), "production staging canary eu-1(protected)") // built-in first, then oldest first
		again := s.env(p.ID, "canary", true)
		is.Equal(again.Name, canary.Name)
		is.True(again.Protected)                                                                     // put sets protected
		is.True(again.CreatedAt.Equal(canary.CreatedAt))                                             // and keeps when it was created
		s.env(p.ID, "production", true)                                                              // a built-in one too
		is.Equal(s.envText(p.ID), "production(protected) staging canary(protected) eu-1(protected)") // in place
		s.env(p.ID, "production", false)
		s.env(p.ID, "canary", false)
		is.Equal(s.envText(p.ID), "production staging canary eu-1(protected)")
		l, err := s.ListEnvironments(ctx, p.ID)
		is.NoErr(err)
		is.True(l[0].CreatedAt.Equal(p.CreatedAt))                // a built-in one keeps its project's time
		is.Equal(s.envText(s.project().ID), "production staging") // another project's are its own
	}},
	{"put, list and remove refuse bad input and change nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.project()
		s.env(p.ID, "canary", false)
		before := s.snapshot()
		for _, name := range []prompts.Environment{"", "Canary", "1st", "-x", "has space", "a_b", "ünï", prompts.Environment(strings.Repeat("a", 33)), "x\x00"} {
			_, err := s.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: p.ID, Name: name})
			s.invalid(err, "name")
			s.invalid(s.DeleteEnvironment(ctx, p.ID, name), "environment")
		}
		_, err := s.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: p.ID, Name: prompts.Environment(strings.Repeat("a", 32))})
		is.NoErr(err) // 32 characters are fine
		is.NoErr(s.DeleteEnvironment(ctx, p.ID, prompts.Environment(strings.Repeat("a", 32))))
		_, err = s.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: unknownID, Name: "canary"})
		s.notFound(err, "project")
		_, err = s.ListEnvironments(ctx, unknownID)
		s.notFound(err, "project")
		_, err = s.ListEnvironments(ctx, "not-an-id")
		s.notFound(err, "project")
		s.notFound(s.DeleteEnvironment(ctx, unknownID, "canary"), "project")
		s.notFound(s.DeleteEnvironment(ctx, p.ID, "other"), "environment")
		is.Equal(s.snapshot(), before) // nothing changed
	}},
	{"every read and change takes the project's environments", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		s.env(proj.ID, "canary", false)
		p := s.prompt(proj.ID, "k")
		v1 := s.version(p.ID, "one", "canary", prompts.Production)
		is.Equal(s.active(p.ID, "canary"), v1.ID) // created active there
		v2 := s.version(p.ID, "two")
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: "canary", VersionNumber: prompts.Some(2)})
		is.NoErr(err)
		is.Equal(a.Environment, prompts.Environment("canary"))
		is.Equal(a.ActiveVersion.ID, v2.ID) // activated there
		byKey, err := s.GetActiveByKey(ctx, proj.ID, "k", "canary")
		is.NoErr(err)
		is.Equal(byKey.ActiveVersion.ID, v2.ID) // read by key
		a, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: "canary"})
		is.NoErr(err)
		is.Equal(a.ActiveVersion.ID, v1.ID) // rolled back
		is.NoErr(s.deactivate(ctx, p.ID, "canary"))
		is.Equal(s.active(p.ID, "canary"), "")              // deactivated
		is.Equal(s.active(p.ID, prompts.Production), v1.ID) // production untouched
		recs := s.deployments(p.ID, "canary")
		is.Equal(len(recs), 4) // the environment's history
		for _, d := range recs {
			is.Equal(d.Environment, prompts.Environment("canary"))
		}
	}},
	{"an environment of another project is unknown, and changes nothing", func(t *testing.T, s *fixture) {
		ctx := t.Context()
		one, two := s.project(), s.project()
		s.env(one.ID, "canary", false)
		s.env(two.ID, "eu", false)
		p := s.prompt(two.ID, "k")
		s.version(p.ID, "one", prompts.Production)
		before := s.snapshot()
		list := []string{"production", "staging", "eu"}
		_, err := s.GetActive(ctx, p.ID, "canary")
		s.unknownEnv(err, "environment", list...)
		_, err = s.GetActiveByKey(ctx, two.ID, "k", "canary")
		s.unknownEnv(err, "environment", list...)
		_, err = s.GetActiveByKey(ctx, two.ID, "no-such-key", "canary")
		s.unknownEnv(err, "environment", list...) // the environment before the key
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: "canary", VersionNumber: prompts.Some(1), Change: prompts.Change{AllowProtected: true}})
		s.unknownEnv(err, "environment", list...)
		s.unknownEnv(s.deactivate(ctx, p.ID, "canary"), "environment", list...)
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: "canary"})
		s.unknownEnv(err, "environment", list...)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Environments: []prompts.Environment{prompts.Staging, "canary"}})
		s.unknownEnv(err, "environments", list...)
		_, _, err = s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID, Environment: "canary"})
		s.unknownEnv(err, "environment", list...)
		is.New(t).Equal(s.snapshot(), before) // nothing changed
	}},
	{"an environment something is active in cannot be removed, nor a built-in one", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		s.env(proj.ID, "canary", true)
		p := s.prompt(proj.ID, "k")
		s.prompt(proj.ID, "other")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Environments: []prompts.Environment{"canary"}, AllowProtected: true})
		is.NoErr(err)
		before := s.snapshot()
		err = s.DeleteEnvironment(ctx, proj.ID, "canary")
		is.True(errors.Is(err, prompts.ErrConflict)) // something is active in it
		for _, env := range prompts.Environments {
			is.True(errors.Is(s.DeleteEnvironment(ctx, proj.ID, env), prompts.ErrConflict)) // built in
		}
		is.Equal(s.snapshot(), before) // nothing changed
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: "canary", Change: prompts.Change{AllowProtected: true}})
		is.NoErr(err)
		is.NoErr(s.DeleteEnvironment(ctx, proj.ID, "canary")) // nothing active: removed
		is.Equal(s.envText(proj.ID), "production staging")
		_, err = s.GetActive(ctx, p.ID, "canary")
		s.unknownEnv(err, "environment", "production", "staging") // gone
		recs, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
		is.NoErr(err)
		is.Equal(len(recs), 2) // its records stay
		s.env(proj.ID, "canary", false)
		is.Equal(s.active(p.ID, "canary"), "") // added again, it points at nothing
	}},
	{"a protected environment changes only with AllowProtected", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.version(p.ID, "one", prompts.Production)
		s.version(p.ID, "two", prompts.Production)
		s.env(proj.ID, "canary", true)
		s.env(proj.ID, prompts.Production, true)
		dep := s.deployer()
		before := s.snapshot()
		for _, env := range []prompts.Environment{prompts.Production, "canary"} {
			_, err := dep.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(1)})
			s.forbidden(err)
			_, err = dep.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: env})
			s.forbidden(err)
			_, err = dep.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: env})
			s.forbidden(err)
			_, err = dep.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Environments: []prompts.Environment{prompts.Staging, env}})
			s.forbidden(err)
		}
		is.Equal(s.snapshot(), before) // nothing changed, no version created
		// Reads and unprotected environments are as before.
		_, err := dep.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)
		_, err = dep.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1)})
		is.NoErr(err)
		// Allowed, each change goes through.
		allow := prompts.Change{AllowProtected: true}
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: allow})
		is.NoErr(err)
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: "canary", VersionNumber: prompts.Some(2), Change: allow})
		is.NoErr(err)
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production, Change: allow})
		is.NoErr(err)
		v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Environments: []prompts.Environment{prompts.Production, "canary"}, AllowProtected: true})
		is.NoErr(err)
		is.Equal(s.active(p.ID, "canary"), v3.ID)
		// Unprotected again, anyone who deploys may.
		s.env(proj.ID, "canary", false)
		_, err = dep.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: "canary", VersionNumber: prompts.Some(1)})
		is.NoErr(err)
	}},
	{"a change of a project's environments appends its event", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		s.eventLog()
		last := s.lastEvent()
		created := s.env(proj.ID, "canary", false)
		s.env(proj.ID, "canary", false) // no change: no event
		s.env(proj.ID, "canary", true)
		s.env(proj.ID, prompts.Staging, false) // no change
		s.env(proj.ID, prompts.Staging, true)  // a built-in one's protection
		is.NoErr(s.DeleteEnvironment(ctx, proj.ID, "canary"))
		is.True(errors.Is(s.DeleteEnvironment(ctx, proj.ID, "canary"), prompts.ErrNotFound)) // refused: no event
		evs := s.follow(&last)
		want := []struct {
			typ       prompts.EventType
			name      prompts.Environment
			protected bool
		}{
			{prompts.EventEnvironmentCreated, "canary", false},
			{prompts.EventEnvironmentUpdated, "canary", true},
			{prompts.EventEnvironmentUpdated, prompts.Staging, true},
			{prompts.EventEnvironmentDeleted, "canary", true}, // as it was
		}
		is.Equal(len(evs), len(want))
		for i, w := range want {
			e := evs[i]
			is.Equal(e.Type, w.typ)
			is.Equal(e.ProjectID, proj.ID)
			is.Equal(e.PromptID, "") // a project's event
			is.True(e.Environment != nil)
			is.Equal(e.Environment.Name, w.name)
			is.Equal(e.Environment.Protected, w.protected)
		}
		is.True(evs[0].Environment.CreatedAt.Equal(created.CreatedAt))
		is.True(evs[2].Environment.CreatedAt.Equal(proj.CreatedAt)) // a built-in one dates from its project
	}},
	{"a removal racing activations never leaves a version active in a removed environment", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.version(p.ID, "one")
		for i := range 12 {
			name := prompts.Environment("race-" + string(rune('a'+i)))
			s.env(proj.ID, name, false)
			var (
				wg                 sync.WaitGroup
				activated, removed error
			)
			wg.Go(func() {
				_, activated = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: name, VersionNumber: prompts.Some(1)})
			})
			wg.Go(func() { removed = s.DeleteEnvironment(ctx, proj.ID, name) })
			wg.Wait()
			if activated == nil {
				is.True(errors.Is(removed, prompts.ErrConflict))            // activated first: the removal is refused
				is.True(s.active(p.ID, name) != "")                         // and stays active
				is.True(strings.Contains(s.envText(proj.ID), string(name))) // and the environment stays
			} else {
				is.NoErr(removed)                                 // removed first
				is.True(errors.Is(activated, prompts.ErrInvalid)) // the activation found no such environment
				is.True(!strings.Contains(s.envText(proj.ID), string(name)))
			}
		}
	}},
}
