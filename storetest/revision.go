package storetest

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// revision reads the prompt's revision.
func (s *fixture) revision(promptID string) int64 {
	is := is.New(s.t)
	is.Helper()
	p, err := s.GetPrompt(s.t.Context(), promptID)
	is.NoErr(err) // get prompt for its revision
	return p.Revision
}

var revisionTests = []test{
	{"every read of a prompt carries its revision", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		is.True(p.Revision > 0) // a new prompt has a revision
		s.version(p.ID, "c", prompts.Production)
		want := s.revision(p.ID)
		is.True(want > p.Revision) // a version moved it on
		for _, env := range prompts.Environments {
			a, err := s.GetActive(ctx, p.ID, env)
			is.NoErr(err)              // get active
			is.Equal(a.Revision, want) // GetActive carries it
			a, err = s.GetActiveByKey(ctx, proj.ID, "k", env)
			is.NoErr(err)              // get active by key
			is.Equal(a.Revision, want) // GetActiveByKey carries it
		}
		list, _, err := s.ListPrompts(ctx, prompts.PromptFilter{ProjectIDs: []string{proj.ID}})
		is.NoErr(err)                    // list prompts
		is.Equal(len(list), 1)           // the one prompt
		is.Equal(list[0].Revision, want) // ListPrompts carries it
	}},
	{"every change moves the revision on by one while the clock stands still", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		// A clock set back an hour and stopped: the revision cannot follow
		// it, so every change must move it on from the last by exactly one.
		s.clock.standStill(clockBase.Add(-time.Hour))
		last := p.Revision
		step := func(what string, got int64) {
			t.Helper()
			now := s.revision(p.ID)
			if now != last+1 || got != now {
				t.Logf("%s: revision %d before, %d returned, %d read", what, last, got, now)
			}
			is.Equal(now, last+1) // the change moved the revision on by one
			is.Equal(got, now)    // and the write returned the revision it made
			last = now
		}
		u, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("New name")})
		is.NoErr(err) // update the name
		step("update the name", u.Revision)
		u, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Description: prompts.Some("d")})
		is.NoErr(err) // set the description
		step("set the description", u.Revision)
		u, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Description: prompts.Null[string]()})
		is.NoErr(err) // clear the description
		step("clear the description", u.Revision)
		u, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("k2")})
		is.NoErr(err) // change the key
		step("change the key", u.Revision)
		v1 := s.version(p.ID, "one")
		step("create a version", s.revision(p.ID))
		s.version(p.ID, "two", prompts.Production, prompts.Staging)
		step("create a version active in both environments", s.revision(p.ID))
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err) // activate by number
		step("activate by number", a.Revision)
		a, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionID: prompts.Some(v1.ID)})
		is.NoErr(err) // activate by id
		step("activate by id", a.Revision)
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Production)) // deactivate
		step("deactivate", s.revision(p.ID))
	}},
	{"a call that changes nothing keeps the revision", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "N", Description: ptr("d")})
		is.NoErr(err) // create prompt
		s.prompt(proj.ID, "taken")
		v := s.version(p.ID, "c", prompts.Production)
		want := s.revision(p.ID)
		keep := func(what string, got int64) {
			t.Helper()
			if got != want || s.revision(p.ID) != want {
				t.Logf("%s: revision %d before, %d returned, %d read", what, want, got, s.revision(p.ID))
			}
			is.Equal(got, want)              // the call returned the revision as it was
			is.Equal(s.revision(p.ID), want) // and left it so
		}
		u, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{})
		is.NoErr(err) // the zero update
		keep("the zero update", u.Revision)
		for _, same := range []prompts.PromptUpdate{
			{Key: prompts.Some("k"), Name: prompts.Some("N"), Description: prompts.Some("d")},
			{Key: prompts.Some("k")},
			{Name: prompts.Some("N")},
			{Description: prompts.Some("d")},
		} {
			u, err = s.UpdatePrompt(ctx, p.ID, same)
			is.NoErr(err) // an update to the values the prompt has
			keep("an update to the same values", u.Revision)
		}
		bare, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "bare", Name: "B"})
		is.NoErr(err) // a prompt without a description
		u, err = s.UpdatePrompt(ctx, bare.ID, prompts.PromptUpdate{Description: prompts.Null[string]()})
		is.NoErr(err)                       // clear the description it does not have
		is.Equal(u.Revision, bare.Revision) // changes nothing
		a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err) // activate the active version by number
		keep("activate the active version by number", a.Revision)
		a, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionID: prompts.Some(v.ID)})
		is.NoErr(err) // activate the active version by id
		keep("activate the active version by id", a.Revision)
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Staging)) // deactivate where nothing is active
		keep("deactivate where nothing is active", want)

		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Key: prompts.Some("taken")})
		is.True(err != nil) // a key another prompt has
		keep("a refused update", want)
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(9)})
		is.True(err != nil) // an unknown version
		keep("a refused activation", want)
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{"dev"}})
		is.True(err != nil) // an unknown environment
		keep("a refused version", want)
	}},
	{"a revision belongs to one prompt", func(t *testing.T, s *fixture) {
		is := is.New(t)
		proj := s.project()
		p, q := s.prompt(proj.ID, "p"), s.prompt(proj.ID, "q")
		pBefore, qBefore := s.revision(p.ID), s.revision(q.ID)
		s.version(p.ID, "c", prompts.Production)
		_, err := s.UpdatePrompt(t.Context(), p.ID, prompts.PromptUpdate{Name: prompts.Some("other")})
		is.NoErr(err)                                                 // update p
		is.NoErr(s.deactivate(t.Context(), p.ID, prompts.Production)) // deactivate p
		is.True(s.revision(p.ID) > pBefore)                           // p's revision moved on
		is.Equal(s.revision(q.ID), qBefore)                           // q's did not
	}},
	{"revisions only grow under concurrent writers", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		p := s.prompt(s.project().ID, "k")
		s.versions(p.ID, 2)
		// The clock stopped: only the previous revision can move a
		// revision on, so a write that computed it from a stale one would
		// lose a step or repeat a revision.
		s.clock.standStill(clockBase.Add(-time.Hour))
		start := s.revision(p.ID)
		const writers, each = 4, 10
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			renamed []int64 // the revisions UpdatePrompt returned
		)
		stop := make(chan struct{})
		readerDone := make(chan struct{})
		go func() { // a reader: the revisions it sees never go back
			defer close(readerDone)
			last := int64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, err := s.GetActive(ctx, p.ID, prompts.Production)
				if err != nil {
					t.Error(err)
					return
				}
				if a.Revision < last {
					t.Errorf("a read saw revision %d after %d", a.Revision, last)
				}
				last = a.Revision
			}
		}()
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// Each writer makes three changes a round: a version, a
					// name no one else gives, and an activation.
					if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c"}); err != nil {
						t.Error(err)
						return
					}
					u, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("w" + strconv.Itoa(w) + "-" + strconv.Itoa(i))})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					renamed = append(renamed, u.Revision)
					mu.Unlock()
					env := prompts.Environments[i%2]
					if _, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(1 + i%2)}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-readerDone
		end := s.revision(p.ID)
		seen := map[int64]bool{}
		for _, r := range renamed {
			is.True(!seen[r])              // no two changes share a revision
			is.True(r > start && r <= end) // each lies between the first and the last
			seen[r] = true
		}
		// Every version and every rename moved the revision on, at least
		// by one each.
		is.True(end-start >= 2*writers*each) // no change was lost
	}},
}
