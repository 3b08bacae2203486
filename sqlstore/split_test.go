package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lib/pq"
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

// The behaviour of splits is storetest's (TestStore). These are the
// orders of checks that sqlstore, which finds a split's versions in one
// statement and reads the state in another, must keep as memstore does.

// TestSplitAfterWaiting: a change to or from a split that waited for
// another writer's lock on the prompt acts on what that writer committed:
// a transaction of the test's own holds the lock and makes production
// hold a split while Activate, with that very split, and Deactivate of
// staging, which the transaction makes hold a split too, wait for it.
func TestSplitAfterWaiting(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, vs := splitPrompt(t, 2)
	_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
	is.NoErr(err)
	records := func() []prompts.Deployment {
		ds, _, err := s.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
		is.NoErr(err)
		return ds
	}
	before := len(records())

	held := `[{"version_id": "` + vs[0].ID + `", "version_number": 1, "weight": 50}, {"version_id": "` + vs[1].ID + `", "version_number": 2, "weight": 50}]`
	schema := pq.QuoteIdentifier(s.Schema())
	other := database(t).MustBegin()
	defer other.Rollback() //nolint:errcheck // a no-op once committed
	other.MustExec(`SELECT 1 FROM `+schema+`.prompts WHERE id = $1 FOR UPDATE`, p.ID)
	other.MustExec(`UPDATE `+schema+`.environments SET split = $2 WHERE prompt_id = $1 AND environment = 'production'`, p.ID, held)
	other.MustExec(`INSERT INTO `+schema+`.environments (prompt_id, environment, version_number, split, updated_at) VALUES ($1, 'staging', 1, $2, now())`, p.ID, held)

	activated := make(chan error, 1)
	go func() { // the split the other commits
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 50, 2, 50)})
		activated <- err
	}()
	deactivated := make(chan error, 1)
	go func() { deactivated <- deactivate(ctx, s, p.ID, prompts.Staging) }() // nothing there when the other began
	waitForLockWaiters(t, s.Schema(), 2)
	is.NoErr(other.Commit())
	is.NoErr(<-activated)
	is.NoErr(<-deactivated)

	ds := records()
	is.Equal(len(ds), before+1) // the activation found its split there: no record
	is.Equal(ds[0].Action, prompts.ActionDeactivate)
	is.Equal(numbersOfSplit(ds[0].PreviousSplit), []int{1, 2}) // the deactivation removed the split committed
	prod, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(numbersOfSplit(prod.Split), []int{1, 2})
}

// numbersOfSplit returns the version numbers of a split's entries.
func numbersOfSplit(s prompts.Split) []int {
	var out []int
	for _, e := range s {
		out = append(out, e.VersionNumber)
	}
	return out
}

