package storetest

import (
	"testing"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// activeReader returns the Store's prompts.ActiveReader, or skips the
// test when the Store has none.
func (s *fixture) activeReader() prompts.ActiveReader {
	s.t.Helper()
	r, ok := s.Store.(prompts.ActiveReader)
	if !ok {
		s.t.Skip("the Store has no ReadActive (prompts.ActiveReader)")
	}
	return r
}

// readOptions are every combination of ActiveQuery's options.
var readOptions = func() []prompts.ActiveQuery {
	var qs []prompts.ActiveQuery
	for i := range 8 {
		qs = append(qs, prompts.ActiveQuery{Shared: i&1 != 0, Fresh: i&2 != 0, FailFast: i&4 != 0})
	}
	return qs
}()

var readTests = []test{
	{"ReadActive answers as GetActive and GetActiveByKey, with any options", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		r := s.activeReader()
		proj := s.project()
		a, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "a", Name: "A", Description: ptr("greets")})
		is.NoErr(err) // create prompt
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: a.ID, Content: "Hello {{name}}", Metadata: `{"model":"m"}`,
			ChangeSummary: ptr("first"), Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)                 // create version
		b := s.prompt(proj.ID, "b/c") // nothing active
		unknown := "01M00000000000000000000000"
		var queries []prompts.ActiveQuery
		for _, id := range []string{a.ID, b.ID, unknown, "not an id"} {
			for _, env := range append(prompts.Environments, "qa") {
				queries = append(queries, prompts.ActiveQuery{PromptID: id, Environment: env})
			}
		}
		for _, project := range []string{proj.ID, unknown} {
			for _, key := range []string{"a", "b/c", "nope", ""} {
				queries = append(queries, prompts.ActiveQuery{ProjectID: project, Key: key, Environment: prompts.Production})
			}
		}
		queries = append(queries, prompts.ActiveQuery{ProjectID: proj.ID, Key: "a", Environment: "qa"})
		for _, q := range queries {
			var want prompts.ActivePrompt
			var wantErr error
			if q.PromptID != "" {
				want, wantErr = s.GetActive(ctx, q.PromptID, q.Environment)
			} else {
				want, wantErr = s.GetActiveByKey(ctx, q.ProjectID, q.Key, q.Environment)
			}
			for _, o := range readOptions {
				o.PromptID, o.ProjectID, o.Key, o.Environment = q.PromptID, q.ProjectID, q.Key, q.Environment
				got, stale, err := r.ReadActive(ctx, o)
				is.Equal(prompts.ErrorCode(err), prompts.ErrorCode(wantErr)) // the error GetActive answers
				is.Equal(got, want)                                          // the answer GetActive gives
				is.True(!stale)                                              // the store is there: nothing stale
			}
		}
	}},
	{"a ReadActive answer is a copy unless Shared", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		r := s.activeReader()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c", ChangeSummary: ptr("sum"), Metadata: `{"a":1}`, Environments: prompts.Environments})
		is.NoErr(err) // create version
		want, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err) // get active
		for _, q := range []prompts.ActiveQuery{
			{PromptID: p.ID, Environment: prompts.Production},
			{ProjectID: proj.ID, Key: "k", Environment: prompts.Production, Fresh: true, FailFast: true},
		} {
			a, _, err := r.ReadActive(ctx, q)
			is.NoErr(err) // read active
			*a.Description = "changed"
			*a.ActiveVersion.ChangeSummary = "changed"
			a.ActiveVersion.Content = "changed"
		}
		got, err := s.GetActive(ctx, p.ID, prompts.Production)
		is.NoErr(err)       // get active
		is.Equal(got, want) // the changes changed nothing stored
		shared, _, err := r.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Shared: true})
		is.NoErr(err)          // a shared read
		is.Equal(shared, want) // answers the same
	}},
	{"a Shared answer stays as it was through later writes", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		r := s.activeReader()
		proj := s.project()
		p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "Name", Description: ptr("desc")})
		is.NoErr(err) // create prompt
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "one", ChangeSummary: ptr("sum"), Environments: prompts.Environments})
		is.NoErr(err) // create version
		byID, _, err := r.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Shared: true})
		is.NoErr(err) // shared read by id
		byKey, _, err := r.ReadActive(ctx, prompts.ActiveQuery{ProjectID: proj.ID, Key: "k", Environment: prompts.Staging, Shared: true})
		is.NoErr(err) // shared read by key
		wantID, wantKey := byID.Copy(), byKey.Copy()

		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("New"), Description: prompts.Some("new desc")})
		is.NoErr(err) // update prompt
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "two", ChangeSummary: ptr("other"), Environments: prompts.Environments})
		is.NoErr(err) // create version
		now, _, err := r.ReadActive(ctx, prompts.ActiveQuery{PromptID: p.ID, Environment: prompts.Production, Shared: true})
		is.NoErr(err)                              // read again
		is.Equal(now.ActiveVersion.Content, "two") // the write is read
		is.Equal(*now.Description, "new desc")     // the new description too
		is.Equal(byID, wantID)                     // what was shared before did not change
		is.Equal(byKey, wantKey)                   // by key neither
	}},
}
