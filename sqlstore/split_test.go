package sqlstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/sqlstore"
)

// split returns the split of the versions numbered n with the weights w:
// split(1, 90, 2, 10).
func split(numberWeight ...int) prompts.Split {
	var s prompts.Split
	for i := 0; i+1 < len(numberWeight); i += 2 {
		s = append(s, prompts.Share{VersionNumber: numberWeight[i], Weight: numberWeight[i+1]})
	}
	return s
}

// numbersOf returns the version numbers of a split's entries.
func numbersOf(s prompts.Split) []int {
	var out []int
	for _, e := range s {
		out = append(out, e.VersionNumber)
	}
	return out
}

// splitPrompt returns a store and a prompt of it with n versions, none
// active.
func splitPrompt(t *testing.T, n int) (*sqlstore.Store, prompts.Prompt, []prompts.PromptVersion) {
	t.Helper()
	s := newSQLStore(t)
	_, p := fixture(t, s)
	var vs []prompts.PromptVersion
	for range n {
		v, err := s.CreateVersion(context.Background(), prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}"})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return s, p, vs
}

// TestSplitReadsAndRecords: a split is held, read back with the versions
// of its entries, picked per subject, recorded with its previous state,
// and the same split again changes nothing.
func TestSplitReadsAndRecords(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, vs := splitPrompt(t, 3)
	_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	in := prompts.Split{{VersionNumber: 3, Weight: 90}, {VersionID: vs[1].ID, Weight: 10}}
	a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: in, Change: prompts.Change{Actor: "ci", Reason: "canary"}})
	is.NoErr(err)
	want := prompts.Split{{VersionID: vs[2].ID, VersionNumber: 3, Weight: 90}, {VersionID: vs[1].ID, VersionNumber: 2, Weight: 10}}
	is.Equal(a.Split, want)                   // resolved: ids and numbers
	is.Equal(len(a.SplitVersions), 2)         // with the versions of its entries
	is.Equal(a.SplitVersions[0].ID, vs[2].ID) // in its order
	is.Equal(a.SplitVersions[1].ID, vs[1].ID)
	is.Equal(a.SplitVersions[1].Content, "Hello {{name}}")
	is.Equal(a.ActiveVersion.ID, vs[2].ID) // serving the first entry's

	for _, read := range []func() (prompts.ActivePrompt, error){
		func() (prompts.ActivePrompt, error) { return s.GetActive(ctx, p.ID, prompts.Production) },
		func() (prompts.ActivePrompt, error) {
			return s.GetActiveByKey(ctx, p.ProjectID, p.Key, prompts.Production)
		},
	} {
		got, err := read()
		is.NoErr(err)
		is.Equal(got.Split, want)
		is.Equal(got.Revision, a.Revision)
		is.Equal(len(got.SplitVersions), 2)
		is.Equal(got.SplitVersions[1].VersionNumber, 2)
		is.True(got.ActiveVersion == &got.SplitVersions[0]) // the first entry's
	}
	// A subject gets the version its point falls in, as the formula says.
	seen := map[int]bool{}
	for _, subject := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z"} {
		got, _, err := prompts.ReadActive(ctx, s, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: subject})
		is.NoErr(err)
		i := want.Entry(p.ID, prompts.Production, subject)
		is.Equal(got.ActiveVersion.ID, want[i].VersionID) // picked by Split.Entry
		seen[got.ActiveVersion.VersionNumber] = true
	}
	is.Equal(len(seen), 2) // both entries serve some of 26 subjects

	ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 2)
	d := ds[0]
	is.Equal(d.Action, prompts.ActionSplit)
	is.Equal(d.Split, want)
	is.Equal(d.PreviousSplit, nil)
	is.Equal(*d.VersionNumber, 3) // the first entry's
	is.Equal(*d.VersionID, vs[2].ID)
	is.Equal(*d.PreviousVersionNumber, 1) // what was there
	is.Equal(*d.Actor, "ci")
	is.Equal(ds[1].Split, nil) // a record of one version has none

	events, _, err := s.ListEvents(ctx, prompts.EventFilter{})
	is.NoErr(err)
	last := events[len(events)-1]
	is.Equal(last.Type, prompts.EventDeploymentCreated)
	is.Equal(last.Deployment.Split, want) // the event carries the split
	is.Equal(last.Deployment.ID, d.ID)

	// The same split (named otherwise) changes nothing.
	again, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionID: vs[2].ID, Weight: 90}, {VersionNumber: 2, Weight: 10}}})
	is.NoErr(err)
	is.Equal(again.Revision, a.Revision) // no change
	is.Equal(again.Split, want)
	ds, _, err = s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(len(ds), 2) // no record
	// Other weights, or another order, are another split.
	b, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(2, 10, 3, 90)})
	is.NoErr(err)
	is.True(b.Revision > a.Revision)
	ds, _, err = s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(ds[0].PreviousSplit, want) // what it held
	is.Equal(*ds[0].PreviousVersionNumber, 3)

	// Staging holds nothing all along.
	st, err := s.GetActive(ctx, p.ID, prompts.Staging)
	is.NoErr(err)
	is.True(st.ActiveVersion == nil && st.Split == nil && st.SplitVersions == nil)
}

