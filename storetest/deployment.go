package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// deployments lists all of a prompt's deployment records, newest first,
// page by page.
func (s *fixture) deployments(promptID string, env prompts.Environment) []prompts.Deployment {
	is := is.New(s.t)
	is.Helper()
	var all []prompts.Deployment
	f := prompts.DeploymentFilter{PromptID: promptID, Environment: env, Page: prompts.Page{Limit: 2}}
	for {
		page, more, err := s.ListDeployments(s.t.Context(), f)
		is.NoErr(err) // list deployments
		all = append(all, page...)
		if !more {
			return all
		}
		is.True(len(page) > 0) // a page before more has items
		f.After = page[len(page)-1].ID
	}
}

// recordText is a deployment record in one line, without its id and time:
// "action env version<-previous actor reason", where a version is "v3",
// "none", or a split "v1:90,v2:10".
func recordText(d prompts.Deployment) string {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	return fmt.Sprintf("%s %s %s<-%s %s %s", d.Action, d.Environment,
		stateText(d.VersionID, d.VersionNumber, d.Split), stateText(d.PreviousVersionID, d.PreviousVersionNumber, d.PreviousSplit), str(d.Actor), str(d.Reason))
}

// stateText is what an environment points at as a record names it: "none",
// "v3", or a split "v1:90,v2:10", whose first entry the version must be
// ("broken" otherwise).
func stateText(id *string, n *int, split prompts.Split) string {
	switch {
	case id == nil && n == nil && split == nil:
		return "none"
	case id == nil || n == nil:
		return "broken"
	case split == nil:
		return fmt.Sprintf("v%d", *n)
	case split[0].VersionID != *id || split[0].VersionNumber != *n:
		return "broken"
	}
	return splitText(split)
}

// recordTexts is recordText of each record.
func recordTexts(ds []prompts.Deployment) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = recordText(d)
	}
	return out
}

