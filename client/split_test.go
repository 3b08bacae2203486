package client_test

import (
	"strconv"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
)

// A read of an environment that holds a split answers the split with
// every version of it, as the store does: the client reads the versions
// the answer does not hold once, and keeps them, so that the next read
// is one request and a cache over the client picks every subject from
// memory, with no request at all.
func TestSplitRead(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	proj, err := s.store.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.store.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	for _, c := range []string{"one", "two", "three"} {
		summary := "the " + c
		_, err := s.store.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: c + " {{x}}", ChangeSummary: &summary})
		is.NoErr(err)
	}
	_, err = s.store.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionNumber: 3, Weight: 60}, {VersionNumber: 1, Weight: 40}}})
	is.NoErr(err)
	want, err := s.store.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)

	cl := s.client(t)
	s.requests()
	a, err := cl.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	is.Equal(a, want) // the split, its versions whole, the first entry's served
	is.True(a.ActiveVersion == &a.SplitVersions[0])
	is.True(len(s.requests()) > 1) // the first time: the versions too
	for _, read := range []func() (prompts.ActivePrompt, error){
		func() (prompts.ActivePrompt, error) { return cl.GetActive(ctx, p.ID, prompts.Production) },
		func() (prompts.ActivePrompt, error) { return cl.GetActiveByKey(ctx, proj.ID, "k", prompts.Production) },
	} {
		a, err := read()
		is.NoErr(err)
		is.Equal(a, want)
		is.Equal(len(s.requests()), 1) // then one request, as any read
	}

	c := cache.New(cl, cache.Standalone())
	_, err = c.GetActive(ctx, p.ID, prompts.Production)
	is.NoErr(err)
	s.requests()
	served := map[int]bool{}
	for i := range 100 {
		q := prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Subject: "user-" + strconv.Itoa(i)}
		got, _, err := prompts.ReadActive(ctx, c, q)
		is.NoErr(err)
		w, _, err := prompts.ReadActive(ctx, s.store, q)
		is.NoErr(err)
		is.Equal(got, w) // as the store picks
		served[got.ActiveVersion.VersionNumber] = true
		direct, _, err := cl.ReadActive(ctx, q)
		is.NoErr(err)
		is.Equal(direct.ActiveVersion.ID, w.ActiveVersion.ID) // the client picks alike
	}
	is.Equal(len(served), 2) // both versions served
	for _, r := range s.requests() {
		is.True(r.path != "/v1/integration/prompts/"+p.ID+"/versions/1" && r.path != "/v1/integration/prompts/"+p.ID+"/versions/3") // no version read again
	}
}

// Activate sends a split: by id where the entry has one, else by number.
func TestActivateSplit(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	s := newServer(t)
	cl := s.client(t)
	proj, err := cl.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := cl.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	var vs []prompts.PromptVersion
	for _, c := range []string{"one", "two"} {
		v, err := cl.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: c})
		is.NoErr(err)
		vs = append(vs, v)
	}
	a, err := cl.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging,
		Split: prompts.Split{{VersionID: vs[1].ID, Weight: 1}, {VersionNumber: 1, Weight: 3}}, Change: prompts.Change{Reason: "try two"}})
	is.NoErr(err)
	is.Equal(a.Split, prompts.Split{{VersionID: vs[1].ID, VersionNumber: 2, Weight: 1}, {VersionID: vs[0].ID, VersionNumber: 1, Weight: 3}})
	is.Equal(a.ActiveVersion.Content, "two")
	held, err := s.store.GetActive(ctx, p.ID, prompts.Staging)
	is.NoErr(err)
	is.Equal(held.Split, a.Split) // the server holds it
	deps, _, err := cl.ListDeployments(ctx, prompts.DeploymentFilter{PromptID: p.ID})
	is.NoErr(err)
	is.Equal(deps[0].Action, prompts.ActionSplit)
	is.Equal(deps[0].Split, a.Split) // and its record
	is.Equal(*deps[0].Reason, "try two")
}
