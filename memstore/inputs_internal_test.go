package memstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// A version's typed inputs are in the journal, and in a compaction's
// rewrite of it, so that the promotion guard compares them after a
// reopen; a version without them is written as before, with no inputs
// member.
func TestFileKeepsTypedInputs(t *testing.T) {
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
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}"})
	is.NoErr(err) // 1: plain
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}", TemplateFormat: prompts.FormatDotprompt,
		Metadata: `{"input":{"schema":{"a":"string"}}}`, Environments: []prompts.Environment{prompts.Production}})
	is.NoErr(err) // 2: a string, required
	_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "{{a}}", Metadata: `{"input":{"schema":{"a":"integer"}}}`})
	is.NoErr(err) // 3: a integer
	b, err := os.ReadFile(path)
	is.NoErr(err)
	is.Equal(strings.Count(string(b), `"inputs":`), 2) // versions 2 and 3 only

	refused := func(s *Store) {
		t.Helper()
		_, err := s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(3)})
		is.True(errors.Is(err, prompts.ErrVariablesChanged))
		var e *prompts.Error
		is.True(errors.As(err, &e))
		is.Equal(e.Fields, []prompts.FieldError{{Field: "variables.a", Detail: "changes type from string to integer"}})
	}
	is.NoErr(s.Close())
	s, err = Open(path)
	is.NoErr(err)
	refused(s) // read back from the journal

	s.mu.Lock()
	err = s.compact()
	s.mu.Unlock()
	is.NoErr(err)
	is.NoErr(s.Close())
	b, err = os.ReadFile(path)
	is.NoErr(err)
	is.Equal(strings.Count(string(b), `"inputs":`), 2) // rewritten
	s, err = Open(path)
	is.NoErr(err)
	refused(s) // read back from the compacted journal
}