// TestSplitTransitions: a version over a split, a deactivation of one, a
// version created active over one, and rollbacks to and from one, each
// recorded with the state before it.
func TestSplitTransitions(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, _ := splitPrompt(t, 3)
	env := prompts.Staging
	held := func() (int, []int) {
		a, err := s.GetActive(ctx, p.ID, env)
		is.NoErr(err)
		if a.ActiveVersion == nil {
			return 0, nil
		}
		return a.ActiveVersion.VersionNumber, numbersOf(a.Split)
	}
	latest := func() prompts.Deployment {
		ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID, Environment: env})
		is.NoErr(err)
		return ds[0]
	}
	rollback := func() {
		_, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: env})
		is.NoErr(err)
	}

	_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, Split: split(1, 50, 2, 50)})
	is.NoErr(err)
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, VersionNumber: prompts.Some(1)})
	is.NoErr(err) // the split's first entry alone: a change all the same
	n, sp := held()
	is.Equal(n, 1)
	is.Equal(sp, nil)
	d := latest()
	is.Equal(d.Action, prompts.ActionActivate)
	is.Equal(numbersOf(d.PreviousSplit), []int{1, 2})
	is.Equal(d.Split, nil)

	rollback() // back to the split
	n, sp = held()
	is.Equal(n, 1)
	is.Equal(sp, []int{1, 2})
	d = latest()
	is.Equal(d.Action, prompts.ActionRollback)
	is.Equal(numbersOf(d.Split), []int{1, 2})
	is.Equal(d.PreviousSplit, nil)
	is.Equal(*d.PreviousVersionNumber, 1)
	rollback() // and again: where it started
	n, sp = held()
	is.Equal(n, 1)
	is.Equal(sp, nil)

	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: env, Split: split(2, 1, 3, 1)})
	is.NoErr(err)
	v4, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{env}})
	is.NoErr(err) // created active over the split
	n, sp = held()
	is.Equal(n, v4.VersionNumber)
	is.Equal(sp, nil)
	d = latest()
	is.Equal(d.Action, prompts.ActionActivate)
	is.Equal(numbersOf(d.PreviousSplit), []int{2, 3})
	is.Equal(*d.PreviousVersionNumber, 2)

	rollback()
	_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: env})
	is.NoErr(err) // a split deactivated
	n, _ = held()
	is.Equal(n, 0)
	d = latest()
	is.Equal(d.Action, prompts.ActionDeactivate)
	is.Equal(numbersOf(d.PreviousSplit), []int{2, 3})
	is.Equal(d.VersionNumber, nil)
	rollback() // a rollback of a deactivation restores the split
	n, sp = held()
	is.Equal(n, 2)
	is.Equal(sp, []int{2, 3})
}