var deploymentTests = []test{
	{"every change of an environment writes one record; a call that changes nothing writes none", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		is.Equal(len(s.deployments(p.ID, "")), 0) // versions alone deploy nothing

		mark := s.clock.mark()
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1),
			Change: prompts.Change{Actor: "ci", Reason: "first release"}})
		is.NoErr(err) // activate 1
		first := s.deployments(p.ID, "")
		is.Equal(len(first), 1) // one record
		d := first[0]
		is.Equal(d.PromptID, p.ID)
		is.Equal(*d.VersionID, vs[0].ID)
		s.idStamped(mark, d.ID)      // an id from the Store's clock
		s.stamped(mark, d.CreatedAt) // and its time

		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(vs[0].ID), Change: prompts.Change{Actor: "ci"}})
		is.NoErr(err) // activate 1 again: no change
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(vs[1].ID)})
		is.NoErr(err)                                      // activate 2 by id, no actor
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Staging)) // nothing active there: no change
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{Actor: "ops", Reason: "incident 42"}})
		is.NoErr(err)                                         // deactivate production
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Production)) // and again: no change
		v3, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Actor: "ci",
			Environments: []prompts.Environment{prompts.Staging, prompts.Production, prompts.Staging}})
		is.NoErr(err) // a version active in both at once
		vs = append(vs, v3)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "four", Environments: []prompts.Environment{}})
		is.NoErr(err) // and one active nowhere

		all := s.deployments(p.ID, "")
		got := recordTexts(all)
		want := s.records([]string{
			// newest first; the version's two records in either order
			"activate production v3<-none ci -",
			"activate staging v3<-none ci -",
			"deactivate production none<-v2 ops incident 42",
			"activate production v2<-v1 - -",
			"activate production v1<-none ci first release",
		})
		if got[0] != want[0] {
			got[0], got[1] = got[1], got[0]
		}
		is.Equal(got, want) // one record per change, as it was
		for i := 1; i < len(all); i++ {
			is.True(all[i].ID < all[i-1].ID) // newest first, ids growing with time
		}
		for _, d := range all {
			if d.VersionID != nil {
				is.Equal(*d.VersionID, vs[*d.VersionNumber-1].ID) // the id is the number's version's
			}
			if d.PreviousVersionID != nil {
				is.Equal(*d.PreviousVersionID, vs[*d.PreviousVersionNumber-1].ID) // so is the previous one
			}
		}
		is.Equal(recordTexts(s.deployments(p.ID, prompts.Staging)), s.records([]string{"activate staging v3<-none ci -"})) // one environment's records
	}},
	{"a version created with environments records its reason in each of their records", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", Reason: "release 7",
			Environments: []prompts.Environment{prompts.Staging, prompts.Production}})
		is.NoErr(err) // active in both, with a reason
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", Reason: "kept nowhere"})
		is.NoErr(err) // a reason without environments: no record
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "three", Environments: []prompts.Environment{prompts.Staging}})
		is.NoErr(err) // no reason
		all := s.deployments(p.ID, "")
		is.Equal(len(all), 3) // one record per environment of a create
		is.Equal(all[0].Reason, nil)
		is.Equal(*all[0].VersionNumber, 3)
		for _, d := range all[1:] {
			is.Equal(*d.VersionNumber, 1)
			is.True(d.Reason != nil)         // the reason is recorded
			is.Equal(*d.Reason, "release 7") // in each record
		}
	}},
	{"a refused change writes no record and changes nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err) // activate 1
		before, rev := s.snapshot(), s.revision(p.ID)
		records := recordTexts(s.deployments(p.ID, ""))

		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(9)})
		s.notFound(err, "version 9")
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: prompts.Change{Reason: strings.Repeat("r", prompts.MaxReason+1)}})
		s.invalid(err, "reason")
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: prompts.Change{Actor: "a\x00"}})
		s.invalid(err, "actor")
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{IfRevision: rev - 1}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // an old revision
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		is.True(errors.Is(err, prompts.ErrConflict)) // nothing to roll back to
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Staging}, Actor: "a\x00"})
		s.invalid(err, "actor")
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Staging}, Reason: strings.Repeat("r", prompts.MaxReason+1)})
		s.invalid(err, "reason")

		is.Equal(s.snapshot(), before)                          // nothing changed
		is.Equal(s.revision(p.ID), rev)                         // nor the revision
		is.Equal(recordTexts(s.deployments(p.ID, "")), records) // and no record was written
	}},
	{"rollback returns to the version before the latest change, and twice to where it started", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 3)
		rollback := func(env prompts.Environment, reason string) (prompts.ActivePrompt, error) {
			return s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: env, Change: prompts.Change{Actor: "me", Reason: reason}})
		}
		_, err := rollback(prompts.Production, "")
		is.True(errors.Is(err, prompts.ErrConflict)) // no record: nothing to roll back to
		s.version(p.ID, "4", prompts.Production)     // production at 4, from none
		_, err = rollback(prompts.Production, "")
		is.True(errors.Is(err, prompts.ErrConflict)) // it pointed at none before
		activate := func(env prompts.Environment, n int) {
			t.Helper()
			_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(n)})
			is.NoErr(err) // activate
		}
		activate(prompts.Production, 1)
		activate(prompts.Production, 2)
		activate(prompts.Staging, 3) // another environment's records do not count
		a, err := rollback(prompts.Production, "bad answers")
		is.NoErr(err)                               // roll back
		is.Equal(a.ActiveVersion.ID, vs[0].ID)      // to 1, active before 2
		is.Equal(a.Environment, prompts.Production) // answered as GetActive does
		is.Equal(a.Revision, s.revision(p.ID))      // with the new revision
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID)
		a, err = rollback(prompts.Production, "")
		is.NoErr(err)                          // roll back the rollback
		is.Equal(a.ActiveVersion.ID, vs[1].ID) // back to 2
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Production))
		a, err = rollback(prompts.Production, "")
		is.NoErr(err)                          // roll back a deactivation
		is.Equal(a.ActiveVersion.ID, vs[1].ID) // 2 again
		is.Equal(s.active(p.ID, prompts.Staging), vs[2].ID)
		is.Equal(recordTexts(s.deployments(p.ID, prompts.Production))[:4], s.records([]string{
			"rollback production v2<-none me -",
			"deactivate production none<-v2 - -",
			"rollback production v2<-v1 me -",
			"rollback production v1<-v2 me bad answers",
		})) // each rollback recorded
	}},
	{"a change that expects another revision is refused; one that expects the current one goes through", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		vs := s.versions(p.ID, 2)
		rev := s.revision(p.ID)
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1), Change: prompts.Change{IfRevision: rev}})
		is.NoErr(err) // the current revision
		is.True(a.Revision > rev)
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: prompts.Change{IfRevision: rev}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // the revision before: refused
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(9), Change: prompts.Change{IfRevision: rev}})
		s.notFound(err, "version 9") // existence comes before the precondition
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{IfRevision: rev}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // also for Deactivate
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{IfRevision: rev}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // and Rollback
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("renamed")})
		is.NoErr(err) // any change to the prompt moves the revision on
		_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{IfRevision: a.Revision}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // so a rename fails an older swap too
		is.Equal(s.active(p.ID, prompts.Production), vs[0].ID) // still version 1
		cur := s.revision(p.ID)
		a, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1), Change: prompts.Change{IfRevision: cur}})
		is.NoErr(err)             // a swap that changes nothing, at the current revision
		is.Equal(a.Revision, cur) // changes nothing
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Change: prompts.Change{IfRevision: cur}})
		is.True(errors.Is(err, prompts.ErrConflict)) // the revision holds; then nothing to roll back to
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(2), Change: prompts.Change{IfRevision: -1}})
		s.invalid(err, "if_revision")
	}},
	{"of concurrent swaps expecting one revision, exactly one wins", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		const n = 8
		s.versions(p.ID, n)
		rev := s.revision(p.ID)
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			won, lost int
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Each swaps an environment (both are the prompt's) to a
				// version of its own.
				env := prompts.Environments[i%2]
				_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(i + 1), Change: prompts.Change{IfRevision: rev}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, prompts.ErrPreconditionFailed):
					lost++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		is.Equal(won, 1)                          // exactly one swap won
		is.Equal(lost, n-1)                       // the others were refused
		is.Equal(len(s.deployments(p.ID, "")), 1) // and wrote no record
	}},
}
