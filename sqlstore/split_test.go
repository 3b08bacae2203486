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

// TestSplitEntriesInOrder: the entries are checked in order, so that of
// an entry naming again the version of one before it and a later one
// naming no version, the first is the error.
func TestSplitEntriesInOrder(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, vs := splitPrompt(t, 2)
	_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionID: vs[0].ID, Weight: 1}, {VersionNumber: 1, Weight: 1}, {VersionNumber: 9, Weight: 1}}})
	is.True(errors.Is(err, prompts.ErrInvalid)) // split[1] names split[0]'s version
	var pe *prompts.Error
	is.True(errors.As(err, &pe))
	is.Equal(pe.Fields[0].Field, "split[1].version_number")
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production,
		Split: prompts.Split{{VersionID: vs[0].ID, Weight: 1}, {VersionNumber: 9, Weight: 1}, {VersionNumber: 1, Weight: 1}}})
	is.True(errors.Is(err, prompts.ErrNotFound)) // split[1] first
}

// TestSameSplitUnguarded: setting the split an environment holds changes
// nothing, so it is not guarded: not even when a partial one of its
// versions includes has been deactivated (with Force) since.
func TestSameSplitUnguarded(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, p, _ := splitPrompt(t, 1)
	_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{> footer}} {{name}}", TemplateFormat: prompts.FormatDotprompt})
	is.NoErr(err) // 2, which includes footer
	footer, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: p.ProjectID, Key: "footer", Name: "Footer"})
	is.NoErr(err)
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: footer.ID, Content: "bye", Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err)
	a, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 1, 2, 1)})
	is.NoErr(err)
	_, err = s.Deactivate(ctx, prompts.Deactivation{PromptID: footer.ID, Environment: prompts.Production, Force: true})
	is.NoErr(err) // the partial gone
	again, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 1, 2, 1)})
	is.NoErr(err)                        // the same split: not refused
	is.Equal(again.Revision, a.Revision) // and nothing changed
	_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, Split: split(1, 2, 2, 1)})
	is.True(errors.Is(err, prompts.ErrPartialUnavailable)) // another split is guarded
}