// TestSplitGuards: a split's versions are found (or not), each checked by
// the promotion guard against each version active now, and by the
// partials guard; a protected environment and IfRevision hold as for one
// version; an environment holding a split is in use.
func TestSplitGuards(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, vs := splitPrompt(t, 2)
	_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}} from {{place}}"}) // 3
	is.NoErr(err)
	activate := func(in prompts.Activation) error {
		in.PromptID = p.ID
		if in.Environment == "" {
			in.Environment = prompts.Production
		}
		_, err := s.Activate(ctx, in)
		return err
	}

	err = activate(prompts.Activation{Split: split(1, 1, 9, 1)})
	is.True(errors.Is(err, prompts.ErrNotFound)) // an unknown version
	err = activate(prompts.Activation{Split: prompts.Split{{VersionNumber: 1, Weight: 1}, {VersionID: vs[0].ID, Weight: 1}}})
	is.True(errors.Is(err, prompts.ErrInvalid)) // one version twice
	var pe *prompts.Error
	is.True(errors.As(err, &pe))
	is.Equal(pe.Fields[0].Field, "split[1].version_id") // named by the entry that names it again

	is.NoErr(activate(prompts.Activation{VersionNumber: prompts.Some(1)}))
	err = activate(prompts.Activation{Split: split(2, 1, 3, 1)})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // version 3 has another variable
	is.NoErr(activate(prompts.Activation{Split: split(1, 1, 2, 1)}))
	err = activate(prompts.Activation{VersionNumber: prompts.Some(3)})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // against each version of the split held
	is.NoErr(activate(prompts.Activation{Split: split(1, 1, 3, 1), Change: prompts.Change{AllowVariableChange: true}}))
	err = activate(prompts.Activation{Split: split(1, 1, 2, 1)})
	is.True(errors.Is(err, prompts.ErrVariablesChanged)) // 3 is held now: 1 and 2 differ from it

	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	err = activate(prompts.Activation{Split: split(3, 1, 1, 1), Change: prompts.Change{IfRevision: a.Revision - 1, AllowVariableChange: true}})
	is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // an old revision
	is.NoErr(activate(prompts.Activation{Split: split(3, 1, 1, 1), Change: prompts.Change{IfRevision: a.Revision, AllowVariableChange: true}}))

	// The partials guard: each version of the split.
	withPartial, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> footer}} {{name}}", TemplateFormat: prompts.FormatDotprompt}) // 4
	is.NoErr(err)
	err = activate(prompts.Activation{Environment: prompts.Staging, Split: split(1, 1, withPartial.VersionNumber, 1)})
	is.True(errors.Is(err, prompts.ErrPartialUnavailable)) // footer is not a prompt
	footer, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "footer", Name: "Footer"})
	is.NoErr(err)
	for range 2 {
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: footer.ID, Content: "bye"})
		is.NoErr(err)
	}
	_, err = s.Activate(ctx, prompts.Activation{PromptID: footer.ID, Environment: prompts.Staging, Split: split(1, 1, 2, 1)})
	is.NoErr(err) // a partial whose environment holds a split is active
	is.NoErr(activate(prompts.Activation{Environment: prompts.Staging, Split: split(1, 1, withPartial.VersionNumber, 1)}))
	_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: footer.ID, Environment: prompts.Staging})
	is.True(errors.Is(err, prompts.ErrPartialInUse)) // the split's second entry includes it
	_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: footer.ID, Environment: prompts.Staging, Force: true})
	is.NoErr(err)

	// A protected environment.
	_, err = s.PutEnvironment(ctx, prompts.NewEnvironment{ProjectID: p.ProjectID, Name: "canary", Protected: true})
	is.NoErr(err)
	err = activate(prompts.Activation{Environment: "canary", Split: split(1, 1, 2, 1)})
	is.True(errors.Is(err, prompts.ErrForbidden))
	is.NoErr(activate(prompts.Activation{Environment: "canary", Split: split(1, 1, 2, 1), Change: prompts.Change{AllowProtected: true}}))
	err = s.DeleteEnvironment(ctx, p.ProjectID, "canary")
	is.True(errors.Is(err, prompts.ErrConflict)) // in use: it holds a split
	_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: p.ID, Environment: "canary", Change: prompts.Change{AllowProtected: true}})
	is.NoErr(err)
	is.NoErr(s.DeleteEnvironment(ctx, p.ProjectID, "canary"))
}