// TestSplitConcurrentWriters: writers in several Stores, each on a pool of
// its own, set splits, versions and rollbacks of two prompts whose second
// versions include each other as partials, all at once. A change locks
// the partials' prompts of every version of its split with its own, in
// one order, so none waits for another in a cycle (PostgreSQL would
// abort one, and the writer fail); and each environment's records form a
// chain, each starting where the one before ended, ending where the
// environment is.
func TestSplitConcurrentWriters(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	first := newSQLStore(t)
	proj, err := first.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	var ids []string
	for _, k := range []string{"a", "b"} {
		p, err := first.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: k, Name: k})
		is.NoErr(err)
		ids = append(ids, p.ID)
	}
	for i, other := range []string{"b", "a"} {
		_, err := first.CreateVersion(ctx, prompts.NewVersion{PromptID: ids[i], Content: "{{name}}", TemplateFormat: prompts.FormatDotprompt,
			Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err) // 1, active
		_, err = first.CreateVersion(ctx, prompts.NewVersion{PromptID: ids[i], Content: "{{> " + other + "}} {{name}}"})
		is.NoErr(err) // 2, which includes the other
	}

	const writers, each = 4, 15
	errs := make(chan error, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		s, err := sqlstore.New(openDB(t, 2, ""), sqlstore.WithSchema(first.Schema()))
		is.NoErr(err)
		defer s.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := ids[(w+i)%2]
				var err error
				switch (w + i) % 4 {
				case 0:
					_, err = s.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, Split: split(2, 1+i, 1, 1+w)})
				case 1:
					_, err = s.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, Split: split(1, 1+w, 2, 1+i)})
				case 2:
					_, err = s.Activate(ctx, prompts.Activation{PromptID: id, Environment: prompts.Production, VersionNumber: prompts.Some(1 + i%2)})
				default:
					_, err = s.Rollback(ctx, prompts.Rollback{PromptID: id, Environment: prompts.Production})
					if errors.Is(err, prompts.ErrConflict) {
						err = nil // nothing to roll back to: the first record's
					}
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	state := func(n *int, sp prompts.Split) string {
		switch {
		case sp != nil:
			return fmt.Sprint(sp)
		case n != nil:
			return fmt.Sprint(*n)
		}
		return "none"
	}
	for _, id := range ids {
		var all []prompts.Deployment
		page := prompts.Page{}
		for {
			ds, more, err := first.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: id, Page: page})
			is.NoErr(err)
			all = append(all, ds...)
			if !more {
				break
			}
			page.After = ds[len(ds)-1].ID
		}
		slices.Reverse(all) // oldest first
		was := "none"
		for _, d := range all {
			is.Equal(state(d.PreviousVersionNumber, d.PreviousSplit), was) // each starts where the one before ended
			was = state(d.VersionNumber, d.Split)
		}
		a, err := first.GetActive(ctx, id, prompts.Production)
		is.NoErr(err)
		var n *int
		if a.ActiveVersion != nil {
			n = &a.ActiveVersion.VersionNumber
		}
		is.Equal(state(n, a.Split), was) // and the last ends where the environment is
	}
}

// TestRollbackAfterWaiting: a rollback that waited for another writer's
// lock on the prompt goes back to what the latest change that writer
// committed started from, and takes the locks of that state's partials:
// its first statement, which read the state before, runs again.
func TestRollbackAfterWaiting(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, vs := splitPrompt(t, 1)
	v2, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> footer}} {{name}}", TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err) // 2, which includes footer
	footer, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "footer", Name: "Footer"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: footer.ID, Content: "bye", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // 3, active: a rollback would go back to none

	// Another writer, holding the prompt's lock, moves production from 3
	// to 1 by way of the split of 2 and 1, as a split and an activation
	// would: a rollback now goes back to that split.
	schema := pq.QuoteIdentifier(s.Schema())
	held := `[{"version_id": "` + v2.ID + `", "version_number": 2, "weight": 1}, {"version_id": "` + vs[0].ID + `", "version_number": 1, "weight": 1}]`
	other := database(t).MustBegin()
	defer other.Rollback() //nolint:errcheck // a no-op once committed
	other.MustExec(`SELECT 1 FROM `+schema+`.prompts WHERE id = $1 FOR UPDATE`, p.ID)
	other.MustExec(`UPDATE `+schema+`.environments SET version_number = 1 WHERE prompt_id = $1 AND environment = 'production'`, p.ID)
	other.MustExec(`INSERT INTO `+schema+`.deployments (prompt_id, id, environment, action, version_number, previous_version_number, previous_split, created_at)
		VALUES ($1, '7ZZZZZZZZZZZZZZZZZZZZZZZZZ', 'production', 'activate', 1, 2, $2, now())`, p.ID, held)
	other.MustExec(`UPDATE `+schema+`.prompts SET latest_deployment_id = '7ZZZZZZZZZZZZZZZZZZZZZZZZZ' WHERE id = $1`, p.ID)

	rolled := make(chan error, 1)
	go func() {
		_, err := s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		rolled <- err
	}()
	waitForLockWaiters(t, s.Schema(), 1)
	is.NoErr(other.Commit())
	is.NoErr(<-rolled)
	a, err := s.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(numbersOfSplit(a.Split), []int{2, 1}) // the split the other's change started from
}
